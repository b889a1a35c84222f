package gatewayapi

import (
	"sort"

	"github.com/egharness/egharness/translator/ir"
)

// sortRoutes puts a listener's routes in EG's precedence order (RT-09): Exact path before
// RegularExpression before PathPrefix; then the longer path value (the prefix "/" counts
// as empty); then more header matches (":method" is one), more exact header matches, more
// cookie matches, more exact cookie matches, more query matches, more exact query matches. Routes equal on all of these
// keep the order they were added in: older route first, then namespace/name, then hostname,
// rule and match index.
func sortRoutes(routes []*ir.HTTPRoute) {
	sort.SliceStable(routes, func(i, j int) bool { return outranks(routes[i], routes[j]) })
}

func outranks(a, b *ir.HTTPRoute) bool {
	ka, kb := rankKey(a), rankKey(b)
	for i := range ka {
		if ka[i] != kb[i] {
			return ka[i] > kb[i]
		}
	}
	return false
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
