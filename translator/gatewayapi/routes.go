package gatewayapi

import (
	"fmt"
	"regexp"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	gwapiv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/egharness/egharness/translator/conditions"
	"github.com/egharness/egharness/translator/ir"
	"github.com/egharness/egharness/translator/refgrant"
	"github.com/egharness/egharness/translator/resource"
	"github.com/egharness/egharness/translator/result"
)

type routeTranslator struct {
	t        Translator
	ix       *index
	gateways []*gatewayCtx
	st       *statusBook
	nsLabels map[string]*nsLabels
	// attachments records, per IR listener, which parent entry of which route put routes
	// there: the overlap check writes its condition on exactly those entries.
	attachments []attachment
	// filterWarnings name filters the reference translator leaves out (filters.go).
	filterWarnings []string
	// btls records which route parents each BackendTLSPolicy served (backendtls.go);
	// curAncestors are the parents of the route being resolved.
	btls         btlsState
	curAncestors []result.ParentRef
	// policyBackend is the policy whose own backend is being resolved (ext_authz, OIDC,
	// remote JWKS, ext_proc): a BackendTLSPolicy is recorded for it rather than for
	// curAncestors. btlsPolicyUses: some BackendTLSPolicy was recorded for a policy.
	policyBackend  *result.ParentRef
	btlsPolicyUses bool
	// telemetryGateway is the Gateway whose telemetry backends are being resolved: its
	// client TLS settings (spec.tls.backend, else its EnvoyProxy's backendTLS) apply to
	// them, while the BackendTLSPolicy's ancestor is the EnvoyProxy (telemetry.go).
	telemetryGateway *gatewayCtx
}

type attachment struct {
	listener *listenerCtx
	route    resource.Ref
	parent   result.ParentRef
}

func (rt *routeTranslator) namespaceLabels(ns string) *nsLabels {
	if rt.nsLabels == nil {
		rt.nsLabels = map[string]*nsLabels{}
	}
	if l, ok := rt.nsLabels[ns]; ok {
		return l
	}
	set := labels.Set{corev1.LabelMetadataName: ns} // the API server sets this label on every namespace
	if n := rt.ix.namespaces[ns]; n != nil {
		for k, v := range n.Labels {
			set[k] = v
		}
	}
	l := &nsLabels{labels: set}
	rt.nsLabels[ns] = l
	return l
}

func (rt *routeTranslator) findGateway(ns, name string) *gatewayCtx {
	for _, g := range rt.gateways {
		if g.gw.Namespace == ns && g.gw.Name == name {
			return g
		}
	}
	return nil
}

// routeInput is what attachment needs of any xRoute kind that binds to HTTP listeners.
type routeInput struct {
	ref        resource.Ref
	parentRefs []gwapiv1.ParentReference
	hostnames  []string
	// rules resolves the rule set once; only routes with a parent of ours need it.
	rules func() []*ruleCtx
}

func (rt *routeTranslator) processHTTPRoute(r *gwapiv1.HTTPRoute) {
	rt.processRoute(routeInput{
		ref:        resource.Ref{Kind: "HTTPRoute", Namespace: r.Namespace, Name: r.Name},
		parentRefs: r.Spec.ParentRefs,
		hostnames:  hostnameStrings(r.Spec.Hostnames),
		rules:      func() []*ruleCtx { return rt.resolveHTTPRules(r) },
	})
}

func (rt *routeTranslator) processGRPCRoute(r *gwapiv1.GRPCRoute) {
	rt.processRoute(routeInput{
		ref:        resource.Ref{Kind: "GRPCRoute", Namespace: r.Namespace, Name: r.Name},
		parentRefs: r.Spec.ParentRefs,
		hostnames:  hostnameStrings(r.Spec.Hostnames),
		rules:      func() []*ruleCtx { return rt.resolveGRPCRules(r) },
	})
}

func (rt *routeTranslator) processRoute(in routeInput) {
	var rules []*ruleCtx
	rt.eachParent(in.ref, in.parentRefs, func(g *gatewayCtx, pr gwapiv1.ParentReference, ps *result.ParentStatus) {
		if rules == nil {
			rt.curAncestors = rt.ancestorsOf(in.ref, in.parentRefs)
			rules = in.rules()
		}
		rt.attach(in, g, pr, ps, rules)
	})
}

// eachParent calls fn for each parentRef that names a Gateway of ours, with its status
// entry (one per parentRef, port included). Other parents get no status from EG.
func (rt *routeTranslator) eachParent(ref resource.Ref, prs []gwapiv1.ParentReference, fn func(*gatewayCtx, gwapiv1.ParentReference, *result.ParentStatus)) {
	for _, pr := range prs {
		if pr.Group != nil && string(*pr.Group) != gwapiv1.GroupName {
			continue
		}
		kind := "Gateway"
		if pr.Kind != nil {
			kind = string(*pr.Kind)
		}
		ns := ref.Namespace
		if pr.Namespace != nil {
			ns = string(*pr.Namespace)
		}
		var g *gatewayCtx
		switch kind {
		case "Gateway":
			g = rt.findGateway(ns, string(pr.Name))
		case "ListenerSet":
			g, _ = rt.findListenerSet(ns, string(pr.Name))
		}
		if g == nil {
			continue // not a parent of ours: EG writes no status for it
		}
		pref := result.ParentRef{Kind: kind, Namespace: ns, Name: string(pr.Name)}
		if pr.SectionName != nil {
			pref.SectionName = string(*pr.SectionName)
		}
		if pr.Port != nil {
			pref.Port = int32(*pr.Port)
		}
		fn(g, pr, rt.st.parent(ref, pref))
	}
}

// selectListeners returns the Gateway's listeners the parentRef names (by sectionName and
// port) and, of those, the ones that admit the route's kind and namespace.
func (rt *routeTranslator) selectListeners(g *gatewayCtx, pr gwapiv1.ParentReference, ref resource.Ref) (selected, allowed []*listenerCtx) {
	// A Gateway parent selects the Gateway's own listeners; a ListenerSet parent, the set's.
	var set *gwapiv1.ListenerSet
	if pr.Kind != nil && string(*pr.Kind) == "ListenerSet" {
		ns := ref.Namespace
		if pr.Namespace != nil {
			ns = string(*pr.Namespace)
		}
		_, set = rt.findListenerSet(ns, string(pr.Name))
	}
	for _, l := range g.listeners {
		if l.listenerSet != set {
			continue
		}
		if pr.SectionName != nil && string(*pr.SectionName) != string(l.spec.Name) {
			continue
		}
		if pr.Port != nil && *pr.Port != l.spec.Port {
			continue
		}
		selected = append(selected, l)
	}
	labels := map[string]*nsLabels{ref.Namespace: rt.namespaceLabels(ref.Namespace)}
	for _, l := range selected {
		if l.allows(ref.Kind, ref.Namespace, labels) {
			allowed = append(allowed, l)
		}
	}
	return selected, allowed
}

// attach binds the route to the listeners its parentRef selects and writes its conditions.
func (rt *routeTranslator) attach(in routeInput, g *gatewayCtx, pr gwapiv1.ParentReference, ps *result.ParentStatus, rules []*ruleCtx) {
	selected, allowed := rt.selectListeners(g, pr, in.ref)
	if len(selected) == 0 {
		ps.Conditions = conditions.Set(ps.Conditions, conditions.New("Accepted", "False", "NoMatchingParent", msgNoMatchingParent))
		rt.resolvedRefs(ps, rules)
		return
	}
	if len(allowed) == 0 {
		ps.Conditions = conditions.Set(ps.Conditions, conditions.New("Accepted", "False", "NotAllowedByListeners", msgNotAllowed))
		rt.resolvedRefs(ps, rules)
		return
	}
	// A GRPCRoute none of whose rules is accepted stops here: EG attaches it to no listener
	// (attachedRoutes stays 0, nothing is programmed) and writes only its rule problems.
	// An HTTPRoute in that state is still counted on its listeners (EG's testdata:
	// grpcroute-with-direct-response-2xx-invalid against httproute-with-conflicting-filters).
	if in.ref.Kind == "GRPCRoute" && allRulesDropped(rules) {
		rt.resolvedRefs(ps, rules)
		return
	}
	hostsFound := false
	key := in.ref.String()
	for _, l := range allowed {
		hosts := computeHosts(in.hostnames, l)
		if len(hosts) == 0 {
			continue
		}
		hostsFound = true
		l.attached[key] = true
		if l.ir == nil {
			continue // attached, but the listener is not programmed
		}
		rt.attachments = append(rt.attachments, attachment{listener: l, route: in.ref, parent: ps.Ref})
		if in.ref.Kind == "GRPCRoute" {
			l.ir.GRPC = true
		}
		for _, h := range hosts {
			for _, rc := range rules {
				l.ir.Routes = append(l.ir.Routes, rc.irRoutes(h, uint32(l.spec.Port))...)
			}
		}
	}
	if !hostsFound {
		ps.Conditions = conditions.Set(ps.Conditions, conditions.New("Accepted", "False", "NoMatchingListenerHostname",
			fmt.Sprintf(msgNoHostnameFormat, in.ref.Kind)))
		rt.resolvedRefs(ps, rules)
		return
	}
	ps.Conditions = conditions.Set(ps.Conditions, conditions.New("Accepted", "True", "Accepted", msgRouteAccepted))
	rt.resolvedRefs(ps, rules)
}

// resolvedRefs writes ResolvedRefs from the rules' backend problems.
func (rt *routeTranslator) resolvedRefs(ps *result.ParentStatus, rules []*ruleCtx) {
	filterConditions(ps, rules)
	var errs refErrors
	for _, rc := range rules {
		for _, e := range rc.errors {
			errs.add(e.reason, e.msg)
		}
	}
	if errs.empty() {
		ps.Conditions = conditions.Set(ps.Conditions, conditions.New("ResolvedRefs", "True", "ResolvedRefs", msgRouteResolvedRefs))
		return
	}
	ps.Conditions = conditions.Set(ps.Conditions, errs.condition("ResolvedRefs"))
}

func hostnameStrings(hs []gwapiv1.Hostname) []string {
	out := make([]string, 0, len(hs))
	for _, h := range hs {
		out = append(out, string(h))
	}
	return out
}

// computeHosts intersects the route's hostnames with the listener's (RT-03). A route
// hostname that is exactly another listener's hostname on the same port is left to that
// listener. The result is sorted.
func computeHosts(routeHosts []string, l *listenerCtx) []string {
	lh := l.hostname()
	if len(routeHosts) == 0 {
		if lh != "" {
			return []string{lh}
		}
		return []string{"*"}
	}
	set := map[string]bool{}
	for _, rh := range routeHosts {
		switch {
		case lh == "" || lh == rh:
			set[rh] = true
		case strings.HasPrefix(lh, "*") && strings.HasPrefix(rh, "*"):
			if wildcardCovers(rh, lh) {
				set[lh] = true
			}
			if wildcardCovers(lh, rh) {
				set[rh] = true
			}
		case strings.HasPrefix(lh, "*"):
			if wildcardCovers(lh, rh) {
				set[rh] = true
			}
		case strings.HasPrefix(rh, "*"):
			if wildcardCovers(rh, lh) {
				set[lh] = true
			}
		}
	}
	for _, other := range l.gateway.listeners {
		if other == l || other.conflictLoser || other.spec.Port != l.spec.Port || other.spec.Hostname == nil {
			continue
		}
		delete(set, other.hostname())
	}
	out := make([]string, 0, len(set))
	for h := range set {
		out = append(out, h)
	}
	sort.Strings(out)
	return out
}

// wildcardCovers reports whether the wildcard pattern (e.g. *.example.com) matches host,
// itself possibly a wildcard. At least one label must stand in for the "*":
// *.example.com matches a.example.com and a.b.example.com, never example.com.
func wildcardCovers(pattern, host string) bool {
	suffix := strings.TrimPrefix(pattern, "*")
	h := strings.TrimPrefix(host, "*")
	if !strings.HasSuffix(h, suffix) {
		return false
	}
	return len(strings.TrimSuffix(h, suffix)) > 0
}

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
	// filters is what the rule's filters, timeouts and retry decided (filters.go).
	filters *ruleFilters
}

type refError struct{ reason, msg string }

// irRoutes copies the rule's routes for one hostname of a listener on listenerPort, naming
// them for the hostname.
func (rc *ruleCtx) irRoutes(host string, listenerPort uint32) []*ir.HTTPRoute {
	out := make([]*ir.HTTPRoute, 0, len(rc.routes))
	for _, tmpl := range rc.routes {
		r := *tmpl
		r.Hostname = host
		r.Name = fmt.Sprintf("%s/%s", tmpl.Name, strings.ReplaceAll(host, ".", "_"))
		if r.Redirect != nil && r.Redirect.Port == nil {
			rd := *r.Redirect
			rd.Port = new(redirectPort(rd.Scheme, listenerPort))
			r.Redirect = &rd
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

func (rt *routeTranslator) resolveHTTPRules(r *gwapiv1.HTTPRoute) []*ruleCtx {
	out := make([]*ruleCtx, 0, len(r.Spec.Rules))
	prefix := fmt.Sprintf("httproute/%s/%s/rule/", r.Namespace, r.Name)
	for i, rule := range r.Spec.Rules {
		refs := make([]gwapiv1.BackendRef, len(rule.BackendRefs))
		for k := range rule.BackendRefs {
			refs[k] = rule.BackendRefs[k].BackendRef
		}
		rc, dest := rt.resolveDestination("HTTPRoute", r.Namespace, refs, fmt.Sprintf("%s%d", prefix, i), i)
		ff := rt.ruleFilters(rc, dest, r, i, rule)
		rt.checkDynamicResolverRule(rc, ff, r.Namespace, refs, i)
		matches := rule.Matches
		if len(matches) == 0 {
			matches = []gwapiv1.HTTPRouteMatch{{}} // the CRD default: PathPrefix "/"
		}
		var refs2 []*gwapiv1.LocalObjectReference
		for _, f := range rule.Filters {
			refs2 = append(refs2, f.ExtensionRef)
		}
		combos := withFilterMatches(len(matches), rt.filterMatches(r.Namespace, refs2))
		for _, c := range combos {
			route := rt.newRoute(r, fmt.Sprintf("%s%d/match/%d", prefix, i, c.index), i, c.index)
			route.Source.RuleName = ruleName(rule.Name)
			applyMatch(route, matches[c.match])
			route.Cookies = c.cookies
			rc.finish(route, dest, len(rule.BackendRefs))
			ff.apply(route)
		}
		rc.dropOnBadRegex(i)
		out = append(out, rc)
	}
	return out
}

// resolveGRPCRules maps GRPCRoute rules onto HTTP/2 routes: service and method become the
// :path ("/<service>/<method>"), as EG does (GR-01). A rule without matches takes every
// request and is named match/-1.
func (rt *routeTranslator) resolveGRPCRules(r *gwapiv1.GRPCRoute) []*ruleCtx {
	out := make([]*ruleCtx, 0, len(r.Spec.Rules))
	prefix := fmt.Sprintf("grpcroute/%s/%s/rule/", r.Namespace, r.Name)
	for i, rule := range r.Spec.Rules {
		refs := make([]gwapiv1.BackendRef, len(rule.BackendRefs))
		for k := range rule.BackendRefs {
			refs[k] = rule.BackendRefs[k].BackendRef
		}
		rc, dest := rt.resolveDestination("GRPCRoute", r.Namespace, refs, fmt.Sprintf("%s%d", prefix, i), i)
		dest.HTTP2 = true
		hr, hrule := grpcRuleAsHTTP(r, rule)
		ff := rt.ruleFilters(rc, dest, hr, i, hrule)
		rt.checkDynamicResolverRule(rc, ff, r.Namespace, refs, i)
		var refs2 []*gwapiv1.LocalObjectReference
		for _, f := range rule.Filters {
			refs2 = append(refs2, f.ExtensionRef)
		}
		fms := rt.filterMatches(r.Namespace, refs2)
		if len(rule.Matches) == 0 && len(fms) == 0 {
			route := rt.newRoute(r, fmt.Sprintf("%s%d/match/-1", prefix, i), i, -1)
			route.Source.RuleName = ruleName(rule.Name)
			route.PathMatch = &ir.StringMatch{Prefix: ptr("/")}
			rc.finish(route, dest, len(rule.BackendRefs))
			ff.apply(route)
		}
		matches := rule.Matches
		if len(matches) == 0 {
			matches = []gwapiv1.GRPCRouteMatch{{}} // filter matches alone
		}
		if len(rule.Matches) > 0 || len(fms) > 0 {
			for _, c := range withFilterMatches(len(matches), fms) {
				route := rt.newRoute(r, fmt.Sprintf("%s%d/match/%d", prefix, i, c.index), i, c.index)
				route.Source.RuleName = ruleName(rule.Name)
				applyGRPCMatch(route, matches[c.match])
				route.Cookies = c.cookies
				rc.finish(route, dest, len(rule.BackendRefs))
				ff.apply(route)
			}
		}
		rc.dropOnBadRegex(i)
		out = append(out, rc)
	}
	return out
}

func ptr[T any](v T) *T { return &v }

// dropOnBadRegex drops the rule when one of its matchers is a regular expression Envoy's
// RE2 would refuse: the rule gets no route and an Accepted problem (EG's wording), which
// makes the route Accepted=False when every rule is dropped, PartiallyInvalid otherwise.
func (rc *ruleCtx) dropOnBadRegex(ruleIdx int) {
	for _, r := range rc.routes {
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
				if rc.filters == nil {
					rc.filters = &ruleFilters{}
				}
				rc.filters.dropped = true
				rc.filters.errs = append(rc.filters.errs, filterErr{typ: errAccepted, reason: "UnsupportedValue",
					msg: fmt.Sprintf("failed to process route rule %d: regex %q is invalid: %v", ruleIdx, *m.SafeRegex, err)})
				rc.routes = nil
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
func withFilterMatches(n int, fms [][]*ir.StringMatch) []matchCombo {
	var out []matchCombo
	for j := 0; j < n; j++ {
		if len(fms) == 0 {
			out = append(out, matchCombo{index: j, match: j})
			continue
		}
		for k, fm := range fms {
			out = append(out, matchCombo{index: j*len(fms) + k, match: j, cookies: fm})
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

func (rt *routeTranslator) newRoute(o interface {
	GetNamespace() string
	GetName() string
	GetCreationTimestamp() metav1.Time
}, name string, rule, match int) *ir.HTTPRoute {
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

// resolveDestination resolves a rule's backendRefs once for all its matches.
func (rt *routeTranslator) resolveDestination(kind, ns string, refs []gwapiv1.BackendRef, clusterName string, ruleIdx int) (*ruleCtx, *ir.Destination) {
	rc := &ruleCtx{}
	dest := &ir.Destination{Name: clusterName}
	for k, br := range refs {
		b, err := rt.resolveBackend(kind, ns, br, clusterName, k)
		if err != nil {
			rc.errors = append(rc.errors, refError{reason: err.reason, msg: fmt.Sprintf("failed to process route rule %d backendRef %d: %s", ruleIdx, k, err.msg)})
			rc.backendErrors = true
		}
		if err == nil && (b.Kind == "Service" || b.Kind == "ServiceImport") && len(b.Endpoints) == 0 {
			// EndpointSlices that list no ready endpoint (a scaled-down Deployment): the
			// reference is fine, the backend serves nothing.
			rc.noEndpoints = append(rc.noEndpoints, refError{reason: "EndpointsNotFound",
				msg: fmt.Sprintf("failed to find endpoints: no ready endpoints for the related %s %s/%s", b.Kind, b.Namespace, b.ServiceName)})
			if b.Weight != 0 {
				rc.noEndpointWeight += b.Weight
			}
		}
		if b.Weight == 0 {
			continue // a zero weight takes no traffic and makes no cluster
		}
		dest.HTTP2 = dest.HTTP2 || b.HTTP2
		dest.Settings = append(dest.Settings, b)
	}
	dest.BackendLB = destinationLB(dest)
	return rc, dest
}

// finish sets the route's action: the destination, or a 500 when the rule has no backend or
// no valid one (RT-12), or a 503 when its only valid backends have no ready endpoint.
func (rc *ruleCtx) finish(route *ir.HTTPRoute, dest *ir.Destination, backendRefs int) {
	valid, _ := dest.ValidWeight()
	serving := valid - rc.noEndpointWeight
	switch {
	case rc.failClosed || backendRefs == 0 || serving == 0 && (rc.backendErrors || rc.noEndpointWeight == 0):
		route.DirectResponse = &ir.DirectResponse{Status: 500}
	case serving == 0:
		route.DirectResponse = &ir.DirectResponse{Status: 503}
	default:
		route.Destination = dest
	}
	rc.routes = append(rc.routes, route)
}

// applyGRPCMatch turns a GRPCRoute match into IR matchers.
func applyGRPCMatch(route *ir.HTTPRoute, m gwapiv1.GRPCRouteMatch) {
	for _, h := range m.Headers {
		v := h.Value
		sm := &ir.StringMatch{Name: string(h.Name)}
		if h.Type != nil && *h.Type == gwapiv1.GRPCHeaderMatchRegularExpression {
			sm.SafeRegex = &v
		} else {
			sm.Exact = &v
		}
		route.Headers = append(route.Headers, sm)
	}
	route.PathMatch = &ir.StringMatch{Prefix: ptr("/")}
	mm := m.Method
	if mm == nil {
		return
	}
	svc, method := mm.Service, mm.Method
	if mm.Type != nil && *mm.Type == gwapiv1.GRPCMethodMatchRegularExpression {
		switch {
		case svc != nil && method != nil:
			route.PathMatch = &ir.StringMatch{SafeRegex: ptr("/" + *svc + "/" + *method)}
		case method != nil:
			route.PathMatch = &ir.StringMatch{SafeRegex: ptr("/" + grpcServicePattern + "/" + *method)}
		case svc != nil:
			route.PathMatch = &ir.StringMatch{SafeRegex: ptr("/" + *svc + "/" + grpcMethodPattern)}
		}
		return
	}
	switch {
	case svc != nil && method != nil:
		route.PathMatch = &ir.StringMatch{Exact: ptr("/" + *svc + "/" + *method)}
	case method != nil:
		// A path cannot match a suffix, so the method is matched on the :path header.
		route.Headers = append(route.Headers, &ir.StringMatch{Name: ":path", Suffix: ptr("/" + *method)})
	case svc != nil:
		route.PathMatch = &ir.StringMatch{Prefix: ptr("/" + *svc)}
	}
}

// What a gRPC service and method name may look like, for regular-expression method matches
// that name only one of the two (facts of EG v1.9).
const (
	grpcServicePattern = `(?i)\.?[a-z_][a-z_0-9]*(\.[a-z_][a-z_0-9]*)*`
	grpcMethodPattern  = `[A-Za-z_][A-Za-z_0-9]*`
)

// applyMatch turns a Gateway API match into IR matchers, with the CRD's defaults.
func applyMatch(route *ir.HTTPRoute, m gwapiv1.HTTPRouteMatch) {
	path := "/"
	ptype := gwapiv1.PathMatchPathPrefix
	if m.Path != nil {
		if m.Path.Value != nil {
			path = *m.Path.Value
		}
		if m.Path.Type != nil {
			ptype = *m.Path.Type
		}
	}
	switch ptype {
	case gwapiv1.PathMatchExact:
		route.PathMatch = &ir.StringMatch{Exact: &path}
	case gwapiv1.PathMatchRegularExpression:
		route.PathMatch = &ir.StringMatch{SafeRegex: &path}
	default:
		route.PathMatch = &ir.StringMatch{Prefix: &path}
	}
	for _, h := range m.Headers {
		v := h.Value
		sm := &ir.StringMatch{Name: string(h.Name)}
		if h.Type != nil && *h.Type == gwapiv1.HeaderMatchRegularExpression {
			sm.SafeRegex = &v
		} else {
			sm.Exact = &v
		}
		route.Headers = append(route.Headers, sm)
	}
	if m.Method != nil {
		v := string(*m.Method)
		route.Headers = append(route.Headers, &ir.StringMatch{Name: ":method", Exact: &v})
	}
	for _, q := range m.QueryParams {
		v := q.Value
		sm := &ir.StringMatch{Name: string(q.Name)}
		if q.Type != nil && *q.Type == gwapiv1.QueryParamMatchRegularExpression {
			sm.SafeRegex = &v
		} else {
			sm.Exact = &v
		}
		route.QueryParams = append(route.QueryParams, sm)
	}
}

// resolveBackend resolves one backendRef. An invalid backend is still returned (with its
// weight) so that its share of traffic answers 500.
func (rt *routeTranslator) resolveBackend(routeKind, routeNS string, br gwapiv1.BackendRef, clusterName string, k int) (*ir.Backend, *refError) {
	weight := uint32(1)
	if br.Weight != nil {
		weight = uint32(*br.Weight)
	}
	ns := routeNS
	if br.Namespace != nil && *br.Namespace != "" {
		ns = string(*br.Namespace)
	}
	kind := "Service"
	if br.Kind != nil {
		kind = string(*br.Kind)
	}
	b := &ir.Backend{Name: fmt.Sprintf("%s/backend/%d", clusterName, k), Weight: weight, Kind: kind, Namespace: ns, ServiceName: string(br.Name)}
	if br.Port != nil {
		b.Port = uint32(*br.Port)
	}
	fail := func(reason, msg string) (*ir.Backend, *refError) {
		b.Invalid = true
		b.Endpoints = nil
		return b, &refError{reason: reason, msg: msg}
	}
	if br.Group != nil && *br.Group != "" && *br.Group != "multicluster.x-k8s.io" && *br.Group != "gateway.envoyproxy.io" {
		return fail("InvalidKind", "Group is invalid, only the core API group (specified by omitting the group field or setting it to an empty string), multicluster.x-k8s.io and gateway.envoyproxy.io are supported")
	}
	switch kind {
	case "Service":
	case "ServiceImport":
		return rt.resolveServiceImport(b, routeKind, routeNS, ns, br, fail)
	case "Backend":
		return rt.resolveEGBackend(b, routeKind, routeNS, ns, br, fail)
	default:
		return fail("InvalidKind", "Kind is invalid, only Service, MCS ServiceImport and Envoy Gateway Backend are supported")
	}
	if ns != routeNS && !rt.permitted(routeKind, routeNS, "", "Service", ns, string(br.Name)) {
		return fail("RefNotPermitted", fmt.Sprintf("Backend ref to %s %s/%s not permitted by any ReferenceGrant.", kind, ns, br.Name))
	}
	if br.Port == nil {
		return fail("PortNotSpecified", "A valid port number corresponding to a port on the Service must be specified")
	}
	svc := rt.ix.services[types.NamespacedName{Namespace: ns, Name: string(br.Name)}]
	if svc == nil {
		return fail("BackendNotFound", fmt.Sprintf("service %s/%s not found", ns, br.Name))
	}
	if svc.Spec.Type == corev1.ServiceTypeExternalName {
		// No address to put in a cluster: the backend is invalid, and only its own share of
		// the traffic is lost (RT-07).
		return fail("UnsupportedValue", fmt.Sprintf("Service %s/%s is of type ExternalName, which is not supported as a backend; use an Envoy Gateway Backend resource with an FQDN endpoint instead", ns, br.Name))
	}
	// The port must exist with the route's transport: UDP for UDPRoute, TCP otherwise.
	want := corev1.ProtocolTCP
	if routeKind == "UDPRoute" {
		want = corev1.ProtocolUDP
	}
	var sp *corev1.ServicePort
	for i := range svc.Spec.Ports {
		p := &svc.Spec.Ports[i]
		proto := p.Protocol
		if proto == "" {
			proto = corev1.ProtocolTCP
		}
		if p.Port == int32(*br.Port) && proto == want {
			sp = p
			break
		}
	}
	if sp == nil {
		return fail("PortNotFound", fmt.Sprintf("%s Port %d not found on Service %s/%s", want, *br.Port, ns, br.Name))
	}
	b.Endpoints = rt.endpoints(svc, sp)
	if ap := sp.AppProtocol; ap != nil && (routeKind == "HTTPRoute" || routeKind == "GRPCRoute") {
		// Real Envoy found this missing: a gRPC health check on an HTTP/1 cluster is
		// refused ("cluster must support HTTP/2 for gRPC healthchecking").
		b.HTTP2 = *ap == "kubernetes.io/h2c" || *ap == "gateway.envoyproxy.io/h2c" || *ap == "grpc"
	}
	if err := rt.applyBackendTLS(b, ns, sp); err != nil {
		return fail(err.reason, err.msg)
	}
	b.BackendLB = rt.ix.lbWinners[types.NamespacedName{Namespace: ns, Name: string(br.Name)}]
	return b, nil
}

// endpoints resolves a Service port to addresses. With EndpointSlices for the Service, the
// ready endpoints serve (EG's default Endpoint routing); without any, the ClusterIP does,
// as `egctl x translate` routes offline (a Service without one gets egctl's placeholder).
func (rt *routeTranslator) endpoints(svc *corev1.Service, sp *corev1.ServicePort) []ir.Endpoint {
	slices := rt.ix.slices[types.NamespacedName{Namespace: svc.Namespace, Name: svc.Name}]
	if len(slices) == 0 {
		ip := svc.Spec.ClusterIP
		if ip == "" || ip == corev1.ClusterIPNone {
			ip = "10.96.1.2"
		}
		return []ir.Endpoint{{Host: ip, Port: uint32(sp.Port)}}
	}
	var out []ir.Endpoint
	seen := map[ir.Endpoint]bool{}
	for _, s := range slices {
		var port *int32
		for _, p := range s.Ports {
			if p.Name != nil && *p.Name == sp.Name || p.Name == nil && sp.Name == "" {
				port = p.Port
				break
			}
		}
		if port == nil {
			continue
		}
		for _, ep := range s.Endpoints {
			if ep.Conditions.Ready != nil && !*ep.Conditions.Ready {
				continue
			}
			for _, a := range ep.Addresses {
				e := ir.Endpoint{Host: a, Port: uint32(*port)}
				if !seen[e] {
					seen[e] = true
					out = append(out, e)
				}
			}
		}
	}
	return out
}

// permitted reports whether a ReferenceGrant in the target namespace lets fromKind objects
// in fromNS refer to the target (RT-06).
func (rt *routeTranslator) permitted(fromKind, fromNS, toGroup, toKind, toNS, toName string) bool {
	return rt.permittedFrom(gwapiv1.GroupName, fromKind, fromNS, toGroup, toKind, toNS, toName)
}

// permittedFrom is permitted for a referrer of any group (an EG policy's backendRefs).
func (rt *routeTranslator) permittedFrom(fromGroup, fromKind, fromNS, toGroup, toKind, toNS, toName string) bool {
	return rt.ix.grants.Permits(refgrant.From{Group: fromGroup, Kind: fromKind, Namespace: fromNS},
		refgrant.To{Group: toGroup, Kind: toKind, Namespace: toNS, Name: toName})
}
