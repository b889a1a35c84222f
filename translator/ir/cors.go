package ir

import (
	"time"

	gwapiv1 "sigs.k8s.io/gateway-api/apis/v1"
)

// CORS is a route's CORS policy: a Gateway API CORS filter of the rule (resolved by the
// Gateway API stage) or a SecurityPolicy's cors (by the policy stage). Origins are as
// written ("*" in one is a wildcard); MaxAge is nil when not given or not a duration.
type CORS struct {
	AllowOrigins     []string       `json:"allowOrigins,omitempty"`
	AllowMethods     []string       `json:"allowMethods,omitempty"`
	AllowHeaders     []string       `json:"allowHeaders,omitempty"`
	ExposeHeaders    []string       `json:"exposeHeaders,omitempty"`
	AllowCredentials bool           `json:"allowCredentials,omitempty"`
	MaxAge           *time.Duration `json:"maxAge,omitempty"`
}

// CSRF is a SecurityPolicy's csrf: the fraction of requests only evaluated in shadow (nil:
// every request is enforced) and the origins accepted besides the request's own, as
// written.
type CSRF struct {
	ShadowFraction    *gwapiv1.Fraction `json:"shadowFraction,omitempty"`
	AdditionalOrigins []string          `json:"additionalOrigins,omitempty"`
}
