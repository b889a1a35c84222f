package gatewayapi

import (
	"sort"
	"strings"

	"github.com/egharness/egharness/translator/conditions"
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
	case connectUpgrade(r):
		// Envoy's CONNECT matcher replaces the path match: such a route takes every
		// CONNECT request whatever its path, and overlaps only other CONNECT routes
		// (a key no path match gives).
		k.path = "CONNECT"
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
//
// A bucket (the routes sharing one key on one listener) is stored once and shared by its
// members, so the work is linear in the number of routes plus the length of the messages:
// expanding buckets into per-route sets of pairs costs gigabytes when thousands of routes
// share one match.
func (translation *routeTranslator) markOverlaps() {
	// per listener: route → the buckets (sorted display names, itself included) it is in
	overlaps := map[*listenerCtx]map[resource.Ref][]*overlapBucket{}
	for _, g := range translation.gateways {
		for _, l := range g.listeners {
			if l.ir == nil {
				continue
			}
			// most keys belong to one route: a bucket (with its set) is made only when a
			// second route shares the key
			slots := make(map[overlapKey]overlapSlot, len(l.ir.Routes))
			var shared []*overlapBucket
			for _, r := range l.ir.Routes {
				k := keyOf(r)
				ref := resource.Ref{Kind: r.Source.Kind, Namespace: r.Source.Namespace, Name: r.Source.Name}
				switch s, ok := slots[k]; {
				case !ok:
					slots[k] = overlapSlot{first: ref}
				case s.bucket != nil:
					s.bucket.members[ref] = true
				case s.first != ref:
					s.bucket = &overlapBucket{members: map[resource.Ref]bool{s.first: true, ref: true}}
					slots[k] = s
					shared = append(shared, s.bucket)
				}
			}
			for _, b := range shared {
				b.sortNames()
				if overlaps[l] == nil {
					overlaps[l] = map[resource.Ref][]*overlapBucket{}
				}
				for m := range b.members {
					overlaps[l][m] = append(overlaps[l][m], b)
				}
			}
		}
	}
	if len(overlaps) == 0 {
		return
	}
	type parentKey struct {
		route  resource.Ref
		parent result.ParentRef
	}
	perParent := map[parentKey][]*overlapBucket{}
	var order []parentKey
	for _, a := range translation.attachments {
		bs := overlaps[a.listener][a.route]
		if len(bs) == 0 {
			continue
		}
		pk := parentKey{a.route, a.parent}
		if _, seen := perParent[pk]; !seen {
			order = append(order, pk)
		}
		perParent[pk] = append(perParent[pk], bs...)
	}
	for _, pk := range order {
		names := conflictNames(pk.route, perParent[pk])
		parentStatus := translation.status.parent(pk.route, pk.parent)
		parentStatus.Conditions = conditions.Set(parentStatus.Conditions,
			conditions.New("RouteRulesOverlap", "True", "RouteRulesOverlap", msgOverlapPrefix+strings.Join(names, ", ")))
	}
}

// overlapSlot is what markOverlaps knows of one key: the first route seen with it, and the
// bucket once another route shares it.
type overlapSlot struct {
	first  resource.Ref
	bucket *overlapBucket
}

// overlapBucket is the routes that share one overlap key on one listener.
type overlapBucket struct {
	members map[resource.Ref]bool
	names   []string // "Kind namespace/name" of every member, sorted
	refs    []resource.Ref
}

func (b *overlapBucket) sortNames() {
	b.refs = make([]resource.Ref, 0, len(b.members))
	for m := range b.members {
		b.refs = append(b.refs, m)
	}
	sort.Slice(b.refs, func(i, j int) bool { return displayName(b.refs[i]) < displayName(b.refs[j]) })
	b.names = make([]string, len(b.refs))
	for i, r := range b.refs {
		b.names[i] = displayName(r)
	}
}

func displayName(r resource.Ref) string { return r.Kind + " " + r.Namespace + "/" + r.Name }

// conflictNames is the sorted names of the routes that share a bucket with route, itself
// left out. One bucket (the common case) needs no set: its names are sorted already.
func conflictNames(route resource.Ref, bs []*overlapBucket) []string {
	if len(bs) == 1 {
		out := make([]string, 0, len(bs[0].names)-1)
		for i, n := range bs[0].names {
			if bs[0].refs[i] != route {
				out = append(out, n)
			}
		}
		return out
	}
	seen := map[resource.Ref]bool{route: true}
	var out []string
	for _, b := range bs {
		for i, r := range b.refs {
			if !seen[r] {
				seen[r] = true
				out = append(out, b.names[i])
			}
		}
	}
	sort.Strings(out)
	return out
}

// connectUpgrade reports whether the BackendTrafficPolicy in force on the route asks for the
// CONNECT upgrade (type matched case-insensitively, as EG does). The reference does not
// translate httpUpgrade (the field registry warns); EG's overlap check reads it.
func connectUpgrade(r *ir.HTTPRoute) bool {
	a := r.Policies.BackendTraffic
	if a == nil || a.Spec == nil {
		return false
	}
	for _, u := range a.Spec.HTTPUpgrade {
		if u != nil && strings.EqualFold(u.Type, "CONNECT") {
			return true
		}
	}
	return false
}

// RouteOverlaps marks overlapping routes once policies are attached (see Output).
type RouteOverlaps struct {
	translation *routeTranslator
	on          bool
}

// Mark writes RouteRulesOverlap on the route parents whose matches overlap, into the
// HTTPRoute and GRPCRoute entries of statuses (the Gateway API stage's), which it replaces.
func (o *RouteOverlaps) Mark(statuses []result.ObjectStatus) []result.ObjectStatus {
	if o == nil || o.translation == nil || !o.on {
		return statuses
	}
	o.translation.markOverlaps()
	for i := range statuses {
		if k := statuses[i].Object.Kind; k != "HTTPRoute" && k != "GRPCRoute" {
			continue
		}
		if s := o.translation.status.byRef[statuses[i].Object]; s != nil {
			statuses[i] = *s
		}
	}
	return statuses
}
