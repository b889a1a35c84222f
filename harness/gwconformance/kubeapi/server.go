package kubeapi

import (
	"encoding/json"
	"fmt"
	"strings"

	egv1a1 "github.com/envoyproxy/gateway/api/v1alpha1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"
	gwapiv1 "sigs.k8s.io/gateway-api/apis/v1"
	gwapiv1a2 "sigs.k8s.io/gateway-api/apis/v1alpha2"
	gwapiv1a3 "sigs.k8s.io/gateway-api/apis/v1alpha3"
	gwapiv1b1 "sigs.k8s.io/gateway-api/apis/v1beta1"
	gwapixv1a1 "sigs.k8s.io/gateway-api/apisx/v1alpha1"

	"github.com/egharness/egharness/translator/crds"
)

// Server is a Store with the real CRDs installed and a Facade over it.
type Server struct {
	*Store
	Facade *Facade
	Scheme *runtime.Scheme
	Mapper meta.RESTMapper
}

// clusterScopedBuiltins are the built-in kinds without a namespace that a conformance run
// can meet.
var clusterScopedBuiltins = map[string]bool{
	"Namespace": true, "Node": true, "PersistentVolume": true, "ClusterRole": true,
	"ClusterRoleBinding": true, "StorageClass": true, "PriorityClass": true,
	"CustomResourceDefinition": true, "APIService": true, "IngressClass": true,
	"ValidatingAdmissionPolicy": true, "ValidatingAdmissionPolicyBinding": true,
	"ValidatingWebhookConfiguration": true, "MutatingWebhookConfiguration": true,
	"CertificateSigningRequest": true, "RuntimeClass": true, "VolumeAttachment": true,
	"CSIDriver": true, "CSINode": true,
}

// statusBuiltins are the built-in kinds whose status is a subresource.
var statusBuiltins = []schema.GroupKind{
	{Kind: "Pod"}, {Kind: "Service"}, {Kind: "Namespace"}, {Kind: "Node"},
	{Kind: "PersistentVolumeClaim"}, {Kind: "ReplicationController"},
	{Group: "apps", Kind: "Deployment"}, {Group: "apps", Kind: "ReplicaSet"},
	{Group: "apps", Kind: "StatefulSet"}, {Group: "apps", Kind: "DaemonSet"},
	{Group: "batch", Kind: "Job"},
}

// NewScheme knows the built-in types, CRDs, Gateway API (every version) and EG's API.
func NewScheme() (*runtime.Scheme, error) {
	s := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{
		clientgoscheme.AddToScheme, apiextensionsv1.AddToScheme,
		gwapiv1.Install, gwapiv1b1.Install, gwapiv1a2.Install, gwapiv1a3.Install, gwapixv1a1.Install,
		egv1a1.AddToScheme,
	} {
		if err := add(s); err != nil {
			return nil, err
		}
	}
	return s, nil
}

// NewServer installs the CRDs of set (the Gateway API CRDs EG's release bundles among them)
// into a new store: they are listed as CustomResourceDefinitions, their objects validated
// and defaulted on every write.
func NewServer(set *crds.Set) (*Server, error) {
	sch, err := NewScheme()
	if err != nil {
		return nil, err
	}
	mapper := meta.NewDefaultRESTMapper(nil)
	var statusKinds []schema.GroupKind
	statusKinds = append(statusKinds, statusBuiltins...)
	var defs []*apiextensionsv1.CustomResourceDefinition
	crdKinds := map[schema.GroupKind]bool{}
	for _, gk := range set.Kinds() {
		crd, err := set.CRD(gk)
		if err != nil {
			return nil, fmt.Errorf("CRD %s: %w", gk, err)
		}
		defs = append(defs, crd)
		crdKinds[gk] = true
		scope := meta.RESTScopeNamespace
		if crd.Spec.Scope == apiextensionsv1.ClusterScoped {
			scope = meta.RESTScopeRoot
		}
		hasStatus := false
		for _, v := range crd.Spec.Versions {
			if !v.Served {
				continue
			}
			gvk := schema.GroupVersionKind{Group: gk.Group, Version: v.Name, Kind: gk.Kind}
			mapper.AddSpecific(gvk,
				schema.GroupVersionResource{Group: gk.Group, Version: v.Name, Resource: crd.Spec.Names.Plural},
				schema.GroupVersionResource{Group: gk.Group, Version: v.Name, Resource: crd.Spec.Names.Singular}, scope)
			if v.Subresources != nil && v.Subresources.Status != nil {
				hasStatus = true
			}
		}
		if hasStatus {
			statusKinds = append(statusKinds, gk)
		}
	}
	for gvk := range sch.AllKnownTypes() {
		if crdKinds[gvk.GroupKind()] || strings.HasSuffix(gvk.Kind, "List") || gvk.Version == runtime.APIVersionInternal ||
			strings.HasSuffix(gvk.Kind, "Options") || gvk.Kind == "WatchEvent" || gvk.Kind == "Status" {
			continue
		}
		scope := meta.RESTScopeNamespace
		if clusterScopedBuiltins[gvk.Kind] {
			scope = meta.RESTScopeRoot
		}
		mapper.Add(gvk, scope)
	}
	srv := &Server{Store: NewStore(crdAdmitter{set}, statusKinds), Scheme: sch, Mapper: mapper}
	srv.Facade = &Facade{Store: srv.Store, Mapper: mapper, Scheme: sch}
	for _, crd := range defs {
		u, err := toUnstructured(crd)
		if err != nil {
			return nil, err
		}
		u.SetAPIVersion("apiextensions.k8s.io/v1")
		u.SetKind("CustomResourceDefinition")
		if _, err := srv.Create(u); err != nil {
			return nil, fmt.Errorf("installing CRD %s: %w", crd.Name, err)
		}
	}
	return srv, nil
}

// ClientOptions are what controller-runtime clients of this server need (no discovery).
func (s *Server) ClientOptions() client.Options {
	return client.Options{Scheme: s.Scheme, Mapper: s.Mapper}
}

// Client is a controller-runtime client of the facade.
func (s *Server) Client() (client.Client, error) {
	return client.New(s.Facade.RestConfig(), s.ClientOptions())
}

func toUnstructured(obj any) (*unstructured.Unstructured, error) {
	b, err := json.Marshal(obj)
	if err != nil {
		return nil, err
	}
	u := &unstructured.Unstructured{}
	return u, u.UnmarshalJSON(b)
}

// crdAdmitter is the API server's CRD handling by translator/crds (kubectl-validate's
// machinery over the real CRDs): validation, CEL rules, pruning and defaults.
type crdAdmitter struct{ set *crds.Set }

func (a crdAdmitter) Governs(group string) bool { return a.set.Governs(group) }

func (a crdAdmitter) Admit(obj map[string]any) (map[string]any, string, error) {
	b, err := json.Marshal(obj)
	if err != nil {
		return nil, "", err
	}
	v, err := a.set.Admit(b)
	if err != nil {
		return nil, "", err
	}
	if !v.Allowed {
		return nil, v.Message, nil
	}
	return v.Object, "", nil
}
