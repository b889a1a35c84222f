package policy

import "github.com/egharness/egharness/translator/ir"

// The typed features of the SecurityPolicy in force on a route, set once its features
// resolved (a failed feature is gone from the effective spec by then, ResolveFeatures),
// so that the xDS stage reads them instead of the spec. Each feature resolves in its own
// file: authorization.go, cors.go, credentials.go, jwt.go, oidc.go,
// extension_services.go (extAuth).

// resolveSecurityFeatures puts on every HTTP and TCP route the typed features of the
// SecurityPolicy left in force once its features resolved.
func resolveSecurityFeatures(x *ir.XDS) {
	for _, l := range x.HTTP {
		for _, r := range l.Routes {
			ResolveSecurityFeatures(&r.Policies)
		}
	}
	for _, l := range x.TCP {
		for _, r := range l.Routes {
			ResolveSecurityFeatures(&r.Policies)
		}
	}
}

// ResolveSecurityFeatures sets the typed features of p.Security on p (none without it).
// Exported for the xDS stage's tests, which build routes by hand.
func ResolveSecurityFeatures(p *ir.RoutePolicies) {
	p.Authorization, p.CORS, p.CSRF, p.BasicAuth, p.APIKeyAuth, p.JWT = ResolveAuthorization(p.Security), nil, nil, nil,
		nil, nil
	p.OIDC, p.ExtAuth = nil, nil
	if a := p.Security; a != nil && a.Spec != nil {
		p.CORS, p.CSRF = resolveCORS(a.Spec.CORS), resolveCSRF(a.Spec.CSRF)
		p.BasicAuth, p.APIKeyAuth = resolveBasicAuth(a), resolveAPIKeyAuth(a.Spec.APIKeyAuth)
		p.JWT = resolveJWT(a.Spec.JWT)
		p.OIDC, p.ExtAuth = resolveOIDCSettings(a), resolveExtAuthSettings(a)
	}
}
