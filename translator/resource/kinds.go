package resource

import (
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"

	egv1a1 "github.com/envoyproxy/gateway/api/v1alpha1"
	certificatesv1beta1 "k8s.io/api/certificates/v1beta1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	gwapiv1 "sigs.k8s.io/gateway-api/apis/v1"
	gwapiv1a2 "sigs.k8s.io/gateway-api/apis/v1alpha2"
	gwapiv1a3 "sigs.k8s.io/gateway-api/apis/v1alpha3"
	gwapiv1b1 "sigs.k8s.io/gateway-api/apis/v1beta1"

	mcsv1a1 "sigs.k8s.io/mcs-api/pkg/apis/v1alpha1"

	"github.com/egharness/egharness/translator/apis/backendlb"
)

// The kinds the decoder knows: the core and Gateway API kinds of the scheme, EG's own (by
// CRD group), ServiceImport, and which of them are cluster-scoped.

// coreKinds are the core/discovery kinds the translator reads; other core kinds (Pods,
// Deployments...) are not part of a scenario and count as unknown.
var coreKinds = map[schema.GroupVersionKind]bool{
	corev1.SchemeGroupVersion.WithKind("Service"):            true,
	corev1.SchemeGroupVersion.WithKind("Secret"):             true,
	corev1.SchemeGroupVersion.WithKind("ConfigMap"):          true,
	corev1.SchemeGroupVersion.WithKind("Namespace"):          true,
	discoveryv1.SchemeGroupVersion.WithKind("EndpointSlice"): true,
	// ClusterTrustBundles hold CA bundles a BackendTLSPolicy may trust.
	certificatesv1beta1.SchemeGroupVersion.WithKind("ClusterTrustBundle"): true,
}

var clusterScoped = map[string]bool{"GatewayClass": true, "Namespace": true, "ClusterTrustBundle": true,
	"EnvoyGateway": true}

// ClusterScoped reports whether objects of kind have no namespace.
func ClusterScoped(kind string) bool { return clusterScoped[kind] }

// scheme is immutable after construction; it is the registry of known kinds.
var scheme = sync.OnceValue(func() *runtime.Scheme {
	s := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{
		gwapiv1.Install, gwapiv1a2.Install, gwapiv1a3.Install, gwapiv1b1.Install,
		egv1a1.AddToScheme, corev1.AddToScheme, discoveryv1.AddToScheme, certificatesv1beta1.AddToScheme,
		backendlb.AddToScheme, addServiceImport,
	} {
		if err := add(s); err != nil {
			panic(fmt.Sprintf("building the type registry: %v", err)) // programming error, not input
		}
	}
	return s
})

// addServiceImport registers the one kind of the Multi-Cluster Services API the translator
// reads: ServiceImport, a route's or policy's backend like a Service (EG v1.9 resolves it
// with the EndpointSlices labelled multicluster.kubernetes.io/service-name). ServiceExport
// and the rest of the group stay unknown.
func addServiceImport(s *runtime.Scheme) error {
	s.AddKnownTypes(mcsv1a1.SchemeGroupVersion, &mcsv1a1.ServiceImport{}, &mcsv1a1.ServiceImportList{})
	metav1.AddToGroupVersion(s, mcsv1a1.SchemeGroupVersion)
	return nil
}

// KnownKind reports whether apiVersion/kind decodes into a type the translator reads.
func KnownKind(apiVersion, kind string) bool {
	gv, err := schema.ParseGroupVersion(apiVersion)
	if err != nil {
		return false
	}
	gvk := gv.WithKind(kind)
	if gvk.Group == "" || gvk.Group == discoveryv1.GroupName || gvk.Group == certificatesv1beta1.GroupName {
		return coreKinds[gvk]
	}
	if strings.HasSuffix(kind, "List") || !scheme().Recognizes(gvk) {
		return false
	}
	// Each group also registers option types (CreateOptions...) that are not objects.
	o, err := scheme().New(gvk)
	if err != nil {
		return false
	}
	_, ok := o.(KObject)
	return ok
}

// crdGroups are the API groups whose kinds are CustomResourceDefinitions of EG or of the
// Gateway API (standard and experimental).
var crdGroups = map[string]bool{
	gwapiv1.GroupName:             true,
	egv1a1.GroupName:              true,
	"gateway.networking.x-k8s.io": true,
}

// CRDGroup reports whether an API group's kinds are defined by the CRDs admission reads.
func CRDGroup(group string) bool { return crdGroups[group] }

func gvGroup(apiVersion string) string {
	if i := strings.IndexByte(apiVersion, '/'); i > 0 {
		return apiVersion[:i]
	}
	return ""
}

// NewTyped returns an empty object of the Go type of apiVersion/kind.
func NewTyped(apiVersion, kind string) (KObject, error) {
	if !KnownKind(apiVersion, kind) {
		return nil, fmt.Errorf("no Go type for %s %s", apiVersion, kind)
	}
	gv, _ := schema.ParseGroupVersion(apiVersion)
	ro, err := scheme().New(gv.WithKind(kind))
	if err != nil {
		return nil, err
	}
	ko, ok := ro.(KObject)
	if !ok {
		return nil, fmt.Errorf("%s %s is not an object with metadata", apiVersion, kind)
	}
	return ko, nil
}

// KnownKinds lists the kinds Decode accepts, sorted.
func KnownKinds() []string { return slices.Clone(knownKinds()) }

var knownKinds = sync.OnceValue(func() []string {
	set := map[string]bool{}
	for gvk := range scheme().AllKnownTypes() {
		if KnownKind(gvk.GroupVersion().String(), gvk.Kind) {
			set[gvk.Kind] = true
		}
	}
	out := make([]string, 0, len(set))
	for k := range set {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
})
