package ir

import egv1a1 "github.com/envoyproxy/gateway/api/v1alpha1"

// The X-RateLimit header settings a rule or a default bucket carries (EG's
// XRateLimitHeadersOption, as written in the policy), named here so that the xDS stage
// compares with them without EG's API types.
const (
	XRateLimitHeadersOff            = string(egv1a1.XRateLimitHeadersOptionDisabled)
	XRateLimitHeadersDraftVersion03 = string(egv1a1.XRateLimitHeadersOptionDraftVersion03)
)

// RateLimit is the rate limiting a BackendTrafficPolicy puts on a route (BTP-02, BTP-03),
// built by the policy stage. After a merge (MRG-06) its rules come from more than one
// policy, each keeping the name of the policy that declared it.
type RateLimit struct {
	// Global rules are counted by the rate limit service (envoy.filters.http.ratelimit).
	Global []*RateLimitRule `json:"global,omitempty"`
	// Local is the per-proxy token bucket (envoy.filters.http.local_ratelimit).
	Local *LocalRateLimit `json:"local,omitempty"`
}

// LocalRateLimit is the route's default bucket and the rules with client selectors.
type LocalRateLimit struct {
	// Default is the route's bucket: the limit of the one rule without client selectors,
	// or unlimited (4294967295 per second) when every rule selects clients.
	Default RateLimitValue `json:"default"`
	// DefaultXRateLimitHeaders is the default bucket's X-RateLimit setting: "" (inherit),
	// "Off" or "DraftVersion03".
	DefaultXRateLimitHeaders string           `json:"defaultXRateLimitHeaders,omitempty"`
	Rules                    []*RateLimitRule `json:"rules,omitempty"`
}

// RateLimitValue is a number of requests per unit of time.
type RateLimitValue struct {
	Requests uint32 `json:"requests"`
	// Seconds is the unit's length (Second 1, Minute 60, ... Year 365 days).
	Seconds int64 `json:"seconds"`
	// Unit is the unit as written in the policy.
	Unit string `json:"unit"`
}

// RateLimitRule is one rule: what requests it selects and their limit.
type RateLimitRule struct {
	// Name is <policy namespace>/<policy name>/rule/<index in the policy's rules>.
	Name        string            `json:"name"`
	Headers     []*RateLimitMatch `json:"headers,omitempty"`
	Methods     []*RateLimitMatch `json:"methods,omitempty"`
	Path        *RateLimitMatch   `json:"path,omitempty"`
	CIDR        *CIDRMatch        `json:"cidr,omitempty"`
	QueryParams []*RateLimitMatch `json:"queryParams,omitempty"`
	Limit       RateLimitValue    `json:"limit"`
	// Shared: one counter for every route the policy reaches, in a domain of the policy's
	// own (global rules only).
	Shared     bool `json:"shared,omitempty"`
	ShadowMode bool `json:"shadowMode,omitempty"`
	// Headers of the rule's own X-RateLimit option: "" inherits the filter's setting,
	// "Off" or "DraftVersion03".
	XRateLimitHeaders string `json:"xRateLimitHeaders,omitempty"`
	// RequestCost and ResponseCost are what a request adds to the counter when it starts
	// and when it completes.
	RequestCost  *RateLimitCost `json:"requestCost,omitempty"`
	ResponseCost *RateLimitCost `json:"responseCost,omitempty"`
	// LimitFromMetadata reads the limit from the request's dynamic metadata.
	LimitFromMetadata *MetadataKey `json:"limitFromMetadata,omitempty"`
}

// MatchSet reports whether the rule selects requests at all; a rule that does not counts
// every request of the route.
func (r *RateLimitRule) MatchSet() bool {
	return len(r.Headers) > 0 || len(r.Methods) > 0 || r.Path != nil || r.CIDR != nil || len(r.QueryParams) > 0
}

// RateLimitMatch selects requests by a header, method, path or query parameter value.
// Distinct gives every value a counter of its own (no value matcher is set then).
type RateLimitMatch struct {
	StringMatch
	Invert   bool `json:"invert,omitempty"`
	Distinct bool `json:"distinct,omitempty"`
}

// CIDRMatch selects clients by source address; Distinct counts each address apart.
type CIDRMatch struct {
	CIDR     string `json:"cidr"` // the network, e.g. 10.0.0.0/8
	Prefix   string `json:"prefix"`
	MaskLen  uint32 `json:"maskLen"`
	Distinct bool   `json:"distinct,omitempty"`
	Invert   bool   `json:"invert,omitempty"`
}

// RateLimitCost is a fixed number or a dynamic metadata format string.
type RateLimitCost struct {
	Number *uint64 `json:"number,omitempty"`
	Format *string `json:"format,omitempty"`
}

// MetadataKey names a dynamic metadata value.
type MetadataKey struct {
	Namespace string `json:"namespace"`
	Key       string `json:"key"`
}
