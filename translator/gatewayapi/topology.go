package gatewayapi

import (
	egv1a1 "github.com/envoyproxy/gateway/api/v1alpha1"
	gwapiv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/egharness/egharness/translator/ir"
	"github.com/egharness/egharness/translator/refgrant"
	"github.com/egharness/egharness/translator/resource"
)

// Topology is what the policy stage needs to know beyond the IR: which Gateways,
// ListenerSets and routes exist, which parentRefs of a route name a Gateway or ListenerSet
// of ours, and which Gateway listener (or ListenerSet listener) each IR listener is.
type Topology struct {
	// Gateways are the Gateways of our GatewayClass, in processing order.
	Gateways []*GatewayNode
	// ListenerSets are all ListenerSet objects, oldest first (EG looks policy targets up
	// among all of them, then requires their parent Gateway to be one of ours).
	ListenerSets []*gwapiv1.ListenerSet
	// Routes are the xRoutes EG reads, HTTPRoutes first, then GRPC, TLS, TCP and UDP
	// routes, each kind oldest first.
	Routes []*RouteNode
	// NamespaceLabels are the labels of the Namespace objects given (for targetSelectors).
	NamespaceLabels map[string]map[string]string
	// Grants are the ReferenceGrants among the objects, indexed once by this stage for
	// every later one (policy targets, policy Secrets, CA bundles and backendRefs).
	Grants *refgrant.Index
}

// GatewayNode is one Gateway of ours and its listeners: its own first, then those of the
// ListenerSets it admits.
type GatewayNode struct {
	Object    *gwapiv1.Gateway
	Listeners []*ListenerNode
	// EnvoyProxy is the Gateway's EnvoyProxy (its own parametersRef, else its class's);
	// nil when it has none.
	EnvoyProxy *egv1a1.EnvoyProxy
}

// ListenerNode is one listener and its IR (nil when not programmed).
type ListenerNode struct {
	Name    string
	Gateway *GatewayNode
	// Set is the ListenerSet the listener comes from; nil for the Gateway's own listeners.
	Set  *gwapiv1.ListenerSet
	HTTP *ir.HTTPListener
	TCP  *ir.TCPListener
	UDP  *ir.UDPListener
}

// RouteNode is one xRoute object.
type RouteNode struct {
	Kind   string
	Object resource.KObject
	// RuleNames are the names of the route's rules ("" for an unnamed rule), by index.
	RuleNames []string
	// ParentRefs are the parentRefs that name a Gateway or an admitted ListenerSet of ours
	// (EG's managed parent references), in spec order.
	ParentRefs []gwapiv1.ParentReference
}

// Ref names the route.
func (r *RouteNode) Ref() resource.Ref {
	return resource.Ref{Kind: r.Kind, Namespace: r.Object.GetNamespace(), Name: r.Object.GetName()}
}

// topology builds the Topology from the stage's contexts once routes are attached.
func (translation *routeTranslator) topology() *Topology {
	t := &Topology{ListenerSets: translation.objects.listenerSets, NamespaceLabels: map[string]map[string]string{},
		Grants: translation.objects.grants}
	for name, ns := range translation.objects.namespaces {
		t.NamespaceLabels[name] = ns.Labels
	}
	for _, g := range translation.gateways {
		gn := &GatewayNode{Object: g.gw}
		gn.EnvoyProxy, _ = translation.objects.envoyProxyOf(g.gw)
		for _, l := range g.listeners {
			gn.Listeners = append(gn.Listeners, &ListenerNode{
				Name: string(l.spec.Name), Gateway: gn, Set: l.listenerSet, HTTP: l.ir, TCP: l.tcp, UDP: l.udp,
			})
		}
		t.Gateways = append(t.Gateways, gn)
	}
	add := func(kind string, obj resource.KObject, parentRefs []gwapiv1.ParentReference, names []*gwapiv1.SectionName) {
		rn := &RouteNode{Kind: kind, Object: obj}
		for _, n := range names {
			rn.RuleNames = append(rn.RuleNames, ruleName(n))
		}
		ref := rn.Ref()
		translation.eachManagedParent(ref, parentRefs,
			func(parentRef gwapiv1.ParentReference) { rn.ParentRefs = append(rn.ParentRefs, parentRef) })
		t.Routes = append(t.Routes, rn)
	}
	for _, r := range translation.objects.httpRoutes {
		add("HTTPRoute", r, r.Spec.ParentRefs,
			ruleNames(r.Spec.Rules, func(r *gwapiv1.HTTPRouteRule) *gwapiv1.SectionName { return r.Name }))
	}
	for _, r := range translation.objects.grpcRoutes {
		add("GRPCRoute", r, r.Spec.ParentRefs,
			ruleNames(r.Spec.Rules, func(r *gwapiv1.GRPCRouteRule) *gwapiv1.SectionName { return r.Name }))
	}
	for _, r := range translation.objects.tlsRoutes {
		add("TLSRoute", r, r.Spec.ParentRefs,
			ruleNames(r.Spec.Rules, func(r *gwapiv1.TLSRouteRule) *gwapiv1.SectionName { return r.Name }))
	}
	for _, r := range translation.objects.tcpRoutes {
		add("TCPRoute", r, r.Spec.ParentRefs,
			ruleNames(r.Spec.Rules, func(r *gwapiv1.TCPRouteRule) *gwapiv1.SectionName { return r.Name }))
	}
	for _, r := range translation.objects.udpRoutes {
		add("UDPRoute", r, r.Spec.ParentRefs,
			ruleNames(r.Spec.Rules, func(r *gwapiv1.UDPRouteRule) *gwapiv1.SectionName { return r.Name }))
	}
	return t
}

// ruleNames are the names of a route's rules, in order (nil where a rule has none).
func ruleNames[R any](rules []R, name func(*R) *gwapiv1.SectionName) []*gwapiv1.SectionName {
	names := make([]*gwapiv1.SectionName, len(rules))
	for i := range rules {
		names[i] = name(&rules[i])
	}
	return names
}

// eachManagedParent calls fn for each parentRef that names a Gateway or an admitted
// ListenerSet of ours: the same filter eachParent applies to route statuses.
func (translation *routeTranslator) eachManagedParent(ref resource.Ref, parentRefs []gwapiv1.ParentReference,
	fn func(gwapiv1.ParentReference)) {
	for _, parentRef := range parentRefs {
		kind, ns, ok := parentKindNamespace(ref, parentRef)
		if !ok {
			continue
		}
		g := translation.parentGateway(kind, ns, string(parentRef.Name))
		if g != nil {
			fn(parentRef)
		}
	}
}
