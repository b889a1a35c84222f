package policy

// The policy indexes MergeBackends decides with (mergebackends.go): which
// BackendTrafficPolicy and ClientTrafficPolicy claims each scope first, and what is in force
// on a route rule.

import (
	egv1a1 "github.com/envoyproxy/gateway/api/v1alpha1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	mcsv1a1 "sigs.k8s.io/mcs-api/pkg/apis/v1alpha1"

	"github.com/egharness/egharness/translator/resource"
)

// mscope is one level a policy can claim: a route rule, a route, a Gateway listener, a
// Gateway, a ListenerSet listener or a ListenerSet.
type mscope struct {
	level, kind, namespace, name, section string
}

// entry is what the first policy on a scope says; effective is false for a rule or route
// policy with mergeType and nothing of its own (the parents' then decide), and for a
// listener or ListenerSet policy that sets nothing.
type entry[T comparable] struct {
	value     T
	effective bool
}

type index[T comparable] map[mscope]entry[T]

func (byScope index[T]) putFirst(s mscope, e entry[T]) {
	if _, ok := byScope[s]; !ok {
		byScope[s] = e
	}
}

// lookup resolves the value in force on a rule of a route on a listener: the rule's, the
// route's, else the parents' (replaces says a rule or route entry decided).
func (byScope index[T]) lookup(routeKind string, route types.NamespacedName, gw types.NamespacedName, listener *string,
	set *types.NamespacedName, rule *string) (T, bool) {
	if rule != nil {
		if e, ok := byScope[mscope{"rule", routeKind, route.Namespace, route.Name, *rule}]; ok {
			return byScope.resolve(e, gw, listener, set)
		}
	}
	if e, ok := byScope[mscope{"route", routeKind, route.Namespace, route.Name, ""}]; ok {
		return byScope.resolve(e, gw, listener, set)
	}
	return byScope.parents(gw, listener, set), false
}

func (byScope index[T]) resolve(e entry[T], gw types.NamespacedName, listener *string, set *types.NamespacedName) (T,
	bool) {
	if e.effective {
		return e.value, true
	}
	return byScope.parents(gw, listener, set), false
}

func (byScope index[T]) exact(s mscope) (T, bool) {
	if e, ok := byScope[s]; ok && e.effective {
		return e.value, true
	}
	var zero T
	return zero, false
}

func (byScope index[T]) parents(gw types.NamespacedName, listener *string, set *types.NamespacedName) T {
	if set != nil {
		if listener != nil {
			if v, ok := byScope.exact(mscope{"setListener", "", set.Namespace, set.Name, *listener}); ok {
				return v
			}
		}
		if v, ok := byScope.exact(mscope{"set", "", set.Namespace, set.Name, ""}); ok {
			return v
		}
	} else if listener != nil {
		if v, ok := byScope.exact(mscope{"gatewayListener", "", gw.Namespace, gw.Name, *listener}); ok {
			return v
		}
	}
	v, _ := byScope.exact(mscope{"gateway", "", gw.Namespace, gw.Name, ""})
	return v
}

type merger struct {
	w *world
	// clusterSettings: a BackendTrafficPolicy below the Gateway sets a cluster field (or, on a
	// rule or route, has no mergeType); routingType: the routingType in force; consistentHash:
	// the Gateway's own policy balances by consistent hash; http1: a ClientTrafficPolicy on a
	// listener or ListenerSet sets HTTP/1 options.
	clusterSettings index[bool]
	routingType     index[string]
	consistentHash  index[bool]
	http1           index[bool]
	services        map[types.NamespacedName]*corev1.Service
	imports         map[types.NamespacedName]*mcsv1a1.ServiceImport
	backends        map[types.NamespacedName]*egv1a1.Backend
}

func newMerger(w *world, objs []resource.Object) *merger {
	m := &merger{
		w:               w,
		clusterSettings: index[bool]{},
		routingType:     index[string]{},
		consistentHash:  index[bool]{},
		http1:           index[bool]{},
		services:        map[types.NamespacedName]*corev1.Service{},
		imports:         map[types.NamespacedName]*mcsv1a1.ServiceImport{},
		backends:        map[types.NamespacedName]*egv1a1.Backend{},
	}
	var btps []*pol[egv1a1.BackendTrafficPolicySpec]
	var ctps []*pol[egv1a1.ClientTrafficPolicySpec]
	for _, o := range objs {
		namespacedName := types.NamespacedName{Namespace: o.Obj.GetNamespace(), Name: o.Obj.GetName()}
		switch v := o.Obj.(type) {
		case *corev1.Service:
			m.services[namespacedName] = v
		case *mcsv1a1.ServiceImport:
			m.imports[namespacedName] = v
		case *egv1a1.Backend:
			m.backends[namespacedName] = v
		case *egv1a1.BackendTrafficPolicy:
			btps = append(btps, newPol("BackendTrafficPolicy", v, v.Spec.PolicyTargetReferences, v.Spec.MergeType, &v.Spec))
		case *egv1a1.ClientTrafficPolicy:
			ctps = append(ctps, newPol("ClientTrafficPolicy", v, v.Spec.PolicyTargetReferences, nil, &v.Spec))
		}
	}
	sortByAge(btps)
	sortByAge(ctps)
	for _, p := range btps {
		spec := p.spec
		cluster := btpSetsCluster(spec)
		routingType := ""
		if spec.RoutingType != nil {
			routingType = string(*spec.RoutingType)
		}
		for _, t := range w.resolve("BackendTrafficPolicy", p.refs, p.meta.GetNamespace(), w.routeCands, w.gatewayCands,
			w.setCands) {
			sec := t.sectionOr()
			routeEffective := func(set bool) bool { return set || p.mergeType == nil }
			switch {
			case t.kind == "Gateway" && t.section != nil:
				m.routingType.putFirst(mscope{"gatewayListener", "", t.namespace, t.name, sec},
					entry[string]{routingType, routingType != ""})
				m.clusterSettings.putFirst(mscope{"gatewayListener", "", t.namespace, t.name, sec}, entry[bool]{cluster, true})
			case t.kind == "Gateway":
				m.routingType.putFirst(mscope{"gateway", "", t.namespace, t.name, ""}, entry[string]{routingType, true})
				ch := spec.LoadBalancer != nil && spec.LoadBalancer.Type == egv1a1.ConsistentHashLoadBalancerType
				m.consistentHash.putFirst(mscope{"gateway", "", t.namespace, t.name, ""}, entry[bool]{ch, true})
			case t.kind == "ListenerSet" && t.section != nil:
				m.routingType.putFirst(mscope{"setListener", "", t.namespace, t.name, sec},
					entry[string]{routingType, routingType != ""})
				m.clusterSettings.putFirst(mscope{"setListener", "", t.namespace, t.name, sec}, entry[bool]{cluster, true})
			case t.kind == "ListenerSet":
				m.routingType.putFirst(mscope{"set", "", t.namespace, t.name, ""}, entry[string]{routingType, routingType != ""})
				m.clusterSettings.putFirst(mscope{"set", "", t.namespace, t.name, ""}, entry[bool]{cluster, true})
			case t.section != nil:
				m.routingType.putFirst(mscope{"rule", t.kind, t.namespace, t.name, sec},
					entry[string]{routingType, routeEffective(routingType != "")})
				m.clusterSettings.putFirst(mscope{"rule", t.kind, t.namespace, t.name, sec},
					entry[bool]{cluster, routeEffective(cluster)})
			default:
				m.routingType.putFirst(mscope{"route", t.kind, t.namespace, t.name, ""},
					entry[string]{routingType, routeEffective(routingType != "")})
				m.clusterSettings.putFirst(mscope{"route", t.kind, t.namespace, t.name, ""},
					entry[bool]{cluster, routeEffective(cluster)})
			}
		}
	}
	for _, p := range ctps {
		h1 := p.spec.HTTP1 != nil
		for _, t := range w.resolve("ClientTrafficPolicy", p.refs, p.meta.GetNamespace(), w.gatewayCands, w.setCands) {
			switch {
			case t.kind == "Gateway" && t.section != nil:
				m.http1.putFirst(mscope{"gatewayListener", "", t.namespace, t.name, t.sectionOr()}, entry[bool]{h1, true})
			case t.kind == "ListenerSet" && t.section != nil:
				m.http1.putFirst(mscope{"setListener", "", t.namespace, t.name, t.sectionOr()}, entry[bool]{h1, true})
			case t.kind == "ListenerSet":
				m.http1.putFirst(mscope{"set", "", t.namespace, t.name, ""}, entry[bool]{h1, true})
			}
		}
	}
	return m
}

// btpSetsCluster says whether a BackendTrafficPolicy sets a field of the cluster (EG's
// btpSpecHasClusterScopedFields).
func btpSetsCluster(s *egv1a1.BackendTrafficPolicySpec) bool {
	return s.LoadBalancer != nil || s.ProxyProtocol != nil || s.HealthCheck != nil || s.CircuitBreaker != nil ||
		s.Timeout != nil || s.TCPKeepalive != nil || s.Connection != nil || s.HTTP2 != nil || s.DNS != nil ||
		s.AdmissionControl != nil || s.UseClientProtocol != nil
}
