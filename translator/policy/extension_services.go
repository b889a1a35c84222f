package policy

import (
	"encoding/base64"
	"errors"
	"fmt"
	"strings"
	"time"

	egv1a1 "github.com/envoyproxy/gateway/api/v1alpha1"
	gwapiv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/egharness/egharness/translator/ir"
)

// BackendResolver resolves the backendRefs of a policy feature that calls a service of its
// own (ext_authz, ext_proc) into a destination, and names the authority EG sends it. The
// Gateway API stage, which resolved the routes' backends, implements it.
type BackendResolver interface {
	ResolvePolicyBackends(owner ir.PolicyRef, refs []egv1a1.BackendRef, name string, http2 bool) (*ir.Destination, error)
	PolicyBackendAuthority(policyNS string, ref gwapiv1.BackendObjectReference) string
}

// WithBackends lets policy features resolve backendRefs through r.
func (r *RefObjects) WithBackends(b BackendResolver) *RefObjects {
	r.backends = b
	return r
}

// extServiceName is EG's name for the cluster of a policy's external service:
// <kind>/<namespace>/<name>/<feature>/<index>, lower-cased.
func extServiceName(owner ir.PolicyRef, feature string, idx int) string {
	return strings.ToLower(fmt.Sprintf("%s/%s/%s/%s/%d", owner.Kind, owner.Namespace, owner.Name, feature, idx))
}

// resolveExtAuth resolves a SecurityPolicy's extAuth service (SP-03) in the namespace of
// the policy that declared extAuth (MRG-05): gRPC services get an HTTP/2 cluster.
func resolveExtAuth(a *ir.Applied[egv1a1.SecurityPolicySpec], objs *RefObjects) (*ir.ExtService, error) {
	ea := a.Spec.ExtAuth
	var refs []egv1a1.BackendRef
	grpc := false
	service := ""
	switch {
	case ea.GRPC != nil && ea.HTTP != nil:
		return nil, errors.New("only one of grpc or http can be specified")
	case ea.GRPC != nil:
		grpc, service = true, "grpc"
		refs = backendRefsOf(ea.GRPC.BackendRefs, ea.GRPC.BackendRef)
	case ea.HTTP != nil:
		service = "http"
		refs = backendRefsOf(ea.HTTP.BackendRefs, ea.HTTP.BackendRef)
	default:
		return nil, errors.New("one of grpc or http must be specified")
	}
	if len(refs) == 0 {
		return nil, errors.New("no backendRefs found for external service")
	}
	// After a merge the backendRefs may come from the parent while the child declares
	// other extAuth settings: the cluster is then named after, and its Services resolve
	// in the namespace of, the parent (EG's owner of extAuth backendRefs).
	// Either spelling declared by the child makes the references the child's.
	refsOwner := a.OwnerOfPath("extAuth." + service + ".backendRefs")
	if a.OwnerOfPath("extAuth."+service+".backendRef") == a.Policy {
		refsOwner = a.Policy
	}
	svc, err := resolveExtService(objs, refsOwner, refs, "extauth", 0, grpc)
	if err != nil {
		return nil, err
	}
	owner := a.OwnerOf("extAuth")
	if svc.ContextExtensions, err = contextExtensions(ea.ContextExtensions, owner.Namespace, objs); err != nil {
		return nil, err
	}
	return svc, nil
}

// contextExtensions are extAuth's context extensions by name: a value, or the key of a
// ConfigMap or Secret in the namespace of the policy that declared extAuth. EG decodes a
// Secret's value as base64 once more, so the Secret holds the value base64-encoded twice.
func contextExtensions(exts []*egv1a1.ContextExtension, ns string, objs *RefObjects) (map[string]string, error) {
	var out map[string]string
	for _, e := range exts {
		if e == nil {
			continue
		}
		var v string
		switch {
		case e.Type == egv1a1.ContextExtensionValueTypeValueRef && e.ValueRef != nil:
			ref := e.ValueRef
			name, key := string(ref.Name), ref.Key
			switch string(ref.Kind) {
			case "ConfigMap":
				cm := objs.configMaps[nsName{ns, name}]
				if cm == nil {
					return nil, fmt.Errorf("can't find the referenced configmap %q in namespace %q", name, ns)
				}
				s, ok := cm.Data[key]
				if !ok {
					return nil, fmt.Errorf("can't find the key %q in the referenced configmap %q", key, name)
				}
				v = s
			case "Secret":
				sec := objs.secrets[nsName{ns, name}]
				if sec == nil {
					return nil, fmt.Errorf("can't find the referenced secret %q in namespace %q", name, ns)
				}
				b, ok := sec.Data[key]
				if !ok {
					return nil, fmt.Errorf("can't find the key %q in the referenced secret %q", key, name)
				}
				dec, err := base64.StdEncoding.DecodeString(string(b))
				if err != nil {
					return nil, fmt.Errorf("error decoding the base64 value of the key %q in the referenced secret %q: %w", key, name,
						err)
				}
				v = string(dec)
			default:
				return nil, fmt.Errorf("unexpected reference to kind %q", ref.Kind)
			}
		case e.Type == egv1a1.ContextExtensionValueTypeValueRef:
			return nil, errors.New("unexpected nil reference")
		case e.Value != nil:
			v = *e.Value
		}
		if out == nil {
			out = map[string]string{}
		}
		out[e.Name] = v
	}
	return out, nil
}

// resolveExtProcs resolves each extProc service of an EnvoyExtensionPolicy, in spec
// order; a service that fails leaves a nil in its place. failOpen is true when every
// failing service is failOpen.
func resolveExtProcs(a *ir.Applied[egv1a1.EnvoyExtensionPolicySpec], objs *RefObjects) ([]*ir.ExtService, error, bool) {
	owner := a.OwnerOf("extProc")
	out := make([]*ir.ExtService, len(a.Spec.ExtProc))
	var errs []error
	failClosed := false
	for i, ep := range a.Spec.ExtProc {
		svc, err := resolveExtService(objs, owner, ep.BackendRefs, "extproc", i, true)
		if err != nil {
			errs = append(errs, err)
			if ep.FailOpen == nil || !*ep.FailOpen {
				failClosed = true
			}
			continue
		}
		// EG names the first backendRef as <name>.<namespace>[:<port>] for ext_proc,
		// whatever its kind.
		ref := ep.BackendRefs[0]
		ns := owner.Namespace
		if ref.Namespace != nil && *ref.Namespace != "" {
			ns = string(*ref.Namespace)
		}
		svc.Authority = fmt.Sprintf("%s.%s", ref.Name, ns)
		if ref.Port != nil {
			svc.Authority += fmt.Sprintf(":%d", *ref.Port)
		}
		out[i] = svc
	}
	err := errors.Join(errs...)
	return out, err, err != nil && !failClosed
}

func resolveExtService(objs *RefObjects, owner ir.PolicyRef, refs []egv1a1.BackendRef, feature string, idx int,
	http2 bool) (*ir.ExtService, error) {
	if objs.backends == nil {
		return nil, errors.New("backend references cannot be resolved")
	}
	if len(refs) == 0 {
		return nil, errors.New("no backendRefs found for external service")
	}
	dest, err := objs.backends.ResolvePolicyBackends(owner, refs, extServiceName(owner, feature, idx), http2)
	if err != nil {
		return nil, err
	}
	return &ir.ExtService{Destination: dest, Owner: owner,
		Authority: objs.backends.PolicyBackendAuthority(owner.Namespace, refs[0].BackendObjectReference)}, nil
}

// backendRefsOf is a service's backendRefs, or its deprecated single backendRef.
func backendRefsOf(refs []egv1a1.BackendRef, single *gwapiv1.BackendObjectReference) []egv1a1.BackendRef {
	if len(refs) > 0 {
		return refs
	}
	if single != nil {
		return []egv1a1.BackendRef{{BackendObjectReference: *single}}
	}
	return nil
}

// errNoWasmCache is what EG's translator reports for any Wasm without the wasm module
// cache of a running controller (egctl x translate has none): modules are fetched (HTTP)
// or pulled (Image) by that cache and served to Envoy from a salted URL, which no offline
// translation can produce.
var errNoWasmCache = errors.New("wasm cache is not initialized")

// checkWasm: the reference translator, like egctl, has no wasm cache, so any Wasm makes the
// policy Invalid and fails its routes closed (a Wasm without its cache never fails open).
func checkWasm(ws []egv1a1.Wasm) error {
	if len(ws) == 0 {
		return nil
	}
	return errNoWasmCache
}

// extAuthDefaultTimeout is EG's timeout for a call to the extAuth service when the policy
// sets none (or one that does not parse).
const extAuthDefaultTimeout = 10 * time.Second

// resolveExtAuthSettings is a SecurityPolicy's extAuth settings (nil without extAuth): the
// filter is named after the policy that declared extAuth (MRG-05); the service's cluster
// takes the gRPC service's backendSettings, else the HTTP one's.
func resolveExtAuthSettings(a *ir.Applied[egv1a1.SecurityPolicySpec]) *ir.ExtAuth {
	ea := a.Spec.ExtAuth
	if ea == nil {
		return nil
	}
	owner := a.OwnerOf("extAuth")
	out := &ir.ExtAuth{
		FilterName:           fmt.Sprintf("%s/securitypolicy/%s/%s", ir.FilterExtAuthz, owner.Namespace, owner.Name),
		FailOpen:             ea.FailOpen != nil && *ea.FailOpen,
		RecomputeRoute:       ea.RecomputeRoute != nil && *ea.RecomputeRoute,
		IncludeRouteMetadata: ea.IncludeRouteMetadata != nil && *ea.IncludeRouteMetadata,
		HeadersToExtAuth:     ea.HeadersToExtAuth,
		Timeout:              extAuthDefaultTimeout,
		StatusOnError:        ea.StatusOnError,
	}
	if ea.BodyToExtAuth != nil {
		n := ea.BodyToExtAuth.MaxRequestBytes
		out.MaxRequestBytes = &n
	}
	if d := ir.Duration(ea.Timeout); d != nil {
		out.Timeout = *d
	}
	var settings *egv1a1.ClusterSettings
	switch {
	case ea.GRPC != nil:
		settings = ea.GRPC.BackendSettings
	case ea.HTTP != nil:
		settings = ea.HTTP.BackendSettings
	}
	out.Cluster, out.Retry = resolveClusterSettings(settings), resolveServiceRetry(settings)
	if h := ea.HTTP; h != nil {
		service := &ir.ExtAuthHTTP{HeadersToBackend: h.HeadersToBackend}
		if h.Path != nil {
			service.PathPrefix = *h.Path
		}
		if h.PathOverride != nil {
			service.PathOverride = *h.PathOverride
		}
		out.HTTP = service
		out.Retry = resolveServiceRetry(h.BackendSettings)
	}
	return out
}

// resolveExtProcSettings is the i-th extProc entry of an EnvoyExtensionPolicy, its filter
// named after the policy that declared extProc (MRG-05) and the entry's index.
func resolveExtProcSettings(a *ir.Applied[egv1a1.EnvoyExtensionPolicySpec], i int) ir.ExtProc {
	ep := a.Spec.ExtProc[i]
	owner := a.OwnerOf("extProc")
	out := ir.ExtProc{
		FilterName: fmt.Sprintf("%s/envoyextensionpolicy/%s/%s/extproc/%d", ir.FilterExtProc, owner.Namespace, owner.Name,
			i),
		ShadowMode:    ep.ShadowMode != nil && *ep.ShadowMode,
		FailOpen:      ep.FailOpen != nil && *ep.FailOpen,
		StatusOnError: ep.StatusOnError,
		Cluster:       resolveClusterSettings(ep.BackendSettings),
		Retry:         resolveServiceRetry(ep.BackendSettings),
	}
	if ep.MessageTimeout != nil {
		out.MessageTimeout = ir.Duration(ep.MessageTimeout)
	}
	if pm := ep.ProcessingMode; pm != nil {
		out.ProcessingMode.AllowModeOverride = pm.AllowModeOverride
		if pm.Request != nil {
			out.ProcessingMode.Request = &ir.ExtProcPhase{Attributes: pm.Request.Attributes}
			if pm.Request.Body != nil {
				out.ProcessingMode.Request.BodyMode = string(*pm.Request.Body)
			}
		}
		if pm.Response != nil {
			out.ProcessingMode.Response = &ir.ExtProcPhase{Attributes: pm.Response.Attributes}
			if pm.Response.Body != nil {
				out.ProcessingMode.Response.BodyMode = string(*pm.Response.Body)
			}
		}
	}
	if md := ep.Metadata; md != nil {
		if md.AccessibleNamespaces != nil {
			out.ForwardingNamespaces = &ir.MetadataNamespaces{Untyped: md.AccessibleNamespaces}
		}
		if md.WritableNamespaces != nil {
			out.ReceivingNamespaces = &ir.MetadataNamespaces{Untyped: md.WritableNamespaces}
		}
	}
	return out
}
