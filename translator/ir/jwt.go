package ir

import "time"

// JWT is a SecurityPolicy's jwt on a route (SP-03, SP-06, SP-07): any of its providers
// must verify the token, unless the policy fails open (FailOpen: a missing or failed token
// passes) or tokens are optional (Optional: a missing one passes).
type JWT struct {
	Providers []JWTProvider `json:"providers,omitempty"`
	FailOpen  bool          `json:"failOpen,omitempty"`
	Optional  bool          `json:"optional,omitempty"`
}

// JWTProvider is one provider. Its key set is local (LocalJWKS: inline, else the
// ConfigMap's content in PolicyData.LocalJWKS) or remote; with neither the provider
// cannot be built.
type JWTProvider struct {
	Name           string             `json:"name"`
	Issuer         string             `json:"issuer,omitempty"`
	Audiences      []string           `json:"audiences,omitempty"`
	ClaimToHeaders []JWTClaimToHeader `json:"claimToHeaders,omitempty"`
	LocalJWKS      *JWTLocalJWKS      `json:"localJWKS,omitempty"`
	RemoteJWKS     *JWTRemoteJWKS     `json:"remoteJWKS,omitempty"`
	// RecomputeRoute clears the route cache, so headers copied from claims select a route.
	RecomputeRoute bool `json:"recomputeRoute,omitempty"`
	// ExtractFrom is where the token is read from, nil for Envoy's default (the
	// Authorization header's bearer token).
	ExtractFrom *JWTExtractFrom `json:"extractFrom,omitempty"`
}

// JWTClaimToHeader copies a claim to a request header.
type JWTClaimToHeader struct {
	Header string `json:"header"`
	Claim  string `json:"claim"`
}

// JWTLocalJWKS is a local key set: Inline, or nil when a ConfigMap holds it.
type JWTLocalJWKS struct {
	Inline *string `json:"inline,omitempty"`
}

// JWTRemoteJWKS is a key set fetched from URI. BackendRefs says the policy names backends
// for the fetch: the key set is then fetched through them (their cluster is the route's
// PolicyData.RemoteJWKS entry for the provider), with Cluster and Retry from the
// backendSettings. The durations are nil when they do not parse (CacheDuration has the
// CRD's default, 300s).
type JWTRemoteJWKS struct {
	URI                   string           `json:"uri"`
	BackendRefs           bool             `json:"backendRefs,omitempty"`
	Cluster               *ClusterSettings `json:"cluster,omitempty"`
	Retry                 *ServiceRetry    `json:"retry,omitempty"`
	CacheDuration         *time.Duration   `json:"cacheDuration,omitempty"`
	FailedRefetchDuration *time.Duration   `json:"failedRefetchDuration,omitempty"`
}

// JWTExtractFrom is the headers (with the value's prefix), cookies and query parameters a
// token is read from.
type JWTExtractFrom struct {
	Headers []JWTHeader `json:"headers,omitempty"`
	Cookies []string    `json:"cookies,omitempty"`
	Params  []string    `json:"params,omitempty"`
}

// JWTHeader is a header a token is read from, after ValuePrefix.
type JWTHeader struct {
	Name        string `json:"name"`
	ValuePrefix string `json:"valuePrefix,omitempty"`
}
