package policy

import (
	"fmt"
	"sort"

	"k8s.io/apimachinery/pkg/types"
	gwapiv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/egharness/egharness/translator/conditions"
	"github.com/egharness/egharness/translator/gatewayapi"
	"github.com/egharness/egharness/translator/result"
)

// How the engine attaches one policy to each kind of target: an xRoute or one of its rules
// (merging with the parents' policies when it has a mergeType), a ListenerSet or one of its
// listeners, a Gateway or one of its listeners. Which targets a policy names is targets.go.

func hasDirectListener(g *gatewayapi.GatewayNode, name string) bool {
	for _, l := range g.Listeners {
		if l.Set == nil && l.Name == name {
			return true
		}
	}
	return false
}

func hasSetListener(listenerSet *gwapiv1.ListenerSet, name string) bool {
	for _, l := range listenerSet.Spec.Listeners {
		if string(l.Name) == name {
			return true
		}
	}
	return false
}

// claim takes target t for the policy, or the section of it t names. The policy's error is
// a section the target does not have (sectionExists false), or an object or a section an
// older policy of the kind took already; sectionOwner names what has the section in that
// message ("Listener <gateway>", "RouteRule <route>").
func (e *engine[T]) claim(status *attachState, t target, sectionExists bool, sectionOwner string) *resolveErr {
	if t.section == nil {
		var rerr *resolveErr
		if status.attached {
			rerr = e.conflict(fmt.Sprintf("%s %s", t.kind, t.name))
		}
		status.attached = true
		return rerr
	}
	switch {
	case !sectionExists:
		return &resolveErr{reasonTargetNotFound,
			fmt.Sprintf("No section name %s found for %s %s/%s", *t.section, t.kind, t.namespace, t.name)}
	case !status.claimSection(*t.section):
		return e.conflict(fmt.Sprintf("%s/%s", sectionOwner, *t.section))
	}
	return nil
}

// forRoute attaches a policy to an xRoute or one of its named rules.
func (e *engine[T]) forRoute(p *pol[T], t target) {
	key := routeKey{t.kind, t.namespace, t.name}
	route := e.w.routes[key]
	if route == nil {
		return // not a route of ours: EG writes nothing
	}
	status := state(e.routeState, key)
	ruleIdx := -1
	if t.section != nil {
		for i, n := range route.RuleNames {
			if n != "" && n == *t.section {
				ruleIdx = i
				break
			}
		}
	}
	rerr := e.claim(status, t, ruleIdx >= 0, "RouteRule "+t.name)

	routeScope := scope{kind: scopeRoute, namespace: t.namespace, name: t.name, routeKind: t.kind}
	var ancs []result.ParentRef
	for _, pr := range route.ParentRefs {
		ns := t.namespace
		if pr.Namespace != nil {
			ns = string(*pr.Namespace)
		}
		namespacedName := types.NamespacedName{Namespace: ns, Name: string(pr.Name)}
		section := ""
		if pr.SectionName != nil {
			section = string(*pr.SectionName)
		}
		if pr.Kind == nil || *pr.Kind == "Gateway" {
			e.overrides.add(scope{kind: scopeGateway, namespace: ns, name: namespacedName.Name}.listener(section), routeScope)
			ancs = append(ancs, gatewayAncestor(namespacedName, section))
			continue
		}
		listenerSet := e.w.sets[namespacedName]
		if listenerSet == nil {
			continue
		}
		gw := parentOf(listenerSet)
		lsScope := scope{kind: scopeListenerSet, namespace: ns, name: namespacedName.Name}
		e.overrides.registerListenerSet(lsScope, scope{kind: scopeGateway, namespace: gw.Namespace, name: gw.Name})
		e.overrides.add(lsScope.listener(section), routeScope)
		ancs = append(ancs, setAncestor(namespacedName, section))
	}
	if rerr != nil {
		for _, a := range ancs {
			p.status.reject(a, rerr.reason, rerr.msg)
		}
		return
	}

	var rule func(int) bool
	if ruleIdx >= 0 {
		rule = func(i int) bool { return i == ruleIdx }
	}
	rs := e.w.irRoutes[key]
	if p.mergeType == nil {
		if err := e.check(e.applied(p), t.kind); err != nil {
			for _, a := range ancs {
				p.status.reject(a, reasonInvalid, conditions.ErrorMessage(err))
			}
		}
		e.apply(rs, e.applied(p), rule)
	} else {
		e.mergeOnListeners(p, rs, rule, routeScope)
	}
	for _, a := range ancs {
		p.status.accept(a)
	}
	e.warnDeprecated(p, ancs...)
	if t.section == nil && len(status.sections) > 0 {
		names := make([]string, 0, len(status.sections))
		for n := range status.sections {
			names = append(names, n)
		}
		sort.Strings(names)
		msg := fmt.Sprintf("This policy is being overridden by other %s for these route rules: %v", e.k.routeOverride, names)
		for _, a := range ancs {
			p.status.set(a, conditions.New(condOverridden, "True", reasonOverridden, msg))
		}
	}
}

// mergeOnListeners merges a route policy with mergeType into the closest parent policy
// of each listener the route is on (MRG-02): a Gateway listener looks at its own policy,
// then the Gateway's; a ListenerSet listener at its own, the ListenerSet's, then the
// parent Gateway's, never a sibling Gateway listener's.
func (e *engine[T]) mergeOnListeners(p *pol[T], rs []irRoute, rule func(int) bool, routeScope scope) {
	var order []*gatewayapi.ListenerNode
	groups := map[*gatewayapi.ListenerNode][]irRoute{}
	for _, r := range rs {
		if _, ok := groups[r.listener]; !ok {
			order = append(order, r.listener)
		}
		groups[r.listener] = append(groups[r.listener], r)
	}
	for _, l := range order {
		gwNN := types.NamespacedName{Namespace: l.Gateway.Object.Namespace, Name: l.Gateway.Object.Name}
		var (
			anc    result.ParentRef
			parent *pol[T]
			pscope scope
		)
		if l.Set != nil {
			lsNN := types.NamespacedName{Namespace: l.Set.Namespace, Name: l.Set.Name}
			anc = setAncestor(lsNN, l.Name)
			if q, ok := e.lsPolicy[sectionKey{lsNN, l.Name}]; ok {
				parent, pscope = q,
					scope{kind: scopeListenerSetListener, namespace: lsNN.Namespace, name: lsNN.Name, section: l.Name}
			} else if q, ok := e.lsPolicy[sectionKey{lsNN, ""}]; ok {
				parent, pscope = q, scope{kind: scopeListenerSet, namespace: lsNN.Namespace, name: lsNN.Name}
			} else if q, ok := e.gwPolicy[sectionKey{gwNN, ""}]; ok {
				parent, pscope = q, scope{kind: scopeGateway, namespace: gwNN.Namespace, name: gwNN.Name}
			}
		} else {
			anc = gatewayAncestor(gwNN, l.Name)
			if q, ok := e.gwPolicy[sectionKey{gwNN, l.Name}]; ok {
				parent, pscope = q, scope{kind: scopeGatewayListener, namespace: gwNN.Namespace, name: gwNN.Name, section: l.Name}
			} else if q, ok := e.gwPolicy[sectionKey{gwNN, ""}]; ok {
				parent, pscope = q, scope{kind: scopeGateway, namespace: gwNN.Namespace, name: gwNN.Name}
			}
		}
		if parent == nil {
			e.rejectInvalid(p, anc, routeScope.routeKind)
			e.apply(groups[l], e.applied(p), rule)
			continue
		}
		a, err := e.merge(parent, p)
		if err == nil {
			err = e.check(a, routeScope.routeKind)
		}
		if err != nil {
			p.status.reject(anc, reasonInvalid, conditions.ErrorMessage(err))
			continue
		}
		e.apply(groups[l], a, rule)
		e.merged.add(pscope, routeScope)
		e.merges = append(e.merges, mergeRecord{child: p.ref, status: &p.status, anc: anc, parent: pscope, route: routeScope})
		p.status.set(anc,
			conditions.New(condMerged, "True", reasonMerged,
				fmt.Sprintf("Merged with policy %s/%s", parent.ref.Namespace, parent.ref.Name)))
	}
}

// rejectInvalid rejects p at ancestor anc when what it applies fails the checks for a
// target of kind: the one rejection a Gateway, a ListenerSet and a route rule without a
// parent policy to merge with share.
func (e *engine[T]) rejectInvalid(p *pol[T], anc result.ParentRef, kind string) {
	if err := e.check(e.applied(p), kind); err != nil {
		p.status.reject(anc, reasonInvalid, conditions.ErrorMessage(err))
	}
}

// forListenerSet attaches a policy to a ListenerSet or one of its listeners; the
// ancestor is the ListenerSet itself.
func (e *engine[T]) forListenerSet(p *pol[T], t target) {
	namespacedName := types.NamespacedName{Namespace: t.namespace, Name: t.name}
	listenerSet := e.w.sets[namespacedName]
	if listenerSet == nil {
		return
	}
	status := state(e.lsState, namespacedName)
	rerr := e.claim(status, t, t.section != nil && hasSetListener(listenerSet, *t.section), "Listener "+t.name)
	gwNN := parentOf(listenerSet)
	g := e.w.gateways[gwNN]
	if g == nil {
		return
	}
	anc := setAncestor(namespacedName, t.sectionOr())
	if rerr != nil {
		p.status.reject(anc, rerr.reason, rerr.msg)
		return
	}
	lsScope := scope{kind: scopeListenerSet, namespace: namespacedName.Namespace, name: namespacedName.Name}
	gwScope := scope{kind: scopeGateway, namespace: gwNN.Namespace, name: gwNN.Name}
	own := lsScope
	if t.section != nil {
		own = lsScope.listener(*t.section)
		e.overrides.registerListenerSet(lsScope, gwScope)
		e.overrides.add(lsScope, own)
	} else {
		e.overrides.add(gwScope, lsScope)
	}
	a := e.applied(p)
	for _, l := range g.Listeners {
		if l.Set == nil || l.Set.Namespace != namespacedName.Namespace || l.Set.Name != namespacedName.Name {
			continue
		}
		if t.section != nil && l.Name != *t.section {
			continue
		}
		e.apply(e.w.byListener[l], a, nil)
	}
	e.rejectInvalid(p, anc, "ListenerSet")
	p.status.accept(anc)
	e.scopeConditions(p, anc, own)
	e.warnDeprecated(p, anc)
}

// forGateway attaches a policy to a Gateway (all its listeners, ListenerSet listeners
// included) or to one of its own listeners.
func (e *engine[T]) forGateway(p *pol[T], t target) {
	namespacedName := types.NamespacedName{Namespace: t.namespace, Name: t.name}
	g := e.w.gateways[namespacedName]
	if g == nil {
		return
	}
	status := state(e.gwState, namespacedName)
	rerr := e.claim(status, t, t.section != nil && hasDirectListener(g, *t.section), "Listener "+namespacedName.String())
	anc := gatewayAncestor(namespacedName, t.sectionOr())
	if rerr != nil {
		p.status.reject(anc, rerr.reason, rerr.msg)
		return
	}
	own := scope{kind: scopeGateway, namespace: namespacedName.Namespace, name: namespacedName.Name}
	if t.section != nil {
		listenerScope := own.listener(*t.section)
		e.overrides.add(own, listenerScope)
		own = listenerScope
	}
	a := e.applied(p)
	for _, l := range g.Listeners {
		if t.section != nil && (l.Set != nil || l.Name != *t.section) {
			continue
		}
		e.apply(e.w.byListener[l], a, nil)
	}
	e.rejectInvalid(p, anc, "Gateway")
	p.status.accept(anc)
	e.warnDeprecated(p, anc)
	e.scopeConditions(p, anc, own)
}
