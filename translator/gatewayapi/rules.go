package gatewayapi

import (
	"fmt"
	"regexp"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	gwapiv1 "sigs.k8s.io/gateway-api/apis/v1"

	"time"

	"github.com/egharness/egharness/translator/ir"
)

// A route's rules: each rule's matches, filters and backends resolved into IR routes, one
// per match (and per hostname), or a direct response when the rule is invalid.

// ruleCtx is one rule resolved: its IR routes (without hostname) and backend problems.
type ruleCtx struct {
	routes []*ir.HTTPRoute
	errors []refError
	// noEndpoints are the backendRefs to Services whose EndpointSlices list no ready
	// endpoint: valid references (BackendsAvailable, not ResolvedRefs), carrying weight
	// noEndpointWeight that serves nothing.
	noEndpoints      []refError
	noEndpointWeight uint32
	backendErrors    bool
	// failClosed: the rule is refused as a whole (a dynamic resolver where EG takes none):
	// its routes answer 500 whatever their backends.
	failClosed bool
	// filters is what the rule's filters, timeouts and retry decided (filters.go, ruleTimeouts).
	filters *ruleFilters
}

type refError struct{ reason, msg string }

// irRoutes copies the rule's routes for one hostname of a listener on listenerPort, naming
// them for the hostname.
func (resolvedRule *ruleCtx) irRoutes(host string, listenerPort uint32) []*ir.HTTPRoute {
	out := make([]*ir.HTTPRoute, 0, len(resolvedRule.routes))
	for _, tmpl := range resolvedRule.routes {
		r := *tmpl
		r.Hostname = host
		r.Name = fmt.Sprintf("%s/%s", tmpl.Name, strings.ReplaceAll(host, ".", "_"))
		if r.Redirect != nil && r.Redirect.Port == nil {
			redirect := *r.Redirect
			redirect.Port = new(redirectPort(redirect.Scheme, listenerPort))
			r.Redirect = &redirect
		}
		out = append(out, &r)
	}
	return out
}

// redirectPort is the port of a redirect that names none, as Gateway API asks and EG
// derives it per listener: the well-known port of the redirect's scheme (http 80, https
// 443), else the listener's own port (so a redirect from a listener on 8080 stays on
// 8080). The xDS leaves 80 and 443 out of the Location.
func redirectPort(scheme *string, listenerPort uint32) uint32 {
	if scheme != nil {
		switch strings.ToLower(*scheme) {
		case "http":
			return 80
		case "https":
			return 443
		}
	}
	return listenerPort
}

func (translation *routeTranslator) resolveHTTPRules(r *gwapiv1.HTTPRoute) []*ruleCtx {
	out := make([]*ruleCtx, 0, len(r.Spec.Rules))
	prefix := fmt.Sprintf("httproute/%s/%s/rule/", r.Namespace, r.Name)
	for i, rule := range r.Spec.Rules {
		routes, extensionMatches := translation.startRule("HTTPRoute", r, r, rule,
			fmt.Sprintf("%s%d", prefix, i), i, false)
		matches := rule.Matches
		if len(matches) == 0 {
			matches = []gwapiv1.HTTPRouteMatch{{}} // the CRD default: PathPrefix "/"
		}
		addMatchRoutes(routes, matches, extensionMatches, applyMatch)
		routes.resolvedRule.dropOnBadRegex(i)
		out = append(out, routes.resolvedRule)
	}
	return out
}

// startRule does what an HTTPRoute rule and a GRPCRoute rule (as grpcRuleAsHTTP makes it)
// share before their matches: the rule's backendRefs resolved into the destination named
// clusterName (HTTP/2 to the backends when http2), its filters, the dynamic resolver check,
// and the matches its HTTPRouteFilter extensionRefs add. The rule's routes, which object
// (the route as the user wrote it) names, are then made with the ruleRoutes it returns.
func (translation *routeTranslator) startRule(kind string, object routeObject, r *gwapiv1.HTTPRoute,
	rule gwapiv1.HTTPRouteRule, clusterName string, ruleIdx int, http2 bool) (*ruleRoutes, [][]*ir.StringMatch) {
	refs := make([]gwapiv1.BackendRef, len(rule.BackendRefs))
	for k := range rule.BackendRefs {
		refs[k] = rule.BackendRefs[k].BackendRef
	}
	resolvedRule, dest := translation.resolveDestination(kind, r.Namespace, refs, clusterName, ruleIdx)
	if http2 {
		dest.HTTP2 = true
	}
	filters := translation.ruleFilters(resolvedRule, dest, r, ruleIdx, rule)
	translation.checkDynamicResolverRule(resolvedRule, filters, r.Namespace, refs, ruleIdx)
	var extensionRefs []*gwapiv1.LocalObjectReference
	for _, f := range rule.Filters {
		extensionRefs = append(extensionRefs, f.ExtensionRef)
	}
	routes := &ruleRoutes{translation: translation, object: object, prefix: clusterName, ruleIdx: ruleIdx,
		ruleName: ruleName(rule.Name), resolvedRule: resolvedRule, dest: dest, backendRefs: len(rule.BackendRefs),
		filters: filters}
	return routes, translation.filterMatches(r.Namespace, extensionRefs)
}

// resolveGRPCRules maps GRPCRoute rules onto HTTP/2 routes: service and method become the
// :path ("/<service>/<method>"), as EG does (GR-01). A rule without matches takes every
// request and is named match/-1.
func (translation *routeTranslator) resolveGRPCRules(r *gwapiv1.GRPCRoute) []*ruleCtx {
	out := make([]*ruleCtx, 0, len(r.Spec.Rules))
	prefix := fmt.Sprintf("grpcroute/%s/%s/rule/", r.Namespace, r.Name)
	for i, rule := range r.Spec.Rules {
		hr, hrule := grpcRuleAsHTTP(r, rule)
		routes, extensionMatches := translation.startRule("GRPCRoute", r, hr, hrule,
			fmt.Sprintf("%s%d", prefix, i), i, true)
		if len(rule.Matches) == 0 && len(extensionMatches) == 0 {
			routes.add(-1, nil, func(route *ir.HTTPRoute) { route.PathMatch = &ir.StringMatch{Prefix: ptr("/")} })
		}
		matches := rule.Matches
		if len(matches) == 0 {
			matches = []gwapiv1.GRPCRouteMatch{{}} // filter matches alone
		}
		if len(rule.Matches) > 0 || len(extensionMatches) > 0 {
			addMatchRoutes(routes, matches, extensionMatches, applyGRPCMatch)
		}
		routes.resolvedRule.dropOnBadRegex(i)
		out = append(out, routes.resolvedRule)
	}
	return out
}

func ptr[T any](v T) *T { return &v }

// ruleRoutes is what the IR routes of one HTTPRoute or GRPCRoute rule share: the route
// object they come from, the name prefix <kind>/<namespace>/<name>/rule/<index> (the name of
// the rule's cluster too), the rule's name, and its resolved backends and filters.
type ruleRoutes struct {
	translation  *routeTranslator
	object       routeObject
	prefix       string
	ruleIdx      int
	ruleName     string
	resolvedRule *ruleCtx
	dest         *ir.Destination
	backendRefs  int
	filters      *ruleFilters
}

// add makes the rule's route for match index matchIdx (-1: a GRPCRoute rule without
// matches), named <prefix>/match/<matchIdx>: its matchers set by setMatch, the cookies of a
// filter match, the rule's action and its filters.
func (routes *ruleRoutes) add(matchIdx int, cookies []*ir.StringMatch, setMatch func(*ir.HTTPRoute)) {
	route := routes.translation.newRoute(routes.object, fmt.Sprintf("%s/match/%d", routes.prefix, matchIdx),
		routes.ruleIdx, matchIdx)
	route.Source.RuleName = routes.ruleName
	setMatch(route)
	route.Cookies = cookies
	routes.resolvedRule.finish(route, routes.dest, routes.backendRefs)
	routes.filters.apply(route)
}

// addMatchRoutes adds a route for each of a rule's matches paired with each of its filter
// matches (withFilterMatches), the route match set by applyMatch.
func addMatchRoutes[M any](routes *ruleRoutes, matches []M, extensionMatches [][]*ir.StringMatch,
	applyMatch func(*ir.HTTPRoute, M)) {
	for _, c := range withFilterMatches(len(matches), extensionMatches) {
		routes.add(c.index, c.cookies, func(route *ir.HTTPRoute) { applyMatch(route, matches[c.match]) })
	}
}

// dropOnBadRegex drops the rule when one of its matchers is a regular expression Envoy's
// RE2 would refuse: the rule gets no route and an Accepted problem (EG's wording), which
// makes the route Accepted=False when every rule is dropped, PartiallyInvalid otherwise.
func (resolvedRule *ruleCtx) dropOnBadRegex(ruleIdx int) {
	for _, r := range resolvedRule.routes {
		var all []*ir.StringMatch
		all = append(all, r.PathMatch)
		all = append(all, r.Headers...)
		all = append(all, r.QueryParams...)
		all = append(all, r.Cookies...)
		for _, m := range all {
			if m == nil || m.SafeRegex == nil {
				continue
			}
			if _, err := regexp.Compile(*m.SafeRegex); err != nil {
				if resolvedRule.filters == nil {
					resolvedRule.filters = &ruleFilters{}
				}
				resolvedRule.filters.dropped = true
				resolvedRule.filters.errs = append(resolvedRule.filters.errs,
					filterErr{typ: errAccepted, reason: "UnsupportedValue",
						msg: fmt.Sprintf("failed to process route rule %d: regex %q is invalid: %v", ruleIdx, *m.SafeRegex, err)})
				resolvedRule.routes = nil
				return
			}
		}
	}
}

// matchCombo is one (route match, filter match) pair and the index EG names it by.
type matchCombo struct {
	index, match int
	cookies      []*ir.StringMatch
}

// withFilterMatches pairs each of n route matches with each filter match set, in EG's
// order; without filter matches it is the route matches as they are.
func withFilterMatches(n int, extensionMatches [][]*ir.StringMatch) []matchCombo {
	var out []matchCombo
	for j := 0; j < n; j++ {
		if len(extensionMatches) == 0 {
			out = append(out, matchCombo{index: j, match: j})
			continue
		}
		for k, fm := range extensionMatches {
			out = append(out, matchCombo{index: j*len(extensionMatches) + k, match: j, cookies: fm})
		}
	}
	return out
}

func ruleName(n *gwapiv1.SectionName) string {
	if n == nil {
		return ""
	}
	return string(*n)
}

// routeObject is the HTTPRoute or GRPCRoute an IR route comes from.
type routeObject interface {
	GetNamespace() string
	GetName() string
	GetCreationTimestamp() metav1.Time
}

func (translation *routeTranslator) newRoute(o routeObject, name string, rule, match int) *ir.HTTPRoute {
	kind := "HTTPRoute"
	if _, ok := o.(*gwapiv1.GRPCRoute); ok {
		kind = "GRPCRoute"
	}
	return &ir.HTTPRoute{
		Name: name,
		Source: ir.Source{Kind: kind, Namespace: o.GetNamespace(), Name: o.GetName(), Rule: rule, Match: match,
			Created: creation(o)},
		IsHTTP2: kind == "GRPCRoute",
	}
}

// finish sets the route's action: the destination, or a 500 when the rule has no backend or
// no valid one (RT-12), or a 503 when its only valid backends have no ready endpoint.
func (resolvedRule *ruleCtx) finish(route *ir.HTTPRoute, dest *ir.Destination, backendRefs int) {
	valid, _ := dest.ValidWeight()
	serving := valid - resolvedRule.noEndpointWeight
	switch {
	case resolvedRule.failClosed || backendRefs == 0 || serving == 0 &&
		(resolvedRule.backendErrors || resolvedRule.noEndpointWeight == 0):
		route.DirectResponse = &ir.DirectResponse{Status: 500}
	case serving == 0:
		route.DirectResponse = &ir.DirectResponse{Status: 503}
	default:
		route.Destination = dest
	}
	resolvedRule.routes = append(resolvedRule.routes, route)
}

// ruleTimeouts maps timeouts and retry: timeouts.request is the route timeout unless
// timeouts.backendRequest is set without a retry, which then replaces it (even "0s"); with
// a retry, backendRequest is the per-try timeout (with or without backoff).
func ruleTimeouts(rule gwapiv1.HTTPRouteRule) (*time.Duration, *ir.Retry) {
	var timeout *time.Duration
	parse := func(d gwapiv1.Duration) time.Duration {
		v, err := time.ParseDuration(string(d))
		if err != nil {
			v = 15 * time.Second // EG's fallback; the CRD pattern keeps it unreachable
		}
		return v
	}
	if t := rule.Timeouts; t != nil {
		if t.Request != nil {
			timeout = ptr(parse(*t.Request))
		}
		if t.BackendRequest != nil && rule.Retry == nil {
			timeout = ptr(parse(*t.BackendRequest))
		}
	}
	rr := rule.Retry
	if rr == nil {
		return timeout, nil
	}
	out := &ir.Retry{}
	if rr.Attempts != nil {
		out.NumRetries = ptr(uint32(*rr.Attempts))
	}
	if rr.Backoff != nil {
		if d, err := time.ParseDuration(string(*rr.Backoff)); err == nil {
			out.BackOff = &d
		}
	}
	if t := rule.Timeouts; t != nil && t.BackendRequest != nil {
		if d, err := time.ParseDuration(string(*t.BackendRequest)); err == nil {
			out.PerTryTimeout = &d
		}
	}
	for _, c := range rr.Codes {
		out.Codes = append(out.Codes, uint32(c))
	}
	return timeout, out
}

// grpcRuleAsHTTP gives a GRPCRoute rule's filters and backendRefs the shape of an HTTPRoute
// rule, so that both go through one filter processing (EG shares it too). The filter types
// a GRPCRoute allows (header modifiers, mirror, extensionRef) have the same fields.
func grpcRuleAsHTTP(r *gwapiv1.GRPCRoute, rule gwapiv1.GRPCRouteRule) (*gwapiv1.HTTPRoute, gwapiv1.HTTPRouteRule) {
	conv := func(fs []gwapiv1.GRPCRouteFilter) []gwapiv1.HTTPRouteFilter {
		out := make([]gwapiv1.HTTPRouteFilter, 0, len(fs))
		for _, f := range fs {
			out = append(out, gwapiv1.HTTPRouteFilter{
				Type:                   gwapiv1.HTTPRouteFilterType(f.Type),
				RequestHeaderModifier:  f.RequestHeaderModifier,
				ResponseHeaderModifier: f.ResponseHeaderModifier,
				RequestMirror:          f.RequestMirror,
				ExtensionRef:           f.ExtensionRef,
			})
		}
		return out
	}
	hr := &gwapiv1.HTTPRoute{TypeMeta: r.TypeMeta, ObjectMeta: r.ObjectMeta}
	hr.Kind = "GRPCRoute"
	hrule := gwapiv1.HTTPRouteRule{Name: rule.Name, Filters: conv(rule.Filters)}
	for _, backendRef := range rule.BackendRefs {
		hrule.BackendRefs = append(hrule.BackendRefs,
			gwapiv1.HTTPBackendRef{BackendRef: backendRef.BackendRef, Filters: conv(backendRef.Filters)})
	}
	return hr, hrule
}
