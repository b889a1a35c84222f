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
		switch {
		case v.Secret != nil:
			raw, err := k.volumeSource(pod, v.Name, "Secret", v.Secret.SecretName)
			if err != nil {
				return nil, err
			}
			data = map[string][]byte{}
			for key, b64 := range raw {
				b, err := base64.StdEncoding.DecodeString(b64)
				if err != nil {
					return nil, fmt.Errorf("volume %s: Secret %s key %s: %w", v.Name, v.Secret.SecretName, key, err)
				}
				data[key] = b
			}
			items = v.Secret.Items
		case v.ConfigMap != nil:
			raw, err := k.volumeSource(pod, v.Name, "ConfigMap", v.ConfigMap.Name)
			if err != nil {
				return nil, err
			}
			data = map[string][]byte{}
			for key, s := range raw {
				data[key] = []byte(s)
			}
			items = v.ConfigMap.Items
		default:
			continue
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
// is made of.
func (k *Kubelet) volumeSource(pod *corev1.Pod, volume, kind, name string) (map[string]string, error) {
	key := kubeapi.Key{GroupKind: schema.GroupKind{Kind: kind}, Namespace: pod.Namespace, Name: name}
	u, err := k.store.Get(key, "v1")
	if err != nil {
		return nil, fmt.Errorf("volume %s: %s %s: %w", volume, kind, name, err)
	}
	data, _, _ := unstructured.NestedStringMap(u.Object, "data")
	return data, nil
}
