package policy

import (
	"k8s.io/apimachinery/pkg/types"
	gwapiv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/egharness/egharness/translator/gatewayapi"
	"github.com/egharness/egharness/translator/ir"
	"github.com/egharness/egharness/translator/refgrant"
	"github.com/egharness/egharness/translator/result"
)

// routeKey names an xRoute.
type routeKey struct{ kind, namespace, name string }

// irRoute is one IR route of an xRoute, on one listener.
type irRoute struct {
	listener *gatewayapi.ListenerNode
	rule     int
	policies *ir.RoutePolicies
}

// world is the topology indexed for lookups that stay O(1) per policy target, so that
// thousands of policies cost linear time.
type world struct {
	topo     *gatewayapi.Topology
	gateways map[types.NamespacedName]*gatewayapi.GatewayNode
	sets     map[types.NamespacedName]*gwapiv1.ListenerSet
	routes   map[routeKey]*gatewayapi.RouteNode
	// irRoutes are the IR routes of each xRoute, listener by listener in Gateway order.
	irRoutes map[routeKey][]irRoute
	// byListener are the IR routes on each listener.
	byListener map[*gatewayapi.ListenerNode][]irRoute
	grants     *refgrant.Index

	// Selector candidates, by kind of target.
	gatewayCands, setCands, routeCands []candidate
}

func newWorld(topo *gatewayapi.Topology) *world {
	w := &world{
		topo:       topo,
		gateways:   map[types.NamespacedName]*gatewayapi.GatewayNode{},
		sets:       map[types.NamespacedName]*gwapiv1.ListenerSet{},
		routes:     map[routeKey]*gatewayapi.RouteNode{},
		irRoutes:   map[routeKey][]irRoute{},
		byListener: map[*gatewayapi.ListenerNode][]irRoute{},
		grants:     topo.Grants,
	}
	for _, g := range topo.Gateways {
		w.gateways[types.NamespacedName{Namespace: g.Object.Namespace, Name: g.Object.Name}] = g
		w.gatewayCands = append(w.gatewayCands, candidate{kind: "Gateway", namespace: g.Object.Namespace, name: g.Object.Name,
			labels: g.Object.Labels, created: g.Object.CreationTimestamp.Time})
		for _, l := range g.Listeners {
			w.indexListener(l)
		}
	}
	for _, listenerSet := range topo.ListenerSets {
		w.sets[types.NamespacedName{Namespace: listenerSet.Namespace, Name: listenerSet.Name}] = listenerSet
		w.setCands = append(w.setCands,
			candidate{kind: "ListenerSet", namespace: listenerSet.Namespace, name: listenerSet.Name,
				labels: listenerSet.Labels, created: listenerSet.CreationTimestamp.Time})
	}
	for _, r := range topo.Routes {
		k := routeKey{r.Kind, r.Object.GetNamespace(), r.Object.GetName()}
		w.routes[k] = r
		w.routeCands = append(w.routeCands, candidate{kind: r.Kind, namespace: k.namespace, name: k.name,
			labels: r.Object.GetLabels(), created: r.Object.GetCreationTimestamp().Time})
	}
	return w
}

func (w *world) indexListener(l *gatewayapi.ListenerNode) {
	add := func(src ir.Source, p *ir.RoutePolicies) {
		ir := irRoute{listener: l, rule: src.Rule, policies: p}
		k := routeKey{src.Kind, src.Namespace, src.Name}
		w.irRoutes[k] = append(w.irRoutes[k], ir)
		w.byListener[l] = append(w.byListener[l], ir)
	}
	switch {
	case l.HTTP != nil:
		for _, r := range l.HTTP.Routes {
			add(r.Source, &r.Policies)
		}
	case l.TCP != nil:
		for _, r := range l.TCP.Routes {
			add(r.Source, &r.Policies)
		}
	case l.UDP != nil:
		if l.UDP.Route != nil {
			add(l.UDP.Route.Source, &l.UDP.Route.Policies)
		}
	}
}

// listenerPolicies is the IR listener's policy slot, nil for UDP listeners (the IR has
// no listener policies for them).
func listenerPolicies(l *gatewayapi.ListenerNode) *ir.ListenerPolicies {
	switch {
	case l.HTTP != nil:
		return &l.HTTP.Policies
	case l.TCP != nil:
		return &l.TCP.Policies
	}
	return nil
}

// parentOf is a ListenerSet's parent Gateway.
func parentOf(listenerSet *gwapiv1.ListenerSet) types.NamespacedName {
	ns := listenerSet.Namespace
	if listenerSet.Spec.ParentRef.Namespace != nil {
		ns = string(*listenerSet.Spec.ParentRef.Namespace)
	}
	return types.NamespacedName{Namespace: ns, Name: string(listenerSet.Spec.ParentRef.Name)}
}

func gatewayAncestor(namespacedName types.NamespacedName, section string) result.ParentRef {
	return result.ParentRef{Kind: "Gateway", Namespace: namespacedName.Namespace, Name: namespacedName.Name,
		SectionName: section}
}

func setAncestor(namespacedName types.NamespacedName, section string) result.ParentRef {
	return result.ParentRef{Kind: "ListenerSet", Namespace: namespacedName.Namespace, Name: namespacedName.Name,
		SectionName: section}
}
