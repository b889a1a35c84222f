package gatewayapi

import (
	"fmt"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	gwapiv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/egharness/egharness/translator/ir"
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

func (rt *routeTranslator) processHTTPRoute(r *gwapiv1.HTTPRoute) {
	ref := resource.Ref{Kind: "HTTPRoute", Namespace: r.Namespace, Name: r.Name}
	var rules []*ruleCtx // resolved once, lazily: only routes with a parent of ours need it
	for _, pr := range r.Spec.ParentRefs {
		if pr.Group != nil && string(*pr.Group) != gwapiv1.GroupName {
			continue
		}
		if pr.Kind != nil && string(*pr.Kind) != "Gateway" {
			continue // ListenerSet parents come with the routing work
		}
		ns := r.Namespace
		if pr.Namespace != nil {
			ns = string(*pr.Namespace)
		}
		g := rt.findGateway(ns, string(pr.Name))
		if g == nil {
			continue // not a Gateway of ours: EG writes no status for it
		}
		pref := result.ParentRef{Kind: "Gateway", Namespace: ns, Name: string(pr.Name)}
		if pr.SectionName != nil {
			pref.SectionName = string(*pr.SectionName)
		}
		ps := rt.st.parent(ref, pref)
		if pr.Port != nil && pref.SectionName == "" {
			// The port narrows the parent like a section; show it in the reference.
			pref.SectionName = ""
		}
		if rules == nil {
			rules = rt.resolveRules(r)
		}
		rt.attach(r, ref, g, pr, ps, rules)
	}
}

// attach binds the route to the listeners its parentRef selects and writes its conditions.
func (rt *routeTranslator) attach(r *gwapiv1.HTTPRoute, ref resource.Ref, g *gatewayCtx, pr gwapiv1.ParentReference, ps *result.ParentStatus, rules []*ruleCtx) {
	var selected []*listenerCtx
	for _, l := range g.listeners {
		if pr.SectionName != nil && string(*pr.SectionName) != string(l.spec.Name) {
			continue
		}
		if pr.Port != nil && *pr.Port != l.spec.Port {
			continue
		}
		selected = append(selected, l)
	}
	if len(selected) == 0 {
		ps.Conditions = setCondition(ps.Conditions, cond("Accepted", "False", "NoMatchingParent", msgNoMatchingParent))
		rt.resolvedRefs(ps, rules)
		return
	}
	var allowed []*listenerCtx
	for _, l := range selected {
		if l.allows("HTTPRoute", r.Namespace, map[string]*nsLabels{r.Namespace: rt.namespaceLabels(r.Namespace)}) {
			allowed = append(allowed, l)
		}
	}
	if len(allowed) == 0 {
		ps.Conditions = setCondition(ps.Conditions, cond("Accepted", "False", "NotAllowedByListeners", msgNotAllowed))
		rt.resolvedRefs(ps, rules)
		return
	}
	hostsFound := false
	key := ref.String()
	for _, l := range allowed {
		hosts := computeHosts(routeHostnames(r), l)
		if len(hosts) == 0 {
			continue
		}
		hostsFound = true
		l.attached[key] = true
		if l.ir == nil {
			continue // attached, but the listener is not programmed
		}
		rt.attachments = append(rt.attachments, attachment{listener: l, route: ref, parent: ps.Ref})
		for _, h := range hosts {
			for _, rc := range rules {
				l.ir.Routes = append(l.ir.Routes, rc.irRoutes(h)...)
			}
		}
	}
	if !hostsFound {
		ps.Conditions = setCondition(ps.Conditions, cond("Accepted", "False", "NoMatchingListenerHostname", msgNoHostname))
		rt.resolvedRefs(ps, rules)
		return
	}
	ps.Conditions = setCondition(ps.Conditions, cond("Accepted", "True", "Accepted", msgRouteAccepted))
	rt.resolvedRefs(ps, rules)
}

// resolvedRefs writes ResolvedRefs from the rules' backend problems.
func (rt *routeTranslator) resolvedRefs(ps *result.ParentStatus, rules []*ruleCtx) {
	var errs refErrors
	for _, rc := range rules {
		for _, e := range rc.errors {
			errs.add(e.reason, e.msg)
		}
	}
	if errs.empty() {
		ps.Conditions = setCondition(ps.Conditions, cond("ResolvedRefs", "True", "ResolvedRefs", msgRouteResolvedRefs))
		return
	}
	ps.Conditions = setCondition(ps.Conditions, errs.condition("ResolvedRefs"))
}

func routeHostnames(r *gwapiv1.HTTPRoute) []string {
	out := make([]string, 0, len(r.Spec.Hostnames))
	for _, h := range r.Spec.Hostnames {
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
		if other == l || other.spec.Port != l.spec.Port || other.spec.Hostname == nil {
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
}

type refError struct{ reason, msg string }

// irRoutes copies the rule's routes for one hostname, naming them for it.
func (rc *ruleCtx) irRoutes(host string) []*ir.HTTPRoute {
	out := make([]*ir.HTTPRoute, 0, len(rc.routes))
	for _, tmpl := range rc.routes {
		r := *tmpl
		r.Hostname = host
		r.Name = fmt.Sprintf("%s/%s", tmpl.Name, strings.ReplaceAll(host, ".", "_"))
		out = append(out, &r)
	}
	return out
}

func (rt *routeTranslator) resolveRules(r *gwapiv1.HTTPRoute) []*ruleCtx {
	out := make([]*ruleCtx, 0, len(r.Spec.Rules))
	prefix := fmt.Sprintf("httproute/%s/%s/rule/", r.Namespace, r.Name)
	for i, rule := range r.Spec.Rules {
		rc := &ruleCtx{}
		clusterName := fmt.Sprintf("%s%d", prefix, i)
		dest := &ir.Destination{Name: clusterName}
		for k, br := range rule.BackendRefs {
			b, err := rt.resolveBackend(r, br.BackendRef, clusterName, k)
			if err != nil {
				rc.errors = append(rc.errors, refError{reason: err.reason, msg: fmt.Sprintf("failed to process route rule %d backendRef %d: %s", i, k, err.msg)})
			}
			if b.Weight == 0 {
				continue // a zero weight takes no traffic and makes no cluster
			}
			dest.Settings = append(dest.Settings, b)
		}
		matches := rule.Matches
		if len(matches) == 0 {
			matches = []gwapiv1.HTTPRouteMatch{{}} // the CRD default: PathPrefix "/"
		}
		for j, m := range matches {
			route := &ir.HTTPRoute{
				Name: fmt.Sprintf("%s%d/match/%d", prefix, i, j),
				Source: ir.Source{Kind: "HTTPRoute", Namespace: r.Namespace, Name: r.Name, Rule: i, Match: j,
					Created: creation(r)},
			}
			applyMatch(route, m)
			valid, _ := dest.ValidWeight()
			switch {
			case len(rule.BackendRefs) == 0 || len(dest.Settings) == 0 && len(rc.errors) == 0:
				// No backend at all: EG answers 500 (RT-12).
				route.DirectResponse = &ir.DirectResponse{Status: 500}
			case valid == 0:
				route.DirectResponse = &ir.DirectResponse{Status: 500}
			default:
				route.Destination = dest
			}
			rc.routes = append(rc.routes, route)
		}
		out = append(out, rc)
	}
	return out
}

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
func (rt *routeTranslator) resolveBackend(r *gwapiv1.HTTPRoute, br gwapiv1.BackendRef, clusterName string, k int) (*ir.Backend, *refError) {
	weight := uint32(1)
	if br.Weight != nil {
		weight = uint32(*br.Weight)
	}
	ns := r.Namespace
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
		// ServiceImport objects are not read yet, so a reference to one cannot resolve.
		return fail("BackendNotFound", fmt.Sprintf("service import %s/%s not found", ns, br.Name))
	case "Backend":
		return fail("InvalidKind", "Backend backends are not translated by the reference translator yet")
	default:
		return fail("InvalidKind", "Kind is invalid, only Service, MCS ServiceImport and Envoy Gateway Backend are supported")
	}
	if ns != r.Namespace && !rt.permitted("HTTPRoute", r.Namespace, "", "Service", ns, string(br.Name)) {
		return fail("RefNotPermitted", fmt.Sprintf("Backend ref to %s %s/%s not permitted by any ReferenceGrant.", kind, ns, br.Name))
	}
	if br.Port == nil {
		return fail("PortNotSpecified", "A valid port number corresponding to a port on the Service must be specified")
	}
	svc := rt.ix.services[types.NamespacedName{Namespace: ns, Name: string(br.Name)}]
	if svc == nil {
		return fail("BackendNotFound", fmt.Sprintf("service %s/%s not found", ns, br.Name))
	}
	var sp *corev1.ServicePort
	for i := range svc.Spec.Ports {
		p := &svc.Spec.Ports[i]
		proto := p.Protocol
		if proto == "" {
			proto = corev1.ProtocolTCP
		}
		if p.Port == int32(*br.Port) && proto == corev1.ProtocolTCP {
			sp = p
			break
		}
	}
	if sp == nil {
		return fail("PortNotFound", fmt.Sprintf("TCP Port %d not found on Service %s/%s", *br.Port, ns, br.Name))
	}
	b.Endpoints = rt.endpoints(svc, sp)
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
	for _, g := range rt.ix.grants {
		if g.Namespace != toNS {
			continue
		}
		fromOK := false
		for _, f := range g.Spec.From {
			if string(f.Group) == gwapiv1.GroupName && string(f.Kind) == fromKind && string(f.Namespace) == fromNS {
				fromOK = true
			}
		}
		if !fromOK {
			continue
		}
		for _, to := range g.Spec.To {
			if string(to.Group) == toGroup && string(to.Kind) == toKind && (to.Name == nil || string(*to.Name) == toName) {
				return true
			}
		}
	}
	return false
}
