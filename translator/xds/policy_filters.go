package xds

import (
	"fmt"

	routev3 "github.com/envoyproxy/go-control-plane/envoy/config/route/v3"
	jwtauthnv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/http/jwt_authn/v3"
	hcmv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/network/http_connection_manager/v3"
	tlsv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/transport_sockets/tls/v3"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/anypb"

	"github.com/egharness/egharness/translator/ir"
)

// Features are the version differences of the policy filters (from the profile).
type Features struct {
	// JWTStableNames (SP-06): content-derived provider and requirement names (v1.9), not
	// per-route ones (v1.8).
	JWTStableNames bool
	// LuaPolicyFilters (EEP-03): one listener filter per policy script (v1.9), not per-index
	// slot filters with per-route source code (v1.8).
	LuaPolicyFilters bool
	// RateLimitPerDomain (BTP-03): a route's global rate limits go in typedPerFilterConfig,
	// one RateLimitPerRoute per domain (v1.9); v1.8 put all the rules of a route with a
	// shared rule in the route action's rateLimits.
	RateLimitPerDomain bool
}

// httpFilterSet gathers the HTTP filters the policies of one connection manager's routes
// need: EG puts a filter on the listener once when any route uses it and configures it per
// route through typedPerFilterConfig.
type httpFilterSet struct {
	features Features
	jwt      *jwtauthnv3.JwtAuthentication
	cors     bool
	csrf     bool
	// lua are the Lua filters by name; luaSlots is the number of v1.8 slot filters.
	lua      map[string]*hcmv3.HttpFilter
	luaSlots int
	// named are the other listener filters by name (basic_auth per policy, api_key_auth,
	// ext_authz, oauth2, rbac...).
	named map[string]*hcmv3.HttpFilter
	// clusters are the clusters the filters call (remote JWKS), in order of first use.
	clusters []clusterPair
	// rateLimit is EG's rate limit service (nil: global rate limits are off); global are
	// the ratelimit filters the routes need, local whether one needs local_ratelimit.
	rateLimit *RateLimitService
	global    *globalRateLimitFilters
	local     bool
	// secrets are the SDS secrets the filters read (OAuth2 client and HMAC secrets).
	secrets []*tlsv3.Secret
}

// addSecret records a secret a filter reads, once.
func (s *httpFilterSet) addSecret(sec *tlsv3.Secret) {
	for _, have := range s.secrets {
		if have.GetName() == sec.GetName() {
			return
		}
	}
	s.secrets = append(s.secrets, sec)
}

func newHTTPFilterSet(f Features) *httpFilterSet {
	return &httpFilterSet{features: f, lua: map[string]*hcmv3.HttpFilter{}, named: map[string]*hcmv3.HttpFilter{}}
}

// addRoute configures the route for the filters its policies need and records those
// filters for the listener.
func (s *httpFilterSet) addRoute(out *routev3.Route, r *ir.HTTPRoute) error {
	if err := s.addDynamicResolver(out, r); err != nil {
		return err
	}
	if r.CORS != nil { // a CORS filter of the rule, before any SecurityPolicy's
		s.cors = true
		if err := setPerRoute(out, corsFilterName, corsPolicy(r.CORS)); err != nil {
			return err
		}
	}
	if sec := r.Policies.Security; sec != nil {
		if err := s.addSecurity(out, r); err != nil {
			return fmt.Errorf("SecurityPolicy %s/%s: %w", sec.Policy.Namespace, sec.Policy.Name, err)
		}
	}
	if ext := r.Policies.ExtensionSettings; ext != nil {
		if err := s.addExtension(out, r, ext); err != nil {
			policy := r.Policies.Extension.Policy
			return fmt.Errorf("EnvoyExtensionPolicy %s/%s: %w", policy.Namespace, policy.Name, err)
		}
	}
	if err := s.addBandwidthLimit(out, r.BandwidthLimit); err != nil {
		return err
	}
	if err := s.addTraffic(out, r); err != nil {
		return err
	}
	if c := r.CredentialInjection; c != nil {
		return s.addCredentialInjection(out, c)
	}
	return nil
}

// addRateLimits configures the route's local and global rate limits (BTP-02, BTP-03) and
// records the filters they need on its Gateway listener's connection manager.
func (s *httpFilterSet) addRateLimits(out *routev3.Route, r *ir.HTTPRoute, l *ir.HTTPListener) error {
	if err := s.addLocalRateLimit(out, r, l); err != nil {
		return err
	}
	return s.addGlobalRateLimits(out, r, l)
}

// filters are the listener's policy filters, unsorted (the connection manager sorts all).
func (s *httpFilterSet) filters() []*hcmv3.HttpFilter {
	var out []*hcmv3.HttpFilter
	if s.cors {
		out = append(out, corsFilter())
	}
	if s.csrf {
		out = append(out, csrfFilter())
	}
	if s.jwt != nil {
		out = append(out, typedFilter(jwtAuthnFilter, s.jwt))
	}
	for _, f := range s.lua {
		out = append(out, f)
	}
	for _, f := range s.named {
		out = append(out, f)
	}
	for i := 0; i < s.luaSlots; i++ {
		out = append(out, luaSlotFilter(i))
	}
	if s.local {
		out = append(out, localRateLimitHCMFilter())
	}
	out = append(out, s.globalFilters()...)
	return out
}

func typedFilter(name string, m proto.Message) *hcmv3.HttpFilter {
	return &hcmv3.HttpFilter{Name: name, ConfigType: &hcmv3.HttpFilter_TypedConfig{TypedConfig: mustAny(m)}}
}

// setPerRoute sets a filter's per-route config; a second config for one filter on one
// route is a translator bug, never user input.
func setPerRoute(out *routev3.Route, filter string, m proto.Message) error {
	if out.TypedPerFilterConfig == nil {
		out.TypedPerFilterConfig = map[string]*anypb.Any{}
	}
	if _, dup := out.TypedPerFilterConfig[filter]; dup {
		return fmt.Errorf("route %s already configures %s", out.Name, filter)
	}
	out.TypedPerFilterConfig[filter] = mustAny(m)
	return nil
}
