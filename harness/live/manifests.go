package live

import (
	"bytes"
	"fmt"
	"sort"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/apimachinery/pkg/util/intstr"
	"sigs.k8s.io/yaml"
)

// Images the kind suite runs: EG v1.9.1's default Envoy (without its digest, so a local tag
// can stand in) and Gateway API's echo server, which answers with the request it saw and the
// pod that saw it.
const (
	DefaultEnvoyImage = "docker.io/envoyproxy/envoy:distroless-v1.39.1"
	DefaultEchoImage  = "registry.k8s.io/gateway-api/echo-basic:v1.5.1"
	// Namespace holds everything the suite deploys.
	Namespace = "egharness-e2e"
	// EchoPort is the port echo-basic listens on and its Services expose.
	EchoPort = 3000
	// BackendAnnotation on an echo Deployment and Service names the scenario backend
	// (namespace/name of the Service or Backend) it stands in for.
	BackendAnnotation = "egharness.io/backend"
)

// EchoBackend is one echo Deployment and Service standing in for a scenario's backend.
type EchoBackend struct {
	// Name of the Deployment and Service (echo-<n>); its pods are named <Name>-<hash>-<id>.
	Name string
	// Backend is the scenario's namespace/name it stands in for.
	Backend string
}

// EchoBackends names one echo server per backend, in backend order, so the same set of
// backends always gets the same names.
func EchoBackends(backends []string) []EchoBackend {
	sorted := append([]string(nil), backends...)
	sort.Strings(sorted)
	var out []EchoBackend
	for i, b := range sorted {
		if i > 0 && b == sorted[i-1] {
			continue
		}
		out = append(out, EchoBackend{Name: fmt.Sprintf("echo-%d", len(out)), Backend: b})
	}
	return out
}

// ManifestOptions are what the manifests need.
type ManifestOptions struct {
	EnvoyImage, EchoImage string
	Bootstrap             []byte // BootstrapYAML
	Echo                  []EchoBackend
}

// Manifests are the objects to apply, in order: the namespace, Envoy's bootstrap and
// Deployment, and each echo backend's Deployment and Service. Envoy runs on the node's
// network, so the listeners the harness serves (10080, 10443...) are reachable at the
// node's address without a Service per port.
func Manifests(o ManifestOptions) []runtime.Object {
	labels := func(app string) map[string]string { return map[string]string{"app": app} }
	objs := []runtime.Object{
		&corev1.Namespace{TypeMeta: typeMeta("v1", "Namespace"), ObjectMeta: metav1.ObjectMeta{Name: Namespace}},
		&corev1.ConfigMap{
			TypeMeta:   typeMeta("v1", "ConfigMap"),
			ObjectMeta: metav1.ObjectMeta{Name: "envoy-bootstrap", Namespace: Namespace},
			Data:       map[string]string{"bootstrap.yaml": string(o.Bootstrap)},
		},
		&appsv1.Deployment{
			TypeMeta:   typeMeta("apps/v1", "Deployment"),
			ObjectMeta: metav1.ObjectMeta{Name: "envoy", Namespace: Namespace, Labels: labels("envoy")},
			Spec: appsv1.DeploymentSpec{
				Replicas: ptr(int32(1)),
				Selector: &metav1.LabelSelector{MatchLabels: labels("envoy")},
				// Recreate: two Envoys on the node's network would fight over the ports.
				Strategy: appsv1.DeploymentStrategy{Type: appsv1.RecreateDeploymentStrategyType},
				Template: corev1.PodTemplateSpec{
					ObjectMeta: metav1.ObjectMeta{Labels: labels("envoy")},
					Spec: corev1.PodSpec{
						HostNetwork: true,
						DNSPolicy:   corev1.DNSClusterFirstWithHostNet,
						Containers: []corev1.Container{{
							Name:  "envoy",
							Image: o.EnvoyImage,
							// The image is loaded into the node, never pulled.
							ImagePullPolicy: corev1.PullIfNotPresent,
							// The image's entrypoint is Envoy. Listeners the next scenario drops
							// drain for a second, not ten minutes, so their ports are free.
							Args: []string{"-c", "/etc/envoy/bootstrap.yaml", "--log-level", "info", "--drain-time-s", "1",
								"--drain-strategy", "immediate"},
							VolumeMounts: []corev1.VolumeMount{{Name: "bootstrap", MountPath: "/etc/envoy", ReadOnly: true}},
						}},
						Volumes: []corev1.Volume{{Name: "bootstrap", VolumeSource: corev1.VolumeSource{
							ConfigMap: &corev1.ConfigMapVolumeSource{
								LocalObjectReference: corev1.LocalObjectReference{Name: "envoy-bootstrap"}},
						}}},
					},
				},
			},
		},
	}
	for _, e := range o.Echo {
		ann := map[string]string{BackendAnnotation: e.Backend}
		objs = append(objs,
			&appsv1.Deployment{
				TypeMeta:   typeMeta("apps/v1", "Deployment"),
				ObjectMeta: metav1.ObjectMeta{Name: e.Name, Namespace: Namespace, Labels: labels(e.Name), Annotations: ann},
				Spec: appsv1.DeploymentSpec{
					Replicas: ptr(int32(1)),
					Selector: &metav1.LabelSelector{MatchLabels: labels(e.Name)},
					Template: corev1.PodTemplateSpec{
						ObjectMeta: metav1.ObjectMeta{Labels: labels(e.Name), Annotations: ann},
						Spec: corev1.PodSpec{Containers: []corev1.Container{{
							Name:            "echo",
							Image:           o.EchoImage,
							ImagePullPolicy: corev1.PullIfNotPresent,
							Ports:           []corev1.ContainerPort{{ContainerPort: EchoPort}},
							Env: []corev1.EnvVar{
								{Name: "POD_NAME",
									ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.name"}}},
								{Name: "NAMESPACE",
									ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.namespace"}}},
							},
							ReadinessProbe: &corev1.Probe{ProbeHandler: corev1.ProbeHandler{
								TCPSocket: &corev1.TCPSocketAction{Port: intstr.FromInt32(EchoPort)},
							}},
						}}},
					},
				},
			},
			&corev1.Service{
				TypeMeta:   typeMeta("v1", "Service"),
				ObjectMeta: metav1.ObjectMeta{Name: e.Name, Namespace: Namespace, Annotations: ann},
				Spec: corev1.ServiceSpec{
					Selector: labels(e.Name),
					Ports:    []corev1.ServicePort{{Name: "http", Port: EchoPort, TargetPort: intstr.FromInt32(EchoPort)}},
				},
			})
	}
	return objs
}

func typeMeta(apiVersion, kind string) metav1.TypeMeta {
	return metav1.TypeMeta{APIVersion: apiVersion, Kind: kind}
}

func ptr[T any](v T) *T { return &v }

// EncodeManifests is the objects as multi-document YAML, for kubectl apply -f -.
func EncodeManifests(objs []runtime.Object) ([]byte, error) {
	var buf bytes.Buffer
	for i, o := range objs {
		y, err := yaml.Marshal(o)
		if err != nil {
			return nil, err
		}
		if i > 0 {
			buf.WriteString("---\n")
		}
		buf.Write(y)
	}
	return buf.Bytes(), nil
}

// DecodeManifests reads EncodeManifests's output back into typed objects (strictly: an
// unknown field is an error), which is what the API server will make of it.
func DecodeManifests(data []byte) ([]runtime.Object, error) {
	scheme := runtime.NewScheme()
	if err := corev1.AddToScheme(scheme); err != nil {
		return nil, err
	}
	if err := appsv1.AddToScheme(scheme); err != nil {
		return nil, err
	}
	dec := serializer.NewCodecFactory(scheme, serializer.EnableStrict).UniversalDeserializer()
	var out []runtime.Object
	for i, doc := range bytes.Split(data, []byte("\n---\n")) {
		obj, _, err := dec.Decode(doc, nil, nil)
		if err != nil {
			return nil, fmt.Errorf("manifest document %d: %w", i+1, err)
		}
		out = append(out, obj)
	}
	return out, nil
}
