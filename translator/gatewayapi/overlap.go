package gatewayapi

import (
	"sort"
	"strings"

	"github.com/egharness/egharness/translator/ir"
	"github.com/egharness/egharness/translator/resource"
	"github.com/egharness/egharness/translator/result"
)

// overlapKey is what two routes must share, on one listener, to match exactly the same
// requests (RT-11): hostname, path (a non-root prefix without its trailing "/", as the xDS
// stage writes it), and the header and query matchers as sets (header names ignore case).
type overlapKey struct {
	host, path, headers, query, cookies string
}

func keyOf(r *ir.HTTPRoute) overlapKey {
	k := overlapKey{host: r.Hostname, headers: matchSetKey(r.Headers, true), query: matchSetKey(r.QueryParams, false),
		cookies: matchSetKey(r.Cookies, false)}
	p := r.PathMatch
	switch {
	case p == nil:
		k.path = "p/"
	case p.Exact != nil:
		k.path = "e" + *p.Exact
	case p.SafeRegex != nil:
		k.path = "r" + *p.SafeRegex
	case p.Prefix != nil:
		v := *p.Prefix
		if v != "/" {
			v = strings.TrimSuffix(v, "/")
		}
		k.path = "p" + v
	}
	return k
}

func matchSetKey(ms []*ir.StringMatch, foldName bool) string {
	parts := make([]string, 0, len(ms))
	for _, m := range ms {
		name := m.Name
		if foldName {
			name = strings.ToLower(name)
		}
		var kind string
		switch {
		case m.Exact != nil:
			kind = "e"
		case m.Prefix != nil:
			kind = "p"
		case m.Suffix != nil:
			kind = "s"
		case m.SafeRegex != nil:
			kind = "r"
		}
		parts = append(parts, name+"\x00"+kind+"\x00"+m.Value())
	}
	sort.Strings(parts)
	return strings.Join(parts, "\x01")
}

// markOverlaps sets RouteRulesOverlap on each parent entry of routes that share a match with
// another route on the same listener. Duplicates inside one route do not count.
func (rt *routeTranslator) markOverlaps() {
	// per listener: route → the other routes it overlaps with
	conflicts := map[*listenerCtx]map[resource.Ref]map[resource.Ref]bool{}
	for _, g := range rt.gateways {
		for _, l := range g.listeners {
			if l.ir == nil {
				continue
			}
			buckets := map[overlapKey]map[resource.Ref]bool{}
			for _, r := range l.ir.Routes {
				k := keyOf(r)
				if buckets[k] == nil {
					buckets[k] = map[resource.Ref]bool{}
				}
				buckets[k][resource.Ref{Kind: r.Source.Kind, Namespace: r.Source.Namespace, Name: r.Source.Name}] = true
			}
			for _, members := range buckets {
				if len(members) < 2 {
					continue
				}
				if conflicts[l] == nil {
					conflicts[l] = map[resource.Ref]map[resource.Ref]bool{}
				}
				for m := range members {
					if conflicts[l][m] == nil {
						conflicts[l][m] = map[resource.Ref]bool{}
					}
					for o := range members {
						if o != m {
							conflicts[l][m][o] = true
						}
					}
				}
			}
		}
	}
	type parentKey struct {
		route  resource.Ref
		parent result.ParentRef
	}
	perParent := map[parentKey]map[resource.Ref]bool{}
	var order []parentKey
	for _, a := range rt.attachments {
		others := conflicts[a.listener][a.route]
		if len(others) == 0 {
			continue
		}
		pk := parentKey{a.route, a.parent}
		if perParent[pk] == nil {
			perParent[pk] = map[resource.Ref]bool{}
			order = append(order, pk)
		}
		for o := range others {
			perParent[pk][o] = true
		}
	}
	for _, pk := range order {
		names := make([]string, 0, len(perParent[pk]))
		for o := range perParent[pk] {
			names = append(names, o.Kind+" "+o.Namespace+"/"+o.Name)
		}
		sort.Strings(names)
		ps := rt.st.parent(pk.route, pk.parent)
		ps.Conditions = setCondition(ps.Conditions, cond("RouteRulesOverlap", "True", "RouteRulesOverlap", msgOverlapPrefix+strings.Join(names, ", ")))
	}
}
