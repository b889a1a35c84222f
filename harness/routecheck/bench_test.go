package routecheck

import (
	"fmt"
	"testing"

	listenerv3 "github.com/envoyproxy/go-control-plane/envoy/config/listener/v3"
	routev3 "github.com/envoyproxy/go-control-plane/envoy/config/route/v3"
)

// BenchmarkCheck: one listener, one virtual host with 1000 routes, request
// matching the last route (worst case linear scan).
func BenchmarkCheck(b *testing.B) {
	const n = 1000
	routes := make([]*routev3.Route, n)
	for i := range routes {
		routes[i] = prefixRoute(fmt.Sprintf("r%d", i), fmt.Sprintf("/svc-%04d/", i), fmt.Sprintf("c%d", i))
	}
	rc := routeConfig("rc", vhost("vh", []string{"bench.example.com"}, routes...))
	tbl, err := New([]*listenerv3.Listener{listener("l", 10080, httpChain(b, "fc", "rc"))},
		[]*routev3.RouteConfiguration{rc})
	if err != nil {
		b.Fatal(err)
	}
	req := Request{Port: 10080, Host: "bench.example.com", Path: fmt.Sprintf("/svc-%04d/items?id=7", n-1)}
	want := fmt.Sprintf("c%d", n-1)
	if ans, err := tbl.Check(req); err != nil || ans.Cluster != want {
		b.Fatalf("sanity: got %+v, %v; want cluster %s", ans, err, want)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		if _, err := tbl.Check(req); err != nil {
			b.Fatal(err)
		}
	}
}
