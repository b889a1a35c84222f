package xds

import (
	"testing"

	listenerv3 "github.com/envoyproxy/go-control-plane/envoy/config/listener/v3"
	routev3 "github.com/envoyproxy/go-control-plane/envoy/config/route/v3"

	"github.com/egharness/egharness/translator/ir"
)

// TestLoopbackDenialMatchesEG compares the per-route loopback denial of every dynamic
// resolver route in EG's xDS testdata with ours for the same host header.
func TestLoopbackDenialMatchesEG(t *testing.T) {
	for _, name := range []string{"http-route-dynamic-resolver", "http-route-dynamic-resolver-with-host-rewriting"} {
		checked := 0
		for _, want := range egRoutes(t, name) {
			if want.TypedPerFilterConfig[dfpLoopbackFilter] == nil {
				continue
			}
			header := ":authority"
			if h := want.GetRoute().GetHostRewriteHeader(); h != "" {
				header = h
			}
			got := &routev3.Route{Name: want.Name}
			if err := setPerRoute(got, dfpLoopbackFilter, loopbackDenial(header)); err != nil {
				t.Fatal(err)
			}
			samePerFilter(t, dfpLoopbackFilter, got, want)
			checked++
		}
		if checked == 0 {
			t.Errorf("%s: no route with %s", name, dfpLoopbackFilter)
		}
	}
}

// TestSNIDynamicResolverMatchesEG compares a TLS passthrough route's loopback-SNI RBAC and
// SNI proxy filters with EG's testdata (its listener is on port 10443).
func TestSNIDynamicResolverMatchesEG(t *testing.T) {
	l := &ir.TCPListener{Protocol: "TLS", Port: 10443}
	r := &ir.TCPRoute{Destination: &ir.Destination{Settings: []*ir.Backend{{DynamicResolver: true}}}}
	fc := &listenerv3.FilterChain{Filters: []*listenerv3.Filter{{Name: tcpProxyFilter}}}
	withSNIDynamicResolver(fc, l, r, tcpStatPrefix(l))
	if len(fc.Filters) != 3 || fc.Filters[2].Name != tcpProxyFilter {
		t.Fatalf("filters: %v", fc.Filters)
	}
	sameAny(t, fc.Filters[0].GetTypedConfig(), egListenerFilter(t, "tls-route-dynamic-resolver", networkRBACFilter))
	sameAny(t, fc.Filters[1].GetTypedConfig(), egListenerFilter(t, "tls-route-dynamic-resolver", sniDFPFilter))
}
