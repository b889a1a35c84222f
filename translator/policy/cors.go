package policy

import (
	"time"

	egv1a1 "github.com/envoyproxy/gateway/api/v1alpha1"

	"github.com/egharness/egharness/translator/ir"
)

// A SecurityPolicy's cors and csrf (EG v1.9), resolved into ir.CORS and ir.CSRF. Neither
// refuses the policy: a maxAge that does not parse is refused at admission, and left out
// here should one get through.

func resolveCORS(c *egv1a1.CORS) *ir.CORS {
	if c == nil {
		return nil
	}
	out := &ir.CORS{
		AllowMethods:     c.AllowMethods,
		AllowHeaders:     c.AllowHeaders,
		ExposeHeaders:    c.ExposeHeaders,
		AllowCredentials: c.AllowCredentials != nil && *c.AllowCredentials,
	}
	for _, o := range c.AllowOrigins {
		out.AllowOrigins = append(out.AllowOrigins, string(o))
	}
	if c.MaxAge != nil {
		if d, err := time.ParseDuration(string(*c.MaxAge)); err == nil {
			out.MaxAge = &d
		}
	}
	return out
}

func resolveCSRF(c *egv1a1.CSRF) *ir.CSRF {
	if c == nil {
		return nil
	}
	out := &ir.CSRF{ShadowFraction: c.ShadowFraction}
	for _, o := range c.AdditionalOrigins {
		out.AdditionalOrigins = append(out.AdditionalOrigins, string(o))
	}
	return out
}
