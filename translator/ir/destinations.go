package ir

import "iter"

// Destinations yields every destination of the IR with the name of the route that owns it,
// in output order: HTTP routes (each route's own destination, then its mirrors'), then
// TCP/TLS routes, then UDP routes. Routes without a destination are left out. The later
// stages (secrets, SDS clusters, the live rewrite, the management API) all walk the
// destinations this one way, so that a new kind of route is added here once.
func (x *XDS) Destinations() iter.Seq2[string, *Destination] {
	return func(yield func(string, *Destination) bool) {
		if x == nil {
			return
		}
		for _, l := range x.HTTP {
			for _, r := range l.Routes {
				if r.Destination != nil && !yield(r.Name, r.Destination) {
					return
				}
				for _, m := range r.Mirrors {
					if m.Destination != nil && !yield(r.Name, m.Destination) {
						return
					}
				}
			}
		}
		for _, l := range x.TCP {
			for _, r := range l.Routes {
				if r.Destination != nil && !yield(r.Name, r.Destination) {
					return
				}
			}
		}
		for _, l := range x.UDP {
			if r := l.Route; r != nil && r.Destination != nil && !yield(r.Name, r.Destination) {
				return
			}
		}
	}
}
