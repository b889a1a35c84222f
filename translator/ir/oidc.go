package ir

import (
	"time"

	egv1a1 "github.com/envoyproxy/gateway/api/v1alpha1"
)

// OIDC is a SecurityPolicy's oidc settings on a route, resolved by the policy stage; what
// it reads from Secrets and its provider is PolicyData.OIDC.
type OIDC struct {
	// ConfigName is securitypolicy/<namespace>/<name> of the policy that declared oidc:
	// the filter's stat prefix and the base of its SDS secrets' names, ClientSecretName
	// and HMACSecretName.
	ConfigName       string `json:"configName"`
	ClientSecretName string `json:"clientSecretName"`
	HMACSecretName   string `json:"hmacSecretName"`
	// Scopes always include openid.
	Scopes                 []string `json:"scopes"`
	Resources              []string `json:"resources,omitempty"`
	ForwardAccessToken     bool     `json:"forwardAccessToken,omitempty"`
	UseRefreshToken        bool     `json:"useRefreshToken,omitempty"`
	DisableTokenEncryption bool     `json:"disableTokenEncryption,omitempty"`
	// PreserveAuthorizationHeader: neither the access token nor the ID token is forwarded
	// in the Authorization header, so the request's stays.
	PreserveAuthorizationHeader bool   `json:"preserveAuthorizationHeader,omitempty"`
	CookieDomain                string `json:"cookieDomain,omitempty"`
	// SameSite is one of the SameSite… values, "" when the policy sets none.
	SameSite string `json:"sameSite,omitempty"`
	// The token lifetimes, nil when unset; TTLError is why one could not be parsed (the
	// route then cannot be built).
	DefaultTokenTTL        *time.Duration `json:"defaultTokenTTL,omitempty"`
	DefaultRefreshTokenTTL *time.Duration `json:"defaultRefreshTokenTTL,omitempty"`
	CSRFTokenTTL           *time.Duration `json:"csrfTokenTTL,omitempty"`
	TTLError               string         `json:"ttlError,omitempty"`
	// DenyRedirectHeaders are request headers that get a 401 instead of a redirect to the
	// provider.
	DenyRedirectHeaders []StringMatch `json:"denyRedirectHeaders,omitempty"`
	// ForwardIDTokenHeader, when set, is the header the ID token is forwarded in.
	ForwardIDTokenHeader *string `json:"forwardIDTokenHeader,omitempty"`
	// PassThroughHeaders let a request that already carries a JWT provider's token skip
	// the OAuth2 flow (passThroughAuthHeader with a jwt).
	PassThroughHeaders []PassThroughHeader `json:"passThroughHeaders,omitempty"`
	// ProviderCluster is the provider's backendSettings, for its token endpoint's cluster.
	ProviderCluster *ClusterSettings `json:"providerCluster,omitempty"`
}

// PassThroughHeader is a header a token is read from: present at all (nil Prefix), or
// starting with Prefix.
type PassThroughHeader struct {
	Name   string  `json:"name"`
	Prefix *string `json:"prefix,omitempty"`
}

// OIDCCookieNames are the names of the oauth2 filter's cookies.
type OIDCCookieNames struct {
	BearerToken  string `json:"bearerToken"`
	OauthHMAC    string `json:"oauthHMAC"`
	OauthExpires string `json:"oauthExpires"`
	IDToken      string `json:"idToken"`
	RefreshToken string `json:"refreshToken"`
	OauthNonce   string `json:"oauthNonce"`
	CodeVerifier string `json:"codeVerifier"`
}

// The SameSite cookie attributes: SameSiteDisabled stands for any other value the policy
// gives, which Envoy then leaves out.
const (
	SameSiteStrict   = string(egv1a1.SameSiteStrict)
	SameSiteLax      = string(egv1a1.SameSiteLax)
	SameSiteNone     = string(egv1a1.SameSiteNone)
	SameSiteDisabled = "Disabled"
)
