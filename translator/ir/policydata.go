package ir

// PolicyData is what the policies in force on a route read from other objects, resolved by
// the policy stage in the namespace each field came from (MRG-05), so that the xDS stage
// never looks objects up.
type PolicyData struct {
	// LocalJWKS is the key set of each JWT provider whose localJWKS is a ConfigMap
	// reference, by provider name.
	LocalJWKS map[string]string `json:"localJWKS,omitempty"`
	// Lua is the code of each Lua script of the EnvoyExtensionPolicy, in spec order
	// (inline code or the referenced ConfigMap's).
	Lua []string `json:"lua,omitempty"`
	// BasicAuthUsers is the htpasswd content of the basicAuth users Secret.
	BasicAuthUsers []byte `json:"-"`
	// APIKeys are the client IDs and keys of the apiKeyAuth credential Secrets, sorted by
	// client ID.
	APIKeys []APIKey `json:"-"`
	// OIDCClientSecret is the client secret of the oidc provider.
	OIDCClientSecret []byte `json:"-"`
	// ExtAuth is the SecurityPolicy's extAuth service (in its owner's namespace, MRG-05).
	ExtAuth *ExtService `json:"extAuth,omitempty"`
	// ExtProc are the EnvoyExtensionPolicy's extProc services, in spec order.
	ExtProc []*ExtService `json:"extProc,omitempty"`
}

// APIKey is one client's API key.
type APIKey struct {
	Client string
	Key    string
}

// ExtService is an external service a policy feature calls (ext_authz, ext_proc): the
// cluster its backendRefs resolved to, and the authority EG sends it.
type ExtService struct {
	Destination *Destination `json:"destination"`
	Authority   string       `json:"authority"`
}
