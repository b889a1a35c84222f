package ir

// PolicyData is what the policies in force on a route read from other objects, resolved by
// the policy stage in the namespace each field came from (MRG-05), so that the xDS stage
// never looks objects up.
type PolicyData struct {
	// LocalJWKS is the key set of each JWT provider whose localJWKS is a ConfigMap
	// reference, by provider name.
	LocalJWKS map[string]string `json:"localJWKS,omitempty"`
	// RemoteJWKS is, for each JWT provider whose remote key set is fetched through
	// backendRefs, the service those backends make, by provider name.
	RemoteJWKS map[string]*ExtService `json:"remoteJWKS,omitempty"`
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
	// OIDC is what the SecurityPolicy's oidc reads from Secrets and its provider.
	OIDC *OIDCData `json:"oidc,omitempty"`
	// ExtAuth is the SecurityPolicy's extAuth service (in its owner's namespace, MRG-05).
	ExtAuth *ExtService `json:"extAuth,omitempty"`
	// ExtProc are the EnvoyExtensionPolicy's extProc services, in spec order.
	ExtProc []*ExtService `json:"extProc,omitempty"`
	// DynamicModules are the EnvoyExtensionPolicy's dynamic modules, in spec order, each
	// resolved against the allowlist of the route's Gateway's EnvoyProxy.
	DynamicModules []DynamicModule `json:"dynamicModules,omitempty"`
	// ResponseBodies are the bodies of the BackendTrafficPolicy's responseOverride rules
	// that name a ConfigMap (its response.body key, else its first key), by rule index.
	ResponseBodies map[int]string `json:"responseBodies,omitempty"`
}

// DynamicModule is one dynamic module filter: Name is its config name
// (envoyextensionpolicy/<ns>/<name>/dynamic-module/<index>), the module a local file (Path)
// or a download (Remote, checked against its SHA-256).
type DynamicModule struct {
	Name           string `json:"name"`
	FilterName     string `json:"filterName,omitempty"`
	Config         []byte `json:"config,omitempty"`
	DoNotClose     bool   `json:"doNotClose,omitempty"`
	LoadGlobally   bool   `json:"loadGlobally,omitempty"`
	TerminalFilter bool   `json:"terminalFilter,omitempty"`
	Path           string `json:"path,omitempty"`
	RemoteURL      string `json:"remoteURL,omitempty"`
	RemoteSHA256   string `json:"remoteSHA256,omitempty"`
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
	// Owner is the policy whose backendRefs these are (after a merge, possibly the
	// parent): the cluster's metadata names it.
	Owner PolicyRef `json:"owner"`
	// ContextExtensions are ext_authz's extra check-request values, by name (given inline
	// or read from a ConfigMap or Secret).
	ContextExtensions map[string]string `json:"-"`
}

// OIDCData is a SecurityPolicy's oidc as the policy stage resolved it: the client, the
// provider's endpoints, the paths, and the controller's HMAC key. The client secret is
// PolicyData.OIDCClientSecret.
type OIDCData struct {
	ClientID              string  `json:"clientID"`
	AuthorizationEndpoint string  `json:"authorizationEndpoint"`
	TokenEndpoint         string  `json:"tokenEndpoint"`
	EndSessionEndpoint    *string `json:"endSessionEndpoint,omitempty"`
	RedirectURL           string  `json:"redirectURL"`
	RedirectPath          string  `json:"redirectPath"`
	LogoutPath            string  `json:"logoutPath"`
	// CookieSuffix makes the cookie names of one policy's filter its own (EG: an FNV-32a
	// digest of the declaring policy's UID).
	CookieSuffix string `json:"cookieSuffix"`
	// CookieNames are the filter's cookie names: the policy's accessToken and idToken
	// names, else each cookie's EG name followed by CookieSuffix.
	CookieNames OIDCCookieNames `json:"cookieNames"`
	// HMACSecret is the key of the controller's envoy-oidc-hmac Secret.
	HMACSecret []byte `json:"-"`
	// Provider is the token endpoint's cluster when the provider names backendRefs.
	Provider *ExtService `json:"provider,omitempty"`
}
