package policy

import (
	"fmt"
	"sort"
	"strings"
)

// scopeKind is a place a policy can attach to.
type scopeKind int

const (
	scopeGateway scopeKind = iota
	scopeGatewayListener
	scopeListenerSet
	scopeListenerSetListener
	scopeRoute
	scopeRouteRule
)

// scope is one attachment point: a Gateway, a Gateway listener, a ListenerSet, one of its
// listeners, a route or a named route rule.
type scope struct {
	kind      scopeKind
	namespace string
	name      string
	section   string
	routeKind string
}

// whole is the scope of the whole object a section scope belongs to.
func (s scope) whole() scope {
	switch s.kind {
	case scopeGatewayListener:
		return scope{kind: scopeGateway, namespace: s.namespace, name: s.name}
	case scopeListenerSetListener:
		return scope{kind: scopeListenerSet, namespace: s.namespace, name: s.name}
	case scopeRouteRule:
		return scope{kind: scopeRoute, namespace: s.namespace, name: s.name, routeKind: s.routeKind}
	}
	return s
}

// listener is the scope of the listener section of a Gateway or ListenerSet scope, the
// inverse of whole; no section ("") is the whole object's scope.
func (s scope) listener(section string) scope {
	if section == "" {
		return s
	}
	switch s.kind {
	case scopeGateway:
		return scope{kind: scopeGatewayListener, namespace: s.namespace, name: s.name, section: section}
	case scopeListenerSet:
		return scope{kind: scopeListenerSetListener, namespace: s.namespace, name: s.name, section: section}
	}
	return s
}

type scopeSet map[scope]struct{}

// scopeGraph records which more specific scopes displace (or merge into) the policy of a
// parent scope, and which scopes structurally contain which, so that a Gateway policy's
// status can list everything below it that another policy took over (POL-04).
type scopeGraph struct {
	children map[scope]scopeSet
	contains map[scope]scopeSet
}

func newScopeGraph() *scopeGraph {
	return &scopeGraph{children: map[scope]scopeSet{}, contains: map[scope]scopeSet{}}
}

func (g *scopeGraph) add(parent, child scope) {
	if g.children[parent] == nil {
		g.children[parent] = scopeSet{}
	}
	g.children[parent][child] = struct{}{}
	switch parent.kind {
	case scopeGatewayListener, scopeListenerSetListener, scopeRouteRule:
		g.contain(parent.whole(), parent)
	}
}

// remove drops one parent → child relation.
func (g *scopeGraph) remove(parent, child scope) {
	delete(g.children[parent], child)
}

// registerListenerSet records that the ListenerSet's listeners are below the Gateway.
func (g *scopeGraph) registerListenerSet(listenerSet, gw scope) { g.contain(gw, listenerSet) }

func (g *scopeGraph) contain(outer, inner scope) {
	if g.contains[outer] == nil {
		g.contains[outer] = scopeSet{}
	}
	g.contains[outer][inner] = struct{}{}
}

func (g *scopeGraph) direct(parent scope) scopeSet {
	out := scopeSet{}
	for c := range g.children[parent] {
		out[c] = struct{}{}
	}
	return out
}

// withDescendants is the parent's direct children plus those recorded under scopes it
// contains; a listener scope also inherits the routes recorded on its whole Gateway or
// ListenerSet, since a route attached to the whole object attaches through each listener.
func (g *scopeGraph) withDescendants(parent scope) scopeSet {
	out := g.direct(parent)
	switch parent.kind {
	case scopeGateway, scopeListenerSet, scopeRoute:
		for d := range g.contains[parent] {
			for c := range g.children[d] {
				out[c] = struct{}{}
			}
			if d.kind == scopeListenerSet {
				for sub := range g.contains[d] {
					for c := range g.children[sub] {
						out[c] = struct{}{}
					}
				}
			}
		}
	case scopeGatewayListener, scopeListenerSetListener:
		for c := range g.children[parent.whole()] {
			if c.kind == scopeRoute {
				out[c] = struct{}{}
			}
		}
	}
	return out
}

func (s scopeSet) minus(o scopeSet) scopeSet {
	out := scopeSet{}
	for k := range s {
		if _, ok := o[k]; !ok {
			out[k] = struct{}{}
		}
	}
	return out
}

// describe words a set of scopes as EG's status messages do, grouped by kind.
func (s scopeSet) describe() string {
	if len(s) == 0 {
		return ""
	}
	byKind := map[scopeKind][]string{}
	for sc := range s {
		e := sc.namespace + "/" + sc.name
		if sc.section != "" {
			e += "/" + sc.section
		}
		byKind[sc.kind] = append(byKind[sc.kind], e)
	}
	var parts []string
	for _, o := range []struct {
		kind  scopeKind
		label string
	}{
		{scopeGatewayListener, "these gateway listeners"},
		{scopeListenerSet, "these listenersets"},
		{scopeListenerSetListener, "these listenerset listeners"},
		{scopeRoute, "these routes"},
		{scopeRouteRule, "these route rules"},
	} {
		if l, ok := byKind[o.kind]; ok {
			sort.Strings(l)
			parts = append(parts, fmt.Sprintf("%s: %v", o.label, l))
		}
	}
	return strings.Join(parts, " and ")
}
