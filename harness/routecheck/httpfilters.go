package routecheck

import (
	"errors"
	"fmt"
	"strings"

	routev3 "github.com/envoyproxy/go-control-plane/envoy/config/route/v3"
	corsv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/http/cors/v3"
	csrfv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/http/csrf/v3"
	hcmv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/network/http_connection_manager/v3"
	matcherv3 "github.com/envoyproxy/go-control-plane/envoy/type/matcher/v3"
	typev3 "github.com/envoyproxy/go-control-plane/envoy/type/v3"
	"google.golang.org/protobuf/types/known/anypb"
)

// FilterEffect is one HTTP filter acting on a request. Kind is the filter's short name
// (its name without "envoy.filters.http." and without an instance suffix: jwt_authn, cors,
// csrf, lua...). Mode and Outcome say what the filter does where that is decidable offline:
//
//   - jwt_authn: Mode "required", "optional" (a missing token passes) or "failOpen" (a
//     missing or bad token passes); Outcome "missing", "valid" or "invalid". Tokens are
//     decoded, not verified: the signature and expiry are taken as good, the issuer and
//     audiences are checked. Claims copied to headers are added, and with
//     clear_route_cache (recomputeRoute) the request is routed again.
//   - csrf: Mode "enforced" (100%), "shadowed" (0% enforced, shadow on) or "partial";
//     Outcome "safe method", "valid origin" or "invalid origin".
//   - cors: Outcome "no origin", "origin allowed", "origin not allowed", "preflight".
//   - rbac: Mode is the name of the rule (or "default") that decided; Outcome "allowed"
//     or "denied" (403). CEL runs on request attributes; response attributes never match.
//   - basic_auth, api_key_auth: Outcome "missing", "valid" or "invalid" (401 unless valid).
//   - credential_injector: Outcome "injected" (the credential set in its header), "kept"
//     (the client sent that header and the filter does not overwrite) or "unknown
//     credential" (the table has no such secret: see UseSecrets).
//   - oauth2 (on routes that configure it: EG's listener filter holds none): Outcome
//     "pass through", "session", "redirect" (302 to the authorization endpoint), "callback",
//     "sign out" or "denied"; see evalOAuth2.
//   - health_check: Outcome "healthy" (answered 200) or "not a health check".
//   - custom_response: Outcome is the name of the matcher's action that replaced the
//     answer; see applyCustomResponse.
//   - fault: Outcome "delayed <duration>", "aborted <status>" (the answer), both, or
//     "no fault" when the request's random value falls outside the shares; see evalFault.
//   - geoip (a MaxMind provider): Mode is the address looked up, Outcome "located" and the
//     fields written (to the provider's headers, replacing the client's), or "not in the
//     stand-in databases"; the location is the stand-in geolocation's (harness/geoip),
//     which the real Envoy tier serves as the provider's databases. See evalGeoIP.
//   - others (lua, ext_authz, ext_proc, wasm...): present, not evaluated (their decision
//     is made by a service or module the checker does not run).
type FilterEffect struct {
	Name    string
	Kind    string
	Mode    string
	Outcome string
}

const httpFilterPrefix = "envoy.filters.http."

// httpFilterEntry is one HTTP filter of a connection manager.
type httpFilterEntry struct {
	name     string
	kind     string
	disabled bool
	cfg      *anypb.Any
}

func compileHTTPFilters(fs []*hcmv3.HttpFilter) []httpFilterEntry {
	out := make([]httpFilterEntry, 0, len(fs))
	for _, f := range fs {
		kind := filterKind(f.GetName())
		if f.GetTypedConfig().GetTypeUrl() == rbacFilterType {
			// Envoy runs a filter by its config's type, whatever its name: EG's dynamic
			// forward proxy loopback filter is an RBAC filter named
			// envoy.filters.http.rbac.dfp_loopback_deny.
			kind = "rbac"
		}
		out = append(out, httpFilterEntry{name: f.GetName(), kind: kind, disabled: f.GetDisabled(), cfg: f.GetTypedConfig()})
	}
	return out
}

const rbacFilterType = "type.googleapis.com/envoy.extensions.filters.http.rbac.v3.RBAC"

// filterKind is a filter's short name: envoy.filters.http.lua/envoyextensionpolicy/... → lua.
func filterKind(name string) string {
	k := strings.TrimPrefix(name, httpFilterPrefix)
	if i := strings.IndexByte(k, '/'); i >= 0 {
		k = k[:i]
	}
	return k
}

// perRouteOnly are the kinds that do nothing without a route's config in EG's output: the
// listener filter holds no policy of its own.
var perRouteOnly = map[string]bool{"jwt_authn": true, "cors": true, "csrf": true, "rbac": true, "oauth2": true,
	"credential_injector": true, "fault": true}

// runHTTPFilters passes the routed request through the connection manager's HTTP filters
// in order. A filter that answers ends the request there; jwt_authn may add claim headers
// and have the request routed again.
func runHTTPFilters(h *hcmConfig, table *routeTable, state *requestState, ans Answer) (Answer, error) {
	for _, f := range h.filters {
		if f.kind == "router" {
			break
		}
		per := state.matched.perFilter[f.name]
		if !filterEnabled(f, per) {
			continue
		}
		eff := FilterEffect{Name: f.name, Kind: f.kind}
		var (
			reply   int
			reroute bool
			err     error
			addHdrs map[string]string
			replyAt string // a reply's location
			acting  = per != nil || !perRouteOnly[f.kind]
		)
		if !acting {
			continue
		}
		switch f.kind {
		case "jwt_authn":
			reply, addHdrs, reroute, err = evalJWT(f, per, state, &eff)
		case "csrf":
			reply, err = evalCSRF(per, state, &eff)
		case "fault":
			reply, err = evalFault(per, state, &eff)
		case "health_check":
			reply, err = evalHealthCheck(f, state, &eff)
		case "custom_response":
			continue // an encoder filter: it acts on the answer (applyCustomResponse)
		case "cors":
			reply, err = evalCORS(per, state, &eff)
		case "basic_auth":
			reply, err = evalBasicAuth(f, per, state, &eff)
		case "credential_injector":
			addHdrs, err = evalCredentialInjector(f, state, &eff)
		case "api_key_auth":
			reply, err = evalAPIKeyAuth(f, per, state, &eff)
		case "geoip":
			addHdrs, err = evalGeoIP(f, h, state, &eff)
		case "oauth2":
			reply, replyAt, err = evalOAuth2(per, state, &eff)
		case "rbac":
			if per == nil {
				continue // EG's listener RBAC filter holds no policy
			}
			reply, err = evalRBAC(per, state, &eff)
		case "ratelimit", "local_ratelimit":
			// Rate limits count the request: the filter acts when the route's rate
			// limits select it, and answers 429 when the requests sent before it
			// (Request.After) used up a limit.
			var selected bool
			if f.kind == "ratelimit" {
				selected, reply, err = evalRateLimit(f, per, state, &eff)
			} else {
				selected, reply, err = evalLocalRateLimit(per, state, &eff)
			}
			if err == nil && !selected {
				continue
			}
		}
		if errors.Is(err, ErrUnsupported) {
			return ans, fmt.Errorf("filter %s on route %s: %w", f.name, state.matched.name, err)
		}
		if err != nil {
			return ans, fmt.Errorf("%w: filter %s on route %s: %v", ErrInvalidConfig, f.name, state.matched.name, err)
		}
		state.recordFilter(eff)
		if reply != 0 {
			// The filter answers: nothing is forwarded.
			ans = state.matchedAns
			ans.Status, ans.AnsweredBy, ans.Location = reply, f.kind, replyAt
			if state.req.forwarded != nil {
				*state.req.forwarded = nil
			}
			return ans, nil
		}
		if len(addHdrs) == 0 {
			continue
		}
		for k, v := range addHdrs {
			state.headers[k] = v
		}
		if reroute {
			// clear_route_cache: the request is matched again with the new headers; the
			// filters after this one see the new route.
			prev := state.matched
			state.matched = nil
			again, err := table.route(state, state.matchedAns.withoutRoute())
			if err != nil || state.matched == nil {
				return again, err
			}
			ans = again
			if state.matched != prev {
				return runFiltersAfter(h, table, state, ans, f.name)
			}
		} else {
			ans, err = state.matched.act.apply(state, state.matched, state.matchedAns)
			if err != nil {
				return ans, err
			}
		}
	}
	return ans, nil
}

// Detailed is an answer with the request as forwarded (nil when it is not) and the HTTP
// filters that acted on it, in order.
type Detailed struct {
	Answer
	Forwarded map[string]string
	Filters   []FilterEffect
}

// CheckDetailed is Check that also reports the forwarded request and the HTTP filters.
func (t *Table) CheckDetailed(req Request) (Detailed, error) {
	var d Detailed
	req.forwarded = &d.Forwarded
	req.filters = &d.Filters
	a, err := t.Check(req)
	d.Answer = a
	return d, err
}

func (state *requestState) recordFilter(e FilterEffect) {
	if state.req.filters != nil {
		*state.req.filters = append(*state.req.filters, e)
	}
}

// runFiltersAfter continues the filter chain after the named filter (after a reroute).
func runFiltersAfter(h *hcmConfig, table *routeTable, state *requestState, ans Answer, after string) (Answer, error) {
	for i, f := range h.filters {
		if f.name == after {
			rest := *h
			rest.filters = h.filters[i+1:]
			return runHTTPFilters(&rest, table, state, ans)
		}
	}
	return ans, nil
}

func (a Answer) withoutRoute() Answer {
	a.Route, a.Matched = "", false
	return a
}

// filterEnabled: a route's FilterConfig can turn a filter off or (when disabled on the
// listener) on; any other per-route config turns it on; otherwise the listener decides.
func filterEnabled(f httpFilterEntry, per *anypb.Any) bool {
	if per == nil {
		return !f.disabled
	}
	fc := &routev3.FilterConfig{}
	if per.MessageIs(fc) {
		if err := per.UnmarshalTo(fc); err == nil {
			return !fc.GetDisabled()
		}
	}
	return true
}

// fractionOf is a fractional percent as a share in [0, 1].
func fractionOf(fp *typev3.FractionalPercent) float64 {
	if fp == nil {
		return 0
	}
	den := 100.0
	switch fp.GetDenominator() {
	case typev3.FractionalPercent_TEN_THOUSAND:
		den = 10000
	case typev3.FractionalPercent_MILLION:
		den = 1000000
	}
	f := float64(fp.GetNumerator()) / den
	if f > 1 {
		f = 1
	}
	return f
}

var modifyMethods = map[string]bool{"POST": true, "PUT": true, "DELETE": true, "PATCH": true}

// evalCSRF follows Envoy's CSRF filter: on a mutating method the Origin (else the
// Referer) must name the request's host and port, or match an additional origin.
func evalCSRF(per *anypb.Any, state *requestState, eff *FilterEffect) (int, error) {
	p := &csrfv3.CsrfPolicy{}
	if err := per.UnmarshalTo(p); err != nil {
		return 0, err
	}
	enforced := fractionOf(p.GetFilterEnabled().GetDefaultValue())
	shadow := p.GetShadowEnabled() != nil && fractionOf(p.GetShadowEnabled().GetDefaultValue()) > 0
	switch {
	case enforced >= 1:
		eff.Mode = "enforced"
	case enforced <= 0 && shadow:
		eff.Mode = "shadowed"
	case enforced <= 0:
		eff.Mode = "off"
	default:
		eff.Mode = "partial"
	}
	if !modifyMethods[state.method] {
		eff.Outcome = "safe method"
		return 0, nil
	}
	source := hostAndPort(state.headers["origin"])
	if source == "" {
		source = hostAndPort(state.headers["referer"])
	}
	valid := source != "" && source == hostAndPort(state.host)
	for _, m := range p.GetAdditionalOrigins() {
		if !valid && source != "" {
			ok, err := stringMatches(m, source)
			if err != nil {
				return 0, err
			}
			valid = ok
		}
	}
	if valid {
		eff.Outcome = "valid origin"
		return 0, nil
	}
	eff.Outcome = "invalid origin"
	if eff.Mode == "enforced" {
		return 403, nil
	}
	return 0, nil
}

// hostAndPort strips the scheme and path of an origin or URL.
func hostAndPort(v string) string {
	if _, rest, ok := strings.Cut(v, "://"); ok {
		v = rest
	}
	if i := strings.IndexByte(v, '/'); i >= 0 {
		v = v[:i]
	}
	return v
}

// evalCORS follows Envoy's CORS filter with a route policy: a preflight (OPTIONS with
// Origin and Access-Control-Request-Method) is answered by the filter with 200, whether
// the origin is allowed or not unless non-matching preflights are forwarded; other
// requests pass.
func evalCORS(per *anypb.Any, state *requestState, eff *FilterEffect) (int, error) {
	p := &corsv3.CorsPolicy{}
	if err := per.UnmarshalTo(p); err != nil {
		return 0, err
	}
	origin, ok := state.headers["origin"]
	if !ok || origin == "" {
		eff.Outcome = "no origin"
		return 0, nil
	}
	allowed := false
	for _, m := range p.GetAllowOriginStringMatch() {
		ok, err := stringMatches(m, origin)
		if err != nil {
			return 0, err
		}
		if ok {
			allowed = true
			break
		}
	}
	preflight := state.method == "OPTIONS" && state.headers["access-control-request-method"] != ""
	switch {
	case preflight && (allowed || !p.GetForwardNotMatchingPreflights().GetValue()):
		eff.Outcome = "preflight"
		if !allowed {
			eff.Outcome = "preflight, origin not allowed"
		}
		return 200, nil
	case allowed:
		eff.Outcome = "origin allowed"
	default:
		eff.Outcome = "origin not allowed"
	}
	return 0, nil
}

func stringMatches(m *matcherv3.StringMatcher, v string) (bool, error) {
	if m.GetIgnoreCase() {
		v = strings.ToLower(v)
	}
	lower := func(s string) string {
		if m.GetIgnoreCase() {
			return strings.ToLower(s)
		}
		return s
	}
	switch p := m.GetMatchPattern().(type) {
	case *matcherv3.StringMatcher_Exact:
		return v == lower(p.Exact), nil
	case *matcherv3.StringMatcher_Prefix:
		return strings.HasPrefix(v, lower(p.Prefix)), nil
	case *matcherv3.StringMatcher_Suffix:
		return strings.HasSuffix(v, lower(p.Suffix)), nil
	case *matcherv3.StringMatcher_Contains:
		return strings.Contains(v, lower(p.Contains)), nil
	case *matcherv3.StringMatcher_SafeRegex:
		re, err := compileFullRegex(p.SafeRegex.GetRegex())
		if err != nil {
			return false, err
		}
		return re.MatchString(v), nil
	}
	return false, fmt.Errorf("unsupported string matcher %T", m.GetMatchPattern())
}
