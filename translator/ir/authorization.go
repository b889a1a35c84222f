package ir

// Authorization is a SecurityPolicy's authorization on a route (SP-05, and SP-02 on a TCP
// route): the rules in order, the first that matches decides, DefaultAllow (else deny)
// when none does. The policy stage resolves it from the effective spec; values Envoy must
// parse (CIDRs, CEL) are kept as written, so that the xDS stage reports them as it builds
// the matcher.
type Authorization struct {
	Rules        []AuthorizationRule `json:"rules,omitempty"`
	DefaultAllow bool                `json:"defaultAllow,omitempty"`
}

// AuthorizationRule is one rule: its conditions, ANDed, and its action. Name is the
// rule's name, else securitypolicy/<ns>/<name>/authorization/rule/<index> after the
// policy that declared the authorization.
type AuthorizationRule struct {
	Name         string                `json:"name"`
	Deny         bool                  `json:"deny,omitempty"`
	Methods      []string              `json:"methods,omitempty"`
	Path         *AuthorizationPath    `json:"path,omitempty"`
	ClientCIDRs  []string              `json:"clientCIDRs,omitempty"`
	GeoLocations []GeoLocation         `json:"geoLocations,omitempty"`
	CEL          *string               `json:"cel,omitempty"`
	JWT          *AuthorizationJWT     `json:"jwt,omitempty"`
	Headers      []AuthorizationHeader `json:"headers,omitempty"`
}

// AuthorizationPath matches the request path: Type is a Gateway API path match type
// (PathPrefix when the policy leaves it out); Invert negates the match.
type AuthorizationPath struct {
	Type   string `json:"type"`
	Value  string `json:"value"`
	Invert bool   `json:"invert,omitempty"`
}

// GeoLocation is one clientIPGeoLocations entry: every field given must match.
type GeoLocation struct {
	Country     *string `json:"country,omitempty"`
	Region      *string `json:"region,omitempty"`
	City        *string `json:"city,omitempty"`
	ASN         *uint32 `json:"asn,omitempty"`
	ISP         *string `json:"isp,omitempty"`
	IsAnonymous *bool   `json:"isAnonymous,omitempty"`
	IsVPN       *bool   `json:"isVPN,omitempty"`
	IsHosting   *bool   `json:"isHosting,omitempty"`
	IsTor       *bool   `json:"isTor,omitempty"`
	IsProxy     *bool   `json:"isProxy,omitempty"`
}

// AuthorizationJWT matches what a JWT provider verified: every scope, and for each claim
// one of its values (StringArray: the claim is a list holding the value).
type AuthorizationJWT struct {
	Provider string     `json:"provider"`
	Scopes   []string   `json:"scopes,omitempty"`
	Claims   []JWTClaim `json:"claims,omitempty"`
}

// JWTClaim is one claim, by its dotted name, and the values that match.
type JWTClaim struct {
	Name        string   `json:"name"`
	Values      []string `json:"values,omitempty"`
	StringArray bool     `json:"stringArray,omitempty"`
}

// AuthorizationHeader matches a request header against any of its values.
type AuthorizationHeader struct {
	Name   string   `json:"name"`
	Values []string `json:"values,omitempty"`
}
