package live_test

import (
	"bytes"
	"testing"

	bootstrapv3 "github.com/envoyproxy/go-control-plane/envoy/config/bootstrap/v3"
	"google.golang.org/protobuf/encoding/protojson"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"

	"github.com/egharness/egharness/harness/live"
)

func TestManifests(t *testing.T) {
	b, err := live.Bootstrap(live.BootstrapOptions{XDSAddress: "172.18.0.1:18000", NodeID: "envoy-e2e", AdminPort: 19000})
	if err != nil {
		t.Fatal(err)
	}
	boot, err := live.BootstrapYAML(b)
	if err != nil {
		t.Fatal(err)
	}
	echo := live.EchoBackends([]string{"default/web", "default/api", "default/web", "shop/cart"})
	if len(echo) != 3 || echo[0] != (live.EchoBackend{Name: "echo-0", Backend: "default/api"}) ||
		echo[2].Backend != "shop/cart" {
		t.Fatalf("echo backends %+v", echo)
	}
	data, err := live.EncodeManifests(live.Manifests(live.ManifestOptions{
		EnvoyImage: live.DefaultEnvoyImage, EchoImage: live.DefaultEchoImage, Bootstrap: boot, Echo: echo}))
	if err != nil {
		t.Fatal(err)
	}
	objs, err := live.DecodeManifests(data)
	if err != nil {
		t.Fatalf("%v\n%s", err, data)
	}
	var deployments, services int
	var sawEnvoy, sawConfig bool
	for _, o := range objs {
		switch o := o.(type) {
		case *corev1.Namespace:
			if o.Name != live.Namespace {
				t.Errorf("namespace %s", o.Name)
			}
		case *corev1.ConfigMap:
			sawConfig = true
			js, err := yaml.YAMLToJSON([]byte(o.Data["bootstrap.yaml"]))
			if err != nil {
				t.Fatal(err)
			}
			back := &bootstrapv3.Bootstrap{}
			if err := protojson.Unmarshal(js, back); err != nil || back.ValidateAll() != nil ||
				back.GetNode().GetId() != "envoy-e2e" {
				t.Errorf("the ConfigMap's bootstrap: %v", err)
			}
		case *appsv1.Deployment:
			deployments++
			if o.Namespace != live.Namespace || o.Spec.Selector.MatchLabels["app"] != o.Spec.Template.Labels["app"] {
				t.Errorf("deployment %s: namespace %s, selector %v, labels %v", o.Name, o.Namespace, o.Spec.Selector.MatchLabels,
					o.Spec.Template.Labels)
			}
			c := o.Spec.Template.Spec.Containers[0]
			if o.Name == "envoy" {
				sawEnvoy = true
				if !o.Spec.Template.Spec.HostNetwork || c.Image != live.DefaultEnvoyImage ||
					c.VolumeMounts[0].MountPath != "/etc/envoy" ||
					o.Spec.Strategy.Type != appsv1.RecreateDeploymentStrategyType {
					t.Errorf("envoy deployment %+v", o.Spec)
				}
			} else if c.Image != live.DefaultEchoImage || c.Ports[0].ContainerPort != live.EchoPort ||
				o.Annotations[live.BackendAnnotation] == "" {
				t.Errorf("echo deployment %s: %+v", o.Name, c)
			}
		case *corev1.Service:
			services++
			if o.Spec.Selector["app"] != o.Name || o.Spec.Ports[0].TargetPort.IntValue() != live.EchoPort {
				t.Errorf("service %s: %+v", o.Name, o.Spec)
			}
		default:
			t.Errorf("unexpected object %T", o)
		}
	}
	if deployments != 4 || services != 3 || !sawEnvoy || !sawConfig {
		t.Errorf("%d deployments, %d services, envoy %v, config %v", deployments, services, sawEnvoy, sawConfig)
	}
	// Decoding is strict: a typo in a field is an error, as the API server would say.
	if _, err := live.DecodeManifests(bytes.Replace(data, []byte("hostNetwork"), []byte("hostNetwrok"), 1)); err == nil {
		t.Error("a misspelt field decoded")
	}
}
