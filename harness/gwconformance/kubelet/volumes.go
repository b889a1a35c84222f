package kubelet

import (
	"encoding/base64"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/egharness/egharness/harness/gwconformance/kubeapi"
)

// podDir makes the Pod's directory (where its process runs) and writes its volumes under
// it; mounts are each volume's mount path → its directory.
func (k *Kubelet) podDir(pod *corev1.Pod) (dir string, mounts map[string]string, err error) {
	dir = filepath.Join(k.opts.Dir, pod.Namespace, pod.Name)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", nil, err
	}
	mounts, err = k.volumeFiles(pod, dir)
	return dir, mounts, err
}

// volumeFiles writes a Pod's Secret and ConfigMap volumes under dir and returns each
// volume's mount path → its directory.
func (k *Kubelet) volumeFiles(pod *corev1.Pod, dir string) (map[string]string, error) {
	mounts := map[string]string{}
	for _, v := range pod.Spec.Volumes {
		vdir := filepath.Join(dir, v.Name)
		var data map[string][]byte
		var items []corev1.KeyToPath
		var err error
		switch {
		case v.Secret != nil:
			data, err = k.volumeSource(pod, v.Name, "Secret", v.Secret.SecretName, base64.StdEncoding.DecodeString)
			items = v.Secret.Items
		case v.ConfigMap != nil:
			data, err = k.volumeSource(pod, v.Name, "ConfigMap", v.ConfigMap.Name, func(s string) ([]byte, error) {
				return []byte(s), nil
			})
			items = v.ConfigMap.Items
		default:
			continue
		}
		if err != nil {
			return nil, err
		}
		if err := os.MkdirAll(vdir, 0o755); err != nil {
			return nil, err
		}
		paths := map[string]string{}
		for key := range data {
			paths[key] = key
		}
		if len(items) > 0 {
			paths = map[string]string{}
			for _, it := range items {
				paths[it.Key] = it.Path
			}
		}
		for key, path := range paths {
			if err := os.WriteFile(filepath.Join(vdir, path), data[key], 0o600); err != nil {
				return nil, err
			}
		}
		for _, c := range pod.Spec.Containers {
			for _, m := range c.VolumeMounts {
				if m.Name == v.Name {
					mounts[strings.TrimSuffix(m.MountPath, "/")] = vdir
				}
			}
		}
	}
	return mounts, nil
}

// volumeSource reads the data of the Secret or ConfigMap (kind) name that the Pod's volume
// is made of, each value through decode (base64 for a Secret's).
func (k *Kubelet) volumeSource(pod *corev1.Pod, volume, kind, name string,
	decode func(string) ([]byte, error)) (map[string][]byte, error) {
	key := kubeapi.Key{GroupKind: schema.GroupKind{Kind: kind}, Namespace: pod.Namespace, Name: name}
	u, err := k.store.Get(key, "v1")
	if err != nil {
		return nil, fmt.Errorf("volume %s: %s %s: %w", volume, kind, name, err)
	}
	raw, _, _ := unstructured.NestedStringMap(u.Object, "data")
	data := map[string][]byte{}
	for dataKey, value := range raw {
		b, err := decode(value)
		if err != nil {
			return nil, fmt.Errorf("volume %s: %s %s key %s: %w", volume, kind, name, dataKey, err)
		}
		data[dataKey] = b
	}
	return data, nil
}
