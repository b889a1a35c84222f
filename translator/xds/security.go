package xds

import (
	routev3 "github.com/envoyproxy/go-control-plane/envoy/config/route/v3"

	"github.com/egharness/egharness/translator/ir"
)

// addSecurity configures the route for the SecurityPolicy in force on it (SP-03): each
// feature the policy stage resolved enables its filter on the listener and configures it
// for the route.
func (s *httpFilterSet) addSecurity(out *routev3.Route, r *ir.HTTPRoute) error {
	if c := r.Policies.CORS; c != nil && r.CORS == nil { // the route's CORS filter wins (addRoute)
		s.cors = true
		if err := setPerRoute(out, corsFilterName, corsPolicy(c)); err != nil {
			return err
		}
	}
	if c := r.Policies.CSRF; c != nil {
		s.csrf = true
		if err := setPerRoute(out, csrfFilterName, csrfPolicy(c)); err != nil {
			return err
		}
	}
	if b := r.Policies.BasicAuth; b != nil {
		if err := s.addBasicAuth(out, r, b); err != nil {
			return err
		}
	}
	if k := r.Policies.APIKeyAuth; k != nil {
		if err := s.addAPIKeyAuth(out, r, k); err != nil {
			return err
		}
	}
	if r.Policies.Authorization != nil {
		if err := s.addAuthorization(out, r.Policies.Authorization); err != nil {
			return err
		}
	}
	if o := r.Policies.OIDC; o != nil {
		if err := s.addOIDC(out, r, o); err != nil {
			return err
		}
	}
	if ea := r.Policies.ExtAuth; ea != nil {
		if err := s.addExtAuth(out, r, ea); err != nil {
			return err
		}
	}
	if j := r.Policies.JWT; j != nil && len(j.Providers) > 0 {
		if err := s.addJWT(out, r, j); err != nil {
			return err
		}
	}
	return nil
}
