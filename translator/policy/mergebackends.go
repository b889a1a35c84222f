package policy

import (
	"fmt"
	"strconv"
	"strings"

	egv1a1 "github.com/envoyproxy/gateway/api/v1alpha1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	gwapiv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/egharness/egharness/translator/gatewayapi"
	"github.com/egharness/egharness/translator/ir"
	"github.com/egharness/egharness/translator/resource"
)

// MergeBackends applies EnvoyProxy mergeBackends (EG v1.9.1 internal/gatewayapi/route.go
// processBackendRef and routeDestinationForListener): on a Gateway whose EnvoyProxy sets
// it, the routes that reach the same backend share one cluster,
// <kind>/<namespace>/<name>/<port>/<protocol> (Backend.Merged), instead of a cluster per
// route rule. A backend keeps the rule's own cluster when sharing would be unsafe, as EG
// decides:
//
//   - it is invalid, has no ready endpoints, or is a dynamic resolver;
//   - the rule has several backendRefs and session persistence (HTTPRoute), a fallback
//     Backend among them, or the Gateway's own BackendTrafficPolicy balances by consistent
//     hash; a TCP, UDP or TLS route with several backendRefs never merges;
//   - the backendRef has filters of its own;
//   - the mergeBackends selector does not match the backend object's labels;
//   - the rule's routing type (a BackendTrafficPolicy's routingType, else the EnvoyProxy's)
//     differs from the Gateway's;
//   - below the Gateway (the rule, the route, the listener or its ListenerSet) a
//     BackendTrafficPolicy sets a field of the cluster, or a rule or route policy without
//     mergeType replaces the Gateway's; or a ClientTrafficPolicy on the listener (or its
//     ListenerSet) sets HTTP/1 options.
//
// The indexes follow EG's BuildBTPIndexes and BuildCTPClusterSettingsIndex: every
// BackendTrafficPolicy and ClientTrafficPolicy, oldest first, the first one to claim a
// scope holding it.
func MergeBackends(x *ir.XDS, topo *gatewayapi.Topology, objs []resource.Object) {
	if topo == nil {
		return
	}
	var on []*gatewayapi.GatewayNode
	for _, g := range topo.Gateways {
		if g.EnvoyProxy != nil && g.EnvoyProxy.Spec.MergeBackends != nil {
			on = append(on, g)
		}
	}
	if len(on) == 0 {
		return
	}
	w := newWorld(topo)
	m := newMerger(w, objs)
	for _, g := range on {
		for _, l := range g.Listeners {
			m.listener(g, l)
		}
	}
}

// mergeRule is what the merge decision needs of one route rule.
type mergeRule struct {
	kind     string
	route    types.NamespacedName
	name     *string // the rule's name, for rule-level policies
	refs     []gwapiv1.BackendObjectReference
	filters  []int // filters of each backendRef
	session  bool  // session persistence (HTTPRoute)
	l4       bool
	refCount int // backendRefs that count for a TCP, UDP or TLS route
}

func (m *merger) listener(g *gatewayapi.GatewayNode, l *gatewayapi.ListenerNode) {
	gw := types.NamespacedName{Namespace: g.Object.Namespace, Name: g.Object.Name}
	var set *types.NamespacedName
	if l.Set != nil {
		set = &types.NamespacedName{Namespace: l.Set.Namespace, Name: l.Set.Name}
	}
	lname := l.Name
	http1 := false
	if set != nil {
		v1, _ := m.http1.exact(mscope{"set", "", set.Namespace, set.Name, ""})
		v2, _ := m.http1.exact(mscope{"setListener", "", set.Namespace, set.Name, lname})
		http1 = v1 || v2
	} else {
		http1, _ = m.http1.exact(mscope{"gatewayListener", "", gw.Namespace, gw.Name, lname})
	}
	cfg := g.EnvoyProxy.Spec.MergeBackends
	do := func(src ir.Source, d **ir.Destination, l4 bool) {
		if *d == nil {
			return
		}
		rule, ok := m.rule(src, l4)
		if !ok {
			return
		}
		// The cluster settings in force on this listener (the TLS rule's name never counts).
		ruleName := rule.name
		if src.Kind == "TLSRoute" {
			ruleName = nil
		}
		below, replaces := m.clusterSettings.lookup(src.Kind, rule.route, gw, &lname, set, ruleName)
		if below || replaces || http1 {
			return
		}
		m.destination(g, l, gw, set, src, rule, cfg, d)
	}
	switch {
	case l.HTTP != nil:
		for _, r := range l.HTTP.Routes {
			do(r.Source, &r.Destination, false)
		}
	case l.TCP != nil:
		for _, r := range l.TCP.Routes {
			do(r.Source, &r.Destination, true)
		}
	case l.UDP != nil:
		if r := l.UDP.Route; r != nil {
			do(r.Source, &r.Destination, true)
		}
	}
}

// rule reads the route rule an IR route comes from (for a TCP, UDP or TLS route, all its
// backendRefs: its IR destination holds them all).
func (m *merger) rule(src ir.Source, l4 bool) (mergeRule, bool) {
	rn := m.w.routes[routeKey{src.Kind, src.Namespace, src.Name}]
	if rn == nil {
		return mergeRule{}, false
	}
	out := mergeRule{kind: src.Kind, route: types.NamespacedName{Namespace: src.Namespace, Name: src.Name}, l4: l4}
	name := func(n *gwapiv1.SectionName) *string {
		if n == nil {
			return nil
		}
		s := string(*n)
		return &s
	}
	switch o := rn.Object.(type) {
	case *gwapiv1.HTTPRoute:
		if src.Rule < 0 || src.Rule >= len(o.Spec.Rules) {
			return out, false
		}
		r := o.Spec.Rules[src.Rule]
		out.name, out.session = name(r.Name), r.SessionPersistence != nil
		for _, br := range r.BackendRefs {
			out.refs = append(out.refs, br.BackendObjectReference)
			out.filters = append(out.filters, len(br.Filters))
		}
	case *gwapiv1.GRPCRoute:
		if src.Rule < 0 || src.Rule >= len(o.Spec.Rules) {
			return out, false
		}
		r := o.Spec.Rules[src.Rule]
		// EG passes no session persistence for a GRPCRoute rule.
		out.name = name(r.Name)
		for _, br := range r.BackendRefs {
			out.refs = append(out.refs, br.BackendObjectReference)
			out.filters = append(out.filters, len(br.Filters))
		}
	case *gwapiv1.TLSRoute:
		// All the rules' backendRefs, a backend counted once.
		seen := map[string]bool{}
		for _, r := range o.Spec.Rules {
			if out.name == nil {
				out.name = name(r.Name)
			}
			for _, br := range r.BackendRefs {
				out.refs = append(out.refs, br.BackendObjectReference)
				out.filters = append(out.filters, 0)
				k := backendKey(br.BackendObjectReference, src.Namespace)
				if !seen[k] {
					seen[k] = true
					out.refCount++
				}
			}
		}
	case *gwapiv1.TCPRoute:
		if !l4Backends(&out, o.Spec.Rules, name) {
			return out, false
		}
	case *gwapiv1.UDPRoute:
		if !l4Backends(&out, o.Spec.Rules, name) {
			return out, false
		}
	default:
		return out, false
	}
	return out, true
}

// l4Backends fills out from a TCPRoute's or UDPRoute's rules (the same fields): the first
// rule's name, every rule's backendRefs, counted as the first rule's. False without rules.
func l4Backends[R gwapiv1.TCPRouteRule | gwapiv1.UDPRouteRule](out *mergeRule, rules []R,
	name func(*gwapiv1.SectionName) *string) bool {
	if len(rules) == 0 {
		return false
	}
	for i, r := range rules {
		rule := gwapiv1.TCPRouteRule(r)
		if i == 0 {
			out.name, out.refCount = name(rule.Name), len(rule.BackendRefs)
		}
		for _, br := range rule.BackendRefs {
			out.refs = append(out.refs, br.BackendObjectReference)
			out.filters = append(out.filters, 0)
		}
	}
	return true
}

func backendKey(ref gwapiv1.BackendObjectReference, routeNS string) string {
	ns := routeNS
	if ref.Namespace != nil && *ref.Namespace != "" {
		ns = string(*ref.Namespace)
	}
	kind := "Service"
	if ref.Kind != nil {
		kind = string(*ref.Kind)
	}
	port := int32(0)
	if ref.Port != nil {
		port = int32(*ref.Port)
	}
	return fmt.Sprintf("%s/%s/%s/%d", kind, ns, ref.Name, port)
}

// destination marks the backends of one IR route's destination that share a cluster; the
// destination is copied first (one rule's destination may serve several listeners, which
// decide apart).
func (m *merger) destination(g *gatewayapi.GatewayNode, l *gatewayapi.ListenerNode, gw types.NamespacedName,
	set *types.NamespacedName, src ir.Source, rule mergeRule, cfg *egv1a1.MergeBackendsConfig, d **ir.Destination) {
	// A rule-wide reason first.
	unsafe := false
	switch {
	case rule.l4:
		unsafe = rule.refCount > 1
	case len(rule.refs) > 1:
		unsafe = rule.session
		for _, ref := range rule.refs {
			if b := m.backendOf(ref, src.Namespace); b != nil && b.Spec.Fallback != nil && *b.Spec.Fallback {
				unsafe = true
			}
		}
		if ch, _ := m.consistentHash.exact(mscope{"gateway", "", gw.Namespace, gw.Name, ""}); ch {
			unsafe = true
		}
	}
	if unsafe {
		return
	}
	// The routing type in force on the rule against the Gateway's (EG looks the rule's up
	// by the parentRef's sectionName, and the ListenerSet the parentRef names).
	section, prSet := m.parentRefOf(src, g, l)
	ruleRT, _ := m.routingType.lookup(src.Kind, rule.route, gw, section, prSet, rule.name)
	gwRT, _ := m.routingType.exact(mscope{"gateway", "", gw.Namespace, gw.Name, ""})
	if serviceRouting(g.EnvoyProxy, ruleRT) != serviceRouting(g.EnvoyProxy, gwRT) {
		return
	}
	var out *ir.Destination
	for i, s := range (*d).Settings {
		k, ok := backendIndex(s.Name)
		if !ok || k >= len(rule.refs) || !m.mergeable(s, rule.refs[k], rule.filters[k], src, cfg) {
			continue
		}
		if out == nil {
			c := **d
			c.Settings = append([]*ir.Backend(nil), (*d).Settings...)
			out = &c
		}
		b := *s
		b.Merged = mergedName(s, m.protocol(src.Kind, s, rule.refs[k]))
		out.Settings[i] = &b
	}
	if out != nil {
		*d = out
	}
}

// mergeable says whether one backend may share a cluster.
func (m *merger) mergeable(s *ir.Backend, ref gwapiv1.BackendObjectReference, filters int, src ir.Source,
	cfg *egv1a1.MergeBackendsConfig) bool {
	if s.Invalid || s.Weight == 0 || s.Merged != "" || len(s.Endpoints) == 0 || filters > 0 {
		return false
	}
	namespacedName := types.NamespacedName{Namespace: s.Namespace, Name: s.ServiceName}
	var lbls map[string]string
	found := false
	switch s.Kind {
	case "Service":
		if svc := m.services[namespacedName]; svc != nil {
			lbls, found = svc.Labels, true
		}
	case "ServiceImport":
		if si := m.imports[namespacedName]; si != nil {
			lbls, found = si.Labels, true
		}
	case "Backend":
		b := m.backends[namespacedName]
		if b == nil || b.Spec.Type != nil && *b.Spec.Type == egv1a1.BackendTypeDynamicResolver {
			return false
		}
		lbls, found = b.Labels, true
	default:
		return false
	}
	if cfg.Selector != nil {
		sel, err := metav1.LabelSelectorAsSelector(cfg.Selector)
		if err != nil || !found || !sel.Matches(labels.Set(lbls)) {
			return false
		}
	}
	return true
}

func (m *merger) backendOf(ref gwapiv1.BackendObjectReference, routeNS string) *egv1a1.Backend {
	if ref.Kind == nil || *ref.Kind != "Backend" {
		return nil
	}
	ns := routeNS
	if ref.Namespace != nil && *ref.Namespace != "" {
		ns = string(*ref.Namespace)
	}
	return m.backends[types.NamespacedName{Namespace: ns, Name: string(ref.Name)}]
}

// parentRefOf is the sectionName and ListenerSet of the route's parentRef that reaches the
// listener (EG resolves the rule's routing type by them).
func (m *merger) parentRefOf(src ir.Source, g *gatewayapi.GatewayNode, l *gatewayapi.ListenerNode) (*string,
	*types.NamespacedName) {
	rn := m.w.routes[routeKey{src.Kind, src.Namespace, src.Name}]
	if rn == nil {
		return nil, nil
	}
	for _, pr := range rn.ParentRefs {
		ns := src.Namespace
		if pr.Namespace != nil && *pr.Namespace != "" {
			ns = string(*pr.Namespace)
		}
		kind := "Gateway"
		if pr.Kind != nil {
			kind = string(*pr.Kind)
		}
		if pr.SectionName != nil && string(*pr.SectionName) != l.Name {
			continue
		}
		switch {
		case kind == "ListenerSet" && l.Set != nil && l.Set.Namespace == ns && l.Set.Name == string(pr.Name):
			set := &types.NamespacedName{Namespace: ns, Name: string(pr.Name)}
			if pr.SectionName == nil {
				return nil, set
			}
			s := string(*pr.SectionName)
			return &s, set
		case kind == "Gateway" && l.Set == nil && g.Object.Namespace == ns && g.Object.Name == string(pr.Name):
			if pr.SectionName == nil {
				return nil, nil
			}
			s := string(*pr.SectionName)
			return &s, nil
		}
	}
	return nil, nil
}

// serviceRouting is EG's IsServiceRouting: a routingType in force, else the EnvoyProxy's.
func serviceRouting(ep *egv1a1.EnvoyProxy, routingType string) bool {
	switch egv1a1.RoutingType(routingType) {
	case egv1a1.ServiceRoutingType:
		return true
	case egv1a1.EndpointRoutingType:
		return false
	}
	return ep != nil && ep.Spec.RoutingType != nil && *ep.Spec.RoutingType == egv1a1.ServiceRoutingType
}

// protocol is the upstream protocol EG keys a shared cluster by: the route kind's (HTTP,
// GRPC, TCP for TCP and TLS routes, UDP), an HTTPRoute's turned into HTTP2 or GRPC by the
// Service port's (or the EG Backend's) appProtocol.
func (m *merger) protocol(routeKind string, s *ir.Backend, ref gwapiv1.BackendObjectReference) string {
	switch routeKind {
	case "GRPCRoute":
		return "GRPC"
	case "TCPRoute", "TLSRoute":
		return "TCP"
	case "UDPRoute":
		return "UDP"
	}
	proto := "HTTP"
	resolve := func(ap string) {
		if proto != "HTTP" {
			return
		}
		switch ap {
		case "kubernetes.io/h2c", string(egv1a1.AppProtocolTypeH2C):
			proto = "HTTP2"
		case "grpc":
			proto = "GRPC"
		}
	}
	namespacedName := types.NamespacedName{Namespace: s.Namespace, Name: s.ServiceName}
	switch s.Kind {
	case "Service":
		if svc := m.services[namespacedName]; svc != nil {
			for _, p := range svc.Spec.Ports {
				if uint32(p.Port) == s.Port && p.AppProtocol != nil {
					resolve(*p.AppProtocol)
				}
			}
		}
	case "Backend":
		if b := m.backends[namespacedName]; b != nil {
			for _, ap := range b.Spec.AppProtocols {
				resolve(string(ap))
			}
		}
	}
	return proto
}

// mergedName is EG's irBackendClusterName: kind, namespace, name and port of the backend,
// and the protocol, lower case.
func mergedName(s *ir.Backend, proto string) string {
	return fmt.Sprintf("%s/%s/%s/%d/%s", strings.ToLower(s.Kind), s.Namespace, s.ServiceName, s.Port,
		strings.ToLower(proto))
}

// backendIndex is the backendRef index of an IR backend, named <cluster>/backend/<i>.
func backendIndex(name string) (int, bool) {
	i := strings.LastIndex(name, "/backend/")
	if i < 0 {
		return 0, false
	}
	k, err := strconv.Atoi(name[i+len("/backend/"):])
	return k, err == nil && k >= 0
}
