package ir

import (
	"strings"

	egv1a1 "github.com/envoyproxy/gateway/api/v1alpha1"
)

// PolicyRef names an EG policy object.
type PolicyRef struct {
	Kind      string `json:"kind"`
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
}

// Applied is the policy of one kind in force at one place (a route rule, a listener): the
// policy that won precedence, the parents merged into it, and the effective spec. The policy
// stage fills it and resolves each feature of the spec into the typed fields beside it
// (RoutePolicies, ListenerPolicies); the xDS stage reads only those and Policy, never Spec,
// so that each meaning of a CRD field is decided in one place.
type Applied[T any] struct {
	// Policy is the most specific policy that attached here (the child after a merge).
	Policy PolicyRef `json:"policy"`
	// MergedWith lists the parent policies merged into Spec, closest parent first (MRG-02).
	MergedWith []PolicyRef `json:"mergedWith,omitempty"`
	// Spec is the effective spec: the policy's own, or the merge result when it has mergeType.
	Spec *T `json:"spec"`
	// FieldOwner says, after a merge, which parent policy each inherited top-level spec
	// field (by its JSON name), or nested field only the parent sets (by its dotted JSON
	// path, see OwnerOfPath), came from: Secret and backend references resolve in its
	// namespace (MRG-05), and EG names per-policy filters after it, even when parent and
	// child share a namespace. Fields not listed are the policy's own.
	FieldOwner map[string]PolicyRef `json:"fieldOwner,omitempty"`
}

// OwnerOf is the policy that declared the named top-level field.
func (a *Applied[T]) OwnerOf(field string) PolicyRef {
	if p, ok := a.FieldOwner[field]; ok {
		return p
	}
	return a.Policy
}

// OwnerOfPath is the policy that declared the field at a dotted JSON path
// (extAuth.http.backendRefs): the owner recorded for the path or its closest ancestor,
// else the policy itself.
func (a *Applied[T]) OwnerOfPath(path string) PolicyRef {
	for p := path; ; {
		if o, ok := a.FieldOwner[p]; ok {
			return o
		}
		i := strings.LastIndexByte(p, '.')
		if i < 0 {
			return a.Policy
		}
		p = p[:i]
	}
}

// NamespaceOf is the namespace references in the named top-level field resolve in.
func (a *Applied[T]) NamespaceOf(field string) string {
	return a.OwnerOf(field).Namespace
}

// RoutePolicies are the policies in force on one HTTP, gRPC, TCP, TLS or UDP route.
type RoutePolicies struct {
	Security       *Applied[egv1a1.SecurityPolicySpec]       `json:"security,omitempty"`
	BackendTraffic *Applied[egv1a1.BackendTrafficPolicySpec] `json:"backendTraffic,omitempty"`
	Extension      *Applied[egv1a1.EnvoyExtensionPolicySpec] `json:"extension,omitempty"`
	// Authorization is Security's authorization, resolved (set by the policy stage).
	Authorization *Authorization `json:"authorization,omitempty"`
	// CORS and CSRF are Security's cors and csrf, resolved (set by the policy stage).
	CORS *CORS `json:"cors,omitempty"`
	CSRF *CSRF `json:"csrf,omitempty"`
	// BasicAuth and APIKeyAuth are Security's basicAuth and apiKeyAuth settings, resolved.
	BasicAuth  *BasicAuth  `json:"basicAuth,omitempty"`
	APIKeyAuth *APIKeyAuth `json:"apiKeyAuth,omitempty"`
	// JWT is Security's jwt, resolved.
	JWT *JWT `json:"jwt,omitempty"`
	// OIDC and ExtAuth are Security's oidc and extAuth settings, resolved.
	OIDC    *OIDC    `json:"oidc,omitempty"`
	ExtAuth *ExtAuth `json:"extAuth,omitempty"`
	// Fault, Compressors and RequestBuffer are BackendTraffic's faultInjection,
	// compressors and requestBuffer, resolved (set by the policy stage).
	Fault         *Fault         `json:"fault,omitempty"`
	Compressors   []Compressor   `json:"compressors,omitempty"`
	RequestBuffer *RequestBuffer `json:"requestBuffer,omitempty"`
	// BackendTrafficSettings is the rest of what BackendTraffic sets on the route and its
	// cluster, resolved (set by the policy stage whenever one applies).
	BackendTrafficSettings *BackendTraffic `json:"backendTrafficSettings,omitempty"`
	// ExtensionSettings is Extension's Lua and extProc, resolved (set by the policy stage
	// whenever one applies).
	ExtensionSettings *Extension `json:"extensionSettings,omitempty"`
	// DNS is BackendTraffic's dns, resolved (set by the policy stage).
	DNS *DNS `json:"dns,omitempty"`
}

// ListenerPolicies are the policies in force on one listener.
type ListenerPolicies struct {
	ClientTraffic *Applied[egv1a1.ClientTrafficPolicySpec] `json:"clientTraffic,omitempty"`
	// ClientTLS is the ClientTrafficPolicy's resolved downstream TLS, on a terminating
	// listener (set by the policy stage).
	ClientTLS *DownstreamTLS `json:"clientTLS,omitempty"`
	// ClientHTTP is the ClientTrafficPolicy's resolved HTTP and connection settings.
	ClientHTTP *ClientHTTP `json:"clientHTTP,omitempty"`
	// ClientTrafficSettings is the rest of what the connection manager takes from the
	// ClientTrafficPolicy (set by the policy stage whenever one applies).
	ClientTrafficSettings *ClientTraffic `json:"clientTrafficSettings,omitempty"`
	// ClientTrafficError is why the ClientTrafficPolicy could not be applied whole. Like EG,
	// the settings resolved before the error stay in force, the connection limits and
	// timeouts do not, and the listener's routes answer 500 (TCP routes are dropped).
	ClientTrafficError string `json:"clientTrafficError,omitempty"`
}
