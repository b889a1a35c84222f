package corpus

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"

	egv1a1 "github.com/envoyproxy/gateway/api/v1alpha1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/yaml"

	"github.com/egharness/egharness/translator/crds"

	"github.com/egharness/egharness/translator/resource"
)

// inputFile mirrors the top-level keys of an EG testdata input as EG's test decodes it: a
// strict decode (an unknown key is an error) by encoding/json rules, so a key matches a
// field's name case-insensitively ("envoyextensionpolicies" fills envoyExtensionPolicies,
// as 17 of EG's inputs rely on). The items stay raw: each becomes one of our objects.
//
// The kind and apiVersion of an item come from its key, not from the item: EG decodes each
// list into one Go type (a BackendTLSPolicy written as v1alpha2 is read as a v1 one), so the
// object means what that type means. The API server is then asked about that version.
type inputFile struct {
	EnvoyProxyForGatewayClass json.RawMessage   `json:"envoyProxyForGatewayClass,omitempty" corpus:"EnvoyProxy"`
	EnvoyProxiesForGateways   []json.RawMessage `json:"envoyProxiesForGateways,omitempty" corpus:"EnvoyProxy"`
	// EnvoyProxyDefaultSpec is the EnvoyGateway configuration's default proxy spec: not an
	// object, and nothing our translator can be given (see Settings).
	EnvoyProxyDefaultSpec   *egv1a1.EnvoyProxySpec `json:"envoyProxyDefaultSpec,omitempty"`
	GatewayClass            json.RawMessage        `json:"gatewayClass,omitempty" corpus:"GatewayClass"`
	Gateways                []json.RawMessage      `json:"gateways,omitempty" corpus:"Gateway"`
	ListenerSets            []json.RawMessage      `json:"listenerSets,omitempty" corpus:"ListenerSet"`
	HTTPRoutes              []json.RawMessage      `json:"httpRoutes,omitempty" corpus:"HTTPRoute"`
	GRPCRoutes              []json.RawMessage      `json:"grpcRoutes,omitempty" corpus:"GRPCRoute"`
	TLSRoutes               []json.RawMessage      `json:"tlsRoutes,omitempty" corpus:"TLSRoute"`
	TCPRoutes               []json.RawMessage      `json:"tcpRoutes,omitempty" corpus:"TCPRoute"`
	UDPRoutes               []json.RawMessage      `json:"udpRoutes,omitempty" corpus:"UDPRoute"`
	ReferenceGrants         []json.RawMessage      `json:"referenceGrants,omitempty" corpus:"ReferenceGrant"`
	Namespaces              []json.RawMessage      `json:"namespaces,omitempty" corpus:"Namespace"`
	Services                []json.RawMessage      `json:"services,omitempty" corpus:"Service"`
	ServiceImports          []json.RawMessage      `json:"serviceImports,omitempty" corpus:"ServiceImport"`
	EndpointSlices          []json.RawMessage      `json:"endpointSlices,omitempty" corpus:"EndpointSlice"`
	Secrets                 []json.RawMessage      `json:"secrets,omitempty" corpus:"Secret"`
	ConfigMaps              []json.RawMessage      `json:"configMaps,omitempty" corpus:"ConfigMap"`
	ExtensionRefFilters     []json.RawMessage      `json:"extensionRefFilters,omitempty" corpus:"-"`
	EnvoyPatchPolicies      []json.RawMessage      `json:"envoyPatchPolicies,omitempty" corpus:"EnvoyPatchPolicy"`
	ClientTrafficPolicies   []json.RawMessage      `json:"clientTrafficPolicies,omitempty" corpus:"ClientTrafficPolicy"`
	BackendTrafficPolicies  []json.RawMessage      `json:"backendTrafficPolicies,omitempty" corpus:"BackendTrafficPolicy"`
	SecurityPolicies        []json.RawMessage      `json:"securityPolicies,omitempty" corpus:"SecurityPolicy"`
	BackendTLSPolicies      []json.RawMessage      `json:"backendTLSPolicies,omitempty" corpus:"BackendTLSPolicy"`
	EnvoyExtensionPolicies  []json.RawMessage      `json:"envoyExtensionPolicies,omitempty" corpus:"EnvoyExtensionPolicy"`
	ExtensionServerPolicies []json.RawMessage      `json:"extensionServerPolicies,omitempty" corpus:"-"`
	Backends                []json.RawMessage      `json:"backends,omitempty" corpus:"Backend"`
	HTTPRouteFilters        []json.RawMessage      `json:"httpFilters,omitempty" corpus:"HTTPRouteFilter"`
	ClusterTrustBundles     []json.RawMessage      `json:"clusterTrustBundles,omitempty" corpus:"ClusterTrustBundle"`
}

// inputAPIVersions gives the apiVersion each kind named in an inputFile corpus tag is
// decoded as: the version of the Go type EG decodes that key's list into (a tag holding
// both would make the struct too wide to read).
var inputAPIVersions = map[string]string{
	"EnvoyProxy":           "gateway.envoyproxy.io/v1alpha1",
	"GatewayClass":         "gateway.networking.k8s.io/v1",
	"Gateway":              "gateway.networking.k8s.io/v1",
	"ListenerSet":          "gateway.networking.k8s.io/v1",
	"HTTPRoute":            "gateway.networking.k8s.io/v1",
	"GRPCRoute":            "gateway.networking.k8s.io/v1",
	"TLSRoute":             "gateway.networking.k8s.io/v1",
	"TCPRoute":             "gateway.networking.k8s.io/v1",
	"UDPRoute":             "gateway.networking.k8s.io/v1",
	"ReferenceGrant":       "gateway.networking.k8s.io/v1beta1",
	"Namespace":            "v1",
	"Service":              "v1",
	"ServiceImport":        "multicluster.x-k8s.io/v1alpha1",
	"EndpointSlice":        "discovery.k8s.io/v1",
	"Secret":               "v1",
	"ConfigMap":            "v1",
	"EnvoyPatchPolicy":     "gateway.envoyproxy.io/v1alpha1",
	"ClientTrafficPolicy":  "gateway.envoyproxy.io/v1alpha1",
	"BackendTrafficPolicy": "gateway.envoyproxy.io/v1alpha1",
	"SecurityPolicy":       "gateway.envoyproxy.io/v1alpha1",
	"BackendTLSPolicy":     "gateway.networking.k8s.io/v1",
	"EnvoyExtensionPolicy": "gateway.envoyproxy.io/v1alpha1",
	"Backend":              "gateway.envoyproxy.io/v1alpha1",
	"HTTPRouteFilter":      "gateway.envoyproxy.io/v1alpha1",
	"ClusterTrustBundle":   "certificates.k8s.io/v1beta1",
}

// Input is one case's objects as EG's test hands them to its translator, before fixtures.
type Input struct {
	// Objects in the order EG's translator sees them: by key in the order of EG's
	// resource lists, each list in file order.
	Objects []resource.Object
	// ClassProxy is the EnvoyProxy the case gives the GatewayClass (envoyProxyForGatewayClass).
	ClassProxy *egv1a1.EnvoyProxy
	// HasClass says the case writes its own GatewayClass.
	HasClass bool
	// DefaultSpec is envoyProxyDefaultSpec, when set.
	DefaultSpec *egv1a1.EnvoyProxySpec
	// Unread lists keys with items that nothing of ours reads (extensionRefFilters,
	// extensionServerPolicies: objects of extension servers' own kinds).
	Unread []string
	// Notes are documents the decoder skipped (kinds the translator does not read).
	Notes []string
	// Refusals are items the API server would refuse as it decodes them.
	Refusals []string
}

// DecodeInput reads a case's *.in.yaml. Any problem is an error naming the file and, where
// it lies in an item, the key and index.
func DecodeInput(file string, data []byte) (Input, error) {
	var in inputFile
	if err := yaml.UnmarshalStrict(data, &in); err != nil {
		return Input{}, fmt.Errorf("%s: %v", file, err)
	}
	var out Input
	out.DefaultSpec = in.EnvoyProxyDefaultSpec
	v := reflect.ValueOf(in)
	t := v.Type()
	var errs []string
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		tag := f.Tag.Get("corpus")
		if tag == "" {
			continue
		}
		key := strings.Split(f.Tag.Get("json"), ",")[0]
		var items []json.RawMessage
		single := false
		switch x := v.Field(i).Interface().(type) {
		case json.RawMessage:
			single = true
			if len(x) > 0 && string(x) != "null" {
				items = []json.RawMessage{x}
			}
		case []json.RawMessage:
			items = x
		}
		if len(items) == 0 {
			continue
		}
		if tag == "-" {
			out.Unread = append(out.Unread, key)
			continue
		}
		kind := tag
		apiVersion := inputAPIVersions[kind]
		for j, raw := range items {
			where := fmt.Sprintf("%s %s[%d]", file, key, j)
			if single {
				where = fmt.Sprintf("%s %s", file, key)
			}
			o, notes, err := decodeItem(where, raw, apiVersion, kind)
			var ref *refusal
			if errors.As(err, &ref) {
				out.Refusals = append(out.Refusals, ref.msg)
				continue
			}
			if err != nil {
				errs = append(errs, err.Error())
				continue
			}
			out.Notes = append(out.Notes, notes...)
			if o == nil {
				continue
			}
			switch key {
			case "envoyProxyForGatewayClass":
				out.ClassProxy, _ = o.Obj.(*egv1a1.EnvoyProxy)
			case "gatewayClass":
				out.HasClass = true
			}
			out.Objects = append(out.Objects, *o)
		}
	}
	if len(errs) > 0 {
		return Input{}, fmt.Errorf("%s", strings.Join(errs, "\n"))
	}
	return out, nil
}

// decodeItem turns one item into an object of the key's kind. Its version is the one the
// item writes when the API server serves it (admission then judges it by that version's
// schema and stores it as the storage version, as a cluster would), else the version of the
// Go type EG decodes the key into: many inputs still write versions the Gateway API has
// since stopped serving (BackendTLSPolicy v1alpha2, GRPCRoute v1alpha2), which EG's test
// reads as the served type all the same.
func decodeItem(where string, raw json.RawMessage, apiVersion, kind string) (*resource.Object, []string, error) {
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil || m == nil {
		return nil, nil, fmt.Errorf("%s: not an object", where)
	}
	if written, ok := m["apiVersion"].(string); ok && written != apiVersion && served(written, kind) &&
		sameGroup(written, apiVersion) {
		apiVersion = written
	}
	m["apiVersion"] = apiVersion
	m["kind"] = kind
	js, err := json.Marshal(m)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %v", where, err)
	}
	dec, err := resource.Decode(where, js, resource.Options{SkipUnknownKinds: true})
	if err != nil {
		// A core object that does not decode (no name, a number where a string goes):
		// EG's decoder, which converts YAML by the Go type, takes it; the API server
		// refuses it.
		return nil, nil, &refusal{msg: err.Error()}
	}
	if len(dec.Objects) != 1 {
		return nil, dec.Notes, nil
	}
	// An object of the CRD groups that does not fit its Go type goes on: admission judges
	// it by the CRD, as the API server would.
	o := dec.Objects[0]
	return &o, dec.Notes, nil
}

// refusal is an item the API server would refuse before any schema is applied.
type refusal struct{ msg string }

func (r *refusal) Error() string { return r.msg }

// served says whether the API server (the CRDs of EG v1.9.1) serves kind in apiVersion.
func served(apiVersion, kind string) bool {
	gv, err := schema.ParseGroupVersion(apiVersion)
	if err != nil || gv.Group == "" {
		return false
	}
	set, err := crds.ForRelease("v1.9.1")
	if err != nil {
		return false
	}
	crd, err := set.CRD(schema.GroupKind{Group: gv.Group, Kind: kind})
	if err != nil || crd == nil {
		return false
	}
	for _, v := range crd.Spec.Versions {
		if v.Name == gv.Version {
			return v.Served
		}
	}
	return false
}

func sameGroup(a, b string) bool {
	ga, _ := schema.ParseGroupVersion(a)
	gb, _ := schema.ParseGroupVersion(b)
	return ga.Group == gb.Group
}
