package corpus

import (
	"crypto/sha256"
	"fmt"
	"strings"

	egv1a1 "github.com/envoyproxy/gateway/api/v1alpha1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	gwapiv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/egharness/egharness/translator/resource"
)

// The objects EG's TestTranslate adds to every input (facts of that test; the values are
// ours to write): the GatewayClass its translator is told to serve, Services service-1 to
// service-4 with one endpoint each, mirror-service, the OpenTelemetry collector, one proxy
// Service per Gateway (one per class when Gateways merge), the Namespaces default and
// envoy-gateway, and the Secrets of the testdata's base.yaml.
const (
	// ClassName is the GatewayClass every case's Gateways name.
	ClassName           = "envoy-gateway-class"
	controllerName      = "gateway.envoyproxy.io/gatewayclass-controller"
	controllerNamespace = "envoy-gateway-system"
)

type port struct {
	name        string
	port        int32
	protocol    corev1.Protocol
	appProtocol string
}

var (
	testServicePorts = []port{{"http", 8080, corev1.ProtocolTCP, ""}, {"https", 8443, corev1.ProtocolTCP, ""},
		{"tcp", 8163, corev1.ProtocolTCP, ""}, {"udp", 8162, corev1.ProtocolUDP, ""}}
	otelPorts = []port{{"grpc", 4317, corev1.ProtocolTCP, "grpc"}, {"zipkin", 9411, corev1.ProtocolTCP, ""}}
	httpOnly  = []port{{"http", 8080, corev1.ProtocolTCP, ""}}
)

// fixtures returns the objects the test adds to a case. zones: the case name asks for
// zone-aware routing (the test then gives each endpoint a zone and each Service
// PreferClose traffic distribution).
func fixtures(name string, in Input, merged bool, base []resource.Object) []resource.Object {
	var out []resource.Object
	if !in.HasClass {
		gc := &gwapiv1.GatewayClass{
			TypeMeta:   metav1.TypeMeta{APIVersion: "gateway.networking.k8s.io/v1", Kind: "GatewayClass"},
			ObjectMeta: metav1.ObjectMeta{Name: ClassName},
			Spec:       gwapiv1.GatewayClassSpec{ControllerName: controllerName},
		}
		out = append(out, fixture(gc, "GatewayClass"))
	}
	zones := strings.Contains(name, "enable-zone-discovery")
	for i := 1; i <= 4; i++ {
		svc := service("default", fmt.Sprintf("service-%d", i), "1.1.1.1", testServicePorts)
		zone := ""
		if zones {
			pc := "PreferClose"
			svc.Spec.TrafficDistribution = &pc
			zone = fmt.Sprintf("antarctica-east1%c", rune('a'+i))
		}
		out = append(out, fixture(svc, "Service"),
			fixture(endpointSlice("default", fmt.Sprintf("endpointslice-%d", i), svc.Name, "7.7.7.7", zone, testServicePorts),
				"EndpointSlice"))
	}
	out = append(out,
		fixture(service("default", "mirror-service", "2.2.2.2", httpOnly), "Service"),
		fixture(endpointSlice("default", "mirror-service-endpointslice", "mirror-service", "7.6.5.4", "", httpOnly),
			"EndpointSlice"),
		fixture(service("monitoring", "otel-collector", "3.3.3.3", otelPorts), "Service"),
		fixture(endpointSlice("monitoring", "otel-collector-endpointslice", "otel-collector", "8.7.6.5", "", otelPorts),
			"EndpointSlice"))
	// The proxies' own Services, named as EG names them.
	proxy := func(name string, labels map[string]string) {
		svc := service(controllerNamespace, name, "6.7.8.9", httpOnly)
		svc.Labels = labels
		es := endpointSlice(controllerNamespace, name, name, "7.6.5.4", "zone1", httpOnly)
		for k, v := range labels {
			es.Labels[k] = v
		}
		out = append(out, fixture(svc, "Service"), fixture(es, "EndpointSlice"))
	}
	if merged {
		proxy("envoy-"+hashedName(ClassName, 48), map[string]string{"gateway.envoyproxy.io/owning-gatewayclass": ClassName})
	} else {
		for _, o := range in.Objects {
			if o.Kind != "Gateway" {
				continue
			}
			ns, n := o.Obj.GetNamespace(), o.Obj.GetName()
			proxy("envoy-"+hashedName(ns+"/"+n, 48), map[string]string{
				"gateway.envoyproxy.io/owning-gateway-name":      n,
				"gateway.envoyproxy.io/owning-gateway-namespace": ns,
			})
		}
	}
	for _, ns := range []string{"envoy-gateway", "default"} {
		out = append(out,
			fixture(&corev1.Namespace{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Namespace"},
				ObjectMeta: metav1.ObjectMeta{Name: ns}}, "Namespace"))
	}
	return append(out, base...)
}

// withClassProxy points the GatewayClass at the case's envoyProxyForGatewayClass: EG's test
// hands that EnvoyProxy to the translator as the class's, whatever the class says.
func withClassProxy(objs []resource.Object, ep *egv1a1.EnvoyProxy) {
	if ep == nil {
		return
	}
	for _, o := range objs {
		if gc, ok := o.Obj.(*gwapiv1.GatewayClass); ok && gc.Name == ClassName {
			ns := gwapiv1.Namespace(ep.Namespace)
			gc.Spec.ParametersRef = &gwapiv1.ParametersReference{Group: egv1a1.GroupName, Kind: egv1a1.KindEnvoyProxy,
				Name: ep.Name, Namespace: &ns}
		}
	}
}

func fixture(obj resource.KObject, kind string) resource.Object {
	return resource.Object{Obj: obj, APIVersion: obj.GetObjectKind().GroupVersionKind().GroupVersion().String(),
		Kind: kind, File: "(fixture of EG's TestTranslate)"}
}

func service(ns, name, clusterIP string, ports []port) *corev1.Service {
	svc := &corev1.Service{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Service"},
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec:       corev1.ServiceSpec{ClusterIP: clusterIP},
	}
	for _, p := range ports {
		sp := corev1.ServicePort{Name: p.name, Port: p.port, TargetPort: intstr.FromInt32(p.port), Protocol: p.protocol}
		if p.appProtocol != "" {
			ap := p.appProtocol
			sp.AppProtocol = &ap
		}
		svc.Spec.Ports = append(svc.Spec.Ports, sp)
	}
	return svc
}

func endpointSlice(ns, name, service, address, zone string, ports []port) *discoveryv1.EndpointSlice {
	ready := true
	es := &discoveryv1.EndpointSlice{
		TypeMeta: metav1.TypeMeta{APIVersion: "discovery.k8s.io/v1", Kind: "EndpointSlice"},
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name,
			Labels: map[string]string{discoveryv1.LabelServiceName: service}},
		AddressType: discoveryv1.AddressTypeIPv4,
		Endpoints: []discoveryv1.Endpoint{{Addresses: []string{address},
			Conditions: discoveryv1.EndpointConditions{Ready: &ready}}},
	}
	if zone != "" {
		z := zone
		es.Endpoints[0].Zone = &z
	}
	for _, p := range ports {
		n, pt, pr := p.name, p.port, p.protocol
		es.Ports = append(es.Ports, discoveryv1.EndpointPort{Name: &n, Port: &pt, Protocol: &pr})
	}
	return es
}

// hashedName is EG's name for a proxy's resources: the name with '/' as '-', cut to length
// (without a trailing '-'), then '-' and the first 8 hex digits of its SHA-256.
func hashedName(nsName string, length int) string {
	sum := fmt.Sprintf("%x", sha256.Sum256([]byte(nsName)))
	name := strings.ReplaceAll(nsName, "/", "-")
	if length > 0 && len(name) > length {
		name = strings.TrimSuffix(name[:length], "-")
	}
	return name + "-" + sum[:8]
}
