package gatewayapi

import (
	"cmp"
	"slices"

	"github.com/egharness/egharness/translator/ir"
)

// sortRoutes puts a listener's routes in EG's precedence order (RT-09): Exact path before
// RegularExpression before PathPrefix; then the longer path value (the prefix "/" counts
// as empty); then more header matches (":method" is one), more exact header matches, more
// cookie matches, more exact cookie matches, more query matches, more exact query matches. Routes equal on all of these
// keep the order they were added in: older route first, then namespace/name, then hostname,
// rule and match index.
//
// Each route's key is computed once and ties are broken by the position the route was added
// at, so an unstable O(n log n) sort gives the stable order (sort.SliceStable's merging
// costs n log² n, which showed at 10k routes).
func sortRoutes(routes []*ir.HTTPRoute) {
	type ranked struct {
		key [8]int
		pos int
		r   *ir.HTTPRoute
	}
	rs := make([]ranked, len(routes))
	for i, r := range routes {
		rs[i] = ranked{rankKey(r), i, r}
	}
	slices.SortFunc(rs, func(a, b ranked) int {
		for i := range a.key {
			if c := cmp.Compare(b.key[i], a.key[i]); c != 0 { // higher ranks first
				return c
			}
		}
		return cmp.Compare(a.pos, b.pos)
	})
	for i := range rs {
		routes[i] = rs[i].r
	}
}

func rankKey(r *ir.HTTPRoute) [8]int {
	var typ, length int
	if p := r.PathMatch; p != nil {
		switch {
		case p.Exact != nil:
			typ, length = 3, len(*p.Exact)
		case p.SafeRegex != nil:
			typ, length = 2, len(*p.SafeRegex)
		case p.Prefix != nil:
			typ = 1
			if *p.Prefix != "/" {
				length = len(*p.Prefix)
			}
		}
	}
	return [8]int{typ, length, len(r.Headers), exactCount(r.Headers), len(r.Cookies), exactCount(r.Cookies),
		len(r.QueryParams), exactCount(r.QueryParams)}
}

func exactCount(ms []*ir.StringMatch) int {
	n := 0
	for _, m := range ms {
		if m.Exact != nil {
			n++
		}
	}
	return n
}
