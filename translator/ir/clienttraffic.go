package ir

import (
	"time"

	egv1a1 "github.com/envoyproxy/gateway/api/v1alpha1"
)

// ClientTraffic is what the connection manager of a listener takes from the
// ClientTrafficPolicy in force there besides ClientHTTP and ClientTLS: how the client's
// address is found, the HTTP timeouts, path handling, and the header switches the rate
// limit filters follow. The policy stage resolves it whenever a policy applies, even one
// that failed part-way (whose timeouts the xDS stage then leaves out, as EG does).
type ClientTraffic struct {
	ClientIP *ClientIPDetection `json:"clientIP,omitempty"`
	// The HTTP timeouts; one that does not parse is left unset.
	RequestReceivedTimeout        *time.Duration `json:"requestReceivedTimeout,omitempty"`
	RequestHeadersReceivedTimeout *time.Duration `json:"requestHeadersReceivedTimeout,omitempty"`
	IdleTimeout                   *time.Duration `json:"idleTimeout,omitempty"`
	StreamIdleTimeout             *time.Duration `json:"streamIdleTimeout,omitempty"`
	// MergeSlashes is path.disableMergeSlashes negated, when given.
	MergeSlashes *bool `json:"mergeSlashes,omitempty"`
	// EscapedSlashesAction is path.escapedSlashesAction (one of the EscapedSlashes…
	// values), "" when not given.
	EscapedSlashesAction string `json:"escapedSlashesAction,omitempty"`
	// EnvoyHeaders and RateLimitHeadersOff are headers.enableEnvoyHeaders and
	// headers.disableRateLimitHeaders.
	EnvoyHeaders        bool `json:"envoyHeaders,omitempty"`
	RateLimitHeadersOff bool `json:"rateLimitHeadersOff,omitempty"`
}

// The escaped slashes actions of a ClientTrafficPolicy's path settings.
const (
	EscapedSlashesKeepUnchanged       = string(egv1a1.KeepUnchangedAction)
	EscapedSlashesRejectRequest       = string(egv1a1.RejectRequestAction)
	EscapedSlashesUnescapeAndForward  = string(egv1a1.UnescapeAndForward)
	EscapedSlashesUnescapeAndRedirect = string(egv1a1.UnescapeAndRedirect)
)

// ClientIPDetection is where the client's address comes from: a custom header (the
// connection is refused with 403 when FailClosed and the header is absent or invalid), or
// X-Forwarded-For (trusting the CIDRs listed, else a number of hops). Neither (directSourceIP)
// keeps the connection's source address.
type ClientIPDetection struct {
	CustomHeader  *ClientIPCustomHeader  `json:"customHeader,omitempty"`
	XForwardedFor *ClientIPXForwardedFor `json:"xForwardedFor,omitempty"`
}

// ClientIPCustomHeader is the header holding the client's address.
type ClientIPCustomHeader struct {
	Name       string `json:"name"`
	FailClosed bool   `json:"failClosed,omitempty"`
}

// ClientIPXForwardedFor is X-Forwarded-For detection. TrustedCIDRs, when given (not nil,
// even empty), wins over NumTrustedHops; the CIDRs are kept as written, and one that does
// not parse is skipped where it is used.
type ClientIPXForwardedFor struct {
	SkipAppend     bool     `json:"skipAppend,omitempty"`
	TrustedCIDRs   []string `json:"trustedCIDRs,omitempty"`
	NumTrustedHops *uint32  `json:"numTrustedHops,omitempty"`
}
