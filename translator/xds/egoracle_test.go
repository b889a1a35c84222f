package xds

import (
	"testing"

	listenerv3 "github.com/envoyproxy/go-control-plane/envoy/config/listener/v3"
	routev3 "github.com/envoyproxy/go-control-plane/envoy/config/route/v3"
	"github.com/google/go-cmp/cmp"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/testing/protocmp"
	"google.golang.org/protobuf/types/known/anypb"
)

// egRoutes reads the route configurations of one of EG v1.9.1's xDS translator test cases
// from the module cache (the oracle); the test is skipped where the cache does not hold it.
func egRoutes(t *testing.T, name string) map[string]*routev3.Route {
	t.Helper()
	routes := map[string]*routev3.Route{}
	for _, js := range egDocs(t, name+".routes.yaml") {
		rc := &routev3.RouteConfiguration{}
		if err := protojson.Unmarshal(js, rc); err != nil {
			t.Fatal(err)
		}
		for _, vh := range rc.VirtualHosts {
			for _, r := range vh.Routes {
				routes[r.Name] = r
			}
		}
	}
	return routes
}

// egDocs reads one output file of EG v1.9.1's xDS translator test cases as JSON documents.
func egDocs(t *testing.T, file string) [][]byte {
	t.Helper()
	return egOutput(t, "v1.9.1", file)
}

// egListenerFilter reads the typed config of the first network filter of that name in
// an EG test case's listeners.
func egListenerFilter(t *testing.T, name, filter string) *anypb.Any {
	t.Helper()
	for _, d := range egDocs(t, name+".listeners.yaml") {
		l := &listenerv3.Listener{}
		if err := protojson.Unmarshal(d, l); err != nil {
			t.Fatal(err)
		}
		for _, fc := range l.FilterChains {
			for _, f := range fc.Filters {
				if f.Name == filter {
					return f.GetTypedConfig()
				}
			}
		}
	}
	t.Fatalf("%s: no %s filter", name, filter)
	return nil
}

// sameAny compares two packed configs field by field.
func sameAny(t *testing.T, got, want *anypb.Any) {
	t.Helper()
	gm, err := got.UnmarshalNew()
	if err != nil {
		t.Fatal(err)
	}
	wm, err := want.UnmarshalNew()
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(wm, gm, protocmp.Transform()); d != "" {
		t.Errorf("differs from EG:\n%s", d)
	}
}

// samePerFilter compares a filter's per-route config with EG's.
func samePerFilter(t *testing.T, filter string, got, want *routev3.Route) {
	t.Helper()
	g, w := got.TypedPerFilterConfig[filter], want.TypedPerFilterConfig[filter]
	if w == nil || g == nil {
		t.Fatalf("%s: per-route config for %s: got %v, EG %v", want.Name, filter, g != nil, w != nil)
	}
	gm, err := g.UnmarshalNew()
	if err != nil {
		t.Fatal(err)
	}
	wm, err := w.UnmarshalNew()
	if err != nil {
		t.Fatal(err)
	}
	// Compared field by field (nested Anys unpacked): their bytes may order map entries
	// differently.
	if d := cmp.Diff(wm, gm, protocmp.Transform()); d != "" {
		t.Errorf("%s: %s differs from EG:\n%s", want.Name, filter, d)
	}
}
