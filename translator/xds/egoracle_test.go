package xds

import (
	"testing"

	listenerv3 "github.com/envoyproxy/go-control-plane/envoy/config/listener/v3"
	routev3 "github.com/envoyproxy/go-control-plane/envoy/config/route/v3"
	"github.com/google/go-cmp/cmp"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/testing/protocmp"
	"google.golang.org/protobuf/types/known/anypb"
)

// egRoutes reads the route configurations of one of EG v1.9.1's xDS translator test cases
// from the module cache (the oracle); the test is skipped where the cache does not hold it.
func egRoutes(t *testing.T, name string) map[string]*routev3.Route {
	t.Helper()
	return egReleaseRoutes(t, "v1.9.1", name+".routes.yaml")
}

// egReleaseRoutes reads the routes of a route configuration file of an EG release's xDS
// translator test cases, by route name.
func egReleaseRoutes(t *testing.T, version, file string) map[string]*routev3.Route {
	t.Helper()
	routes := map[string]*routev3.Route{}
	for _, js := range egOutput(t, version, file) {
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

// unpack is the message a packed config holds; one that does not unpack fails the test.
func unpack(t *testing.T, packed *anypb.Any) proto.Message {
	t.Helper()
	m, err := packed.UnmarshalNew()
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// sameAny compares two packed configs field by field.
func sameAny(t *testing.T, got, want *anypb.Any) {
	t.Helper()
	gm, wm := unpack(t, got), unpack(t, want)
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
	gm, wm := unpack(t, g), unpack(t, w)
	// Compared field by field (nested Anys unpacked): their bytes may order map entries
	// differently.
	if d := cmp.Diff(wm, gm, protocmp.Transform()); d != "" {
		t.Errorf("%s: %s differs from EG:\n%s", want.Name, filter, d)
	}
}
