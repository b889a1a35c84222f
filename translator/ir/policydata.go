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
}

// APIKey is one client's API key.
type APIKey struct {
	Client string
	Key    string
}
