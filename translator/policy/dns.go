package policy

import (
	egv1a1 "github.com/envoyproxy/gateway/api/v1alpha1"

	"github.com/egharness/egharness/translator/ir"
)

// resolveDNS sets the dns of the BackendTrafficPolicy in force on every route, HTTP, TCP
// or UDP (EG v1.9 applies a policy's dns to all three kinds of route).
func resolveDNS(x *ir.XDS) {
	for _, l := range x.HTTP {
		for _, r := range l.Routes {
			r.Policies.DNS = ResolveDNS(r.Policies.BackendTraffic)
		}
	}
	for _, l := range x.TCP {
		for _, r := range l.Routes {
			r.Policies.DNS = ResolveDNS(r.Policies.BackendTraffic)
		}
	}
	for _, l := range x.UDP {
		if r := l.Route; r != nil {
			r.Policies.DNS = ResolveDNS(r.Policies.BackendTraffic)
		}
	}
}

// ResolveDNS is a BackendTrafficPolicy's dns as the xDS stage takes it, named after the
// policy (after a merge, the route's own); nil without one. Exported for the xDS stage's
// tests, which build routes by hand.
func ResolveDNS(a *ir.Applied[egv1a1.BackendTrafficPolicySpec]) *ir.DNS {
	if a == nil || a.Spec == nil || a.Spec.DNS == nil {
		return nil
	}
	d := a.Spec.DNS
	out := &ir.DNS{
		Policy:      a.Policy.Namespace + "/" + a.Policy.Name,
		RefreshRate: ir.Duration(d.DNSRefreshRate),
		RespectTTL:  d.RespectDNSTTL,
	}
	if d.LookupFamily != nil {
		out.LookupFamily = string(*d.LookupFamily)
	}
	return out
}
