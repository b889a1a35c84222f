package xds

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	listenerv3 "github.com/envoyproxy/go-control-plane/envoy/config/listener/v3"
	hcmv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/network/http_connection_manager/v3"
	"github.com/google/go-cmp/cmp"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/testing/protocmp"
	"sigs.k8s.io/yaml"

	"github.com/egharness/egharness/translator/ir"
)

// The rate limit IR of EG's xDS test case ratelimit-global-shared (v1.9.1; v1.8.0 has the
// first four routes, without costs), as the policy stage builds it.
func rateLimitGlobalSharedIR(v18 bool) *ir.XDS {
	str := func(s string) *string { return &s }
	header := func(name, v string) []*ir.RateLimitMatch {
		return []*ir.RateLimitMatch{{StringMatch: ir.StringMatch{Name: name, Exact: str(v)}}}
	}
	perSecond := func(n uint32) ir.RateLimitValue { return ir.RateLimitValue{Requests: n, Unit: "Second", Seconds: 1} }
	zero, three := uint64(0), uint64(3)
	rule := func(name string, shared bool, hs []*ir.RateLimitMatch, n uint32) *ir.RateLimitRule {
		return &ir.RateLimitRule{Name: name, Shared: shared, Headers: hs, Limit: perSecond(n)}
	}
	third := rule("test-namespace/test-policy-2/rule/0", true, header("x-user-id", "two"), 10)
	if !v18 {
		third.RequestCost = &ir.RateLimitCost{Number: &zero}
		third.ResponseCost = &ir.RateLimitCost{Format: str("%DYNAMIC_METADATA(my.cost.ns:request_cost)%")}
	}
	routes := map[string][]*ir.RateLimitRule{
		"first-route": {rule("test-namespace/test-policy-1/rule/0", true, header("x-user-id", "one"), 5)},
		"second-route": {
			rule("test-namespace/test-policy-1/rule/0", true, header("x-user-id", "one"), 5),
			rule("test-namespace/test-policy-1/rule/1", true, header("x-org-id", "one"), 5),
		},
		"third-route":  {third},
		"fourth-route": {rule("test-namespace/test-policy-3/rule/0", false, header("x-user-id", "two"), 10)},
	}
	order := []string{"first-route", "second-route", "third-route", "fourth-route"}
	if !v18 {
		shared := rule("test-namespace/test-policy-4/rule/0", true, header("x-user-id", "shared-with-cost"), 5)
		shared.RequestCost = &ir.RateLimitCost{Number: &three}
		routes["fifth-route"] = []*ir.RateLimitRule{shared,
			rule("test-namespace/test-policy-4/rule/1", false, header("x-user-id", "non-shared"), 5)}
		order = append(order, "fifth-route")
	}
	l := &ir.HTTPListener{Name: "first-listener", Gateway: "default/gw", SectionName: "http", Address: "0.0.0.0",
		Port: 10080, GatewayPort: 80, Hostnames: []string{"*"}}
	for i, name := range order {
		l.Routes = append(l.Routes, &ir.HTTPRoute{
			Name: name, Hostname: "*", Source: ir.Source{Kind: "HTTPRoute", Namespace: "default", Name: "r"},
			Destination: &ir.Destination{Name: name + "-dest", Settings: []*ir.Backend{{
				Name: name + "-dest/backend/0", Weight: 1, Endpoints: []ir.Endpoint{{Host: "1.2.3.4", Port: uint32(50000 + i)}},
			}}},
			RateLimit: &ir.RateLimit{Global: routes[name]},
		})
	}
	return &ir.XDS{HTTP: []*ir.HTTPListener{l}}
}

// egOutput reads one output file of an EG release's xDS translator test cases as JSON
// documents.
func egOutput(t *testing.T, version, file string) [][]byte {
	t.Helper()
	out, err := exec.Command("go", "env", "GOMODCACHE").Output()
	if err != nil {
		t.Skipf("go env GOMODCACHE: %v", err)
	}
	path := filepath.Join(strings.TrimSpace(string(out)), "github.com/envoyproxy/gateway@"+version,
		"internal/xds/translator/testdata/out/xds-ir", file)
	data, err := os.ReadFile(path)
	if err != nil {
		t.Skipf("EG %s testdata not in the module cache: %v", version, err)
	}
	var docs []any
	if err := yaml.Unmarshal(data, &docs); err != nil {
		t.Fatal(err)
	}
	var jsons [][]byte
	for _, d := range docs {
		js, err := yaml.Marshal(d)
		if err != nil {
			t.Fatal(err)
		}
		if js, err = yaml.YAMLToJSON(js); err != nil {
			t.Fatal(err)
		}
		jsons = append(jsons, js)
	}
	return jsons
}

// Global rate limits as EG v1.9.1 and v1.8.0 write them for the same rules (BTP-03): the
// connection manager's ratelimit filters, and each route's rate limits, in typedPerFilterConfig
// per domain (v1.9) or, for a route with a shared rule, in the route action (v1.8).
func TestGlobalRateLimitsMatchEG(t *testing.T) {
	for _, tc := range []struct {
		version   string
		perDomain bool
	}{{"v1.9.1", true}, {"v1.8.0", false}} {
		t.Run(tc.version, func(t *testing.T) {
			out, err := Translator{Features: Features{RateLimitPerDomain: tc.perDomain},
				RateLimit: &RateLimitService{Host: "ratelimit", Port: 8081}}.Translate(rateLimitGlobalSharedIR(!tc.perDomain))
			if err != nil {
				t.Fatal(err)
			}
			got := routesByName(out)
			want := egReleaseRoutes(t, tc.version, "ratelimit-global-shared.routes.yaml")
			if len(want) != len(got) {
				t.Fatalf("%d routes, EG %d", len(got), len(want))
			}
			for name, w := range want {
				g := got[name]
				if g == nil {
					t.Fatalf("no route %s", name)
				}
				if d := cmp.Diff(w.GetRoute().GetRateLimits(), g.GetRoute().GetRateLimits(), protocmp.Transform()); d != "" {
					t.Errorf("%s route.rateLimits differ from EG:\n%s", name, d)
				}
				for k := range w.TypedPerFilterConfig {
					samePerFilter(t, k, g, w)
				}
				for k := range g.TypedPerFilterConfig {
					if w.TypedPerFilterConfig[k] == nil {
						t.Errorf("%s: per-route config %s that EG does not write", name, k)
					}
				}
			}
			var egFilters []*hcmv3.HttpFilter
			for _, js := range egOutput(t, tc.version, "ratelimit-global-shared.listeners.yaml") {
				l := &listenerv3.Listener{}
				if err := protojson.Unmarshal(js, l); err != nil {
					t.Fatal(err)
				}
				hcm := &hcmv3.HttpConnectionManager{}
				if err := l.DefaultFilterChain.Filters[0].GetTypedConfig().UnmarshalTo(hcm); err != nil {
					t.Fatal(err)
				}
				egFilters = hcm.HttpFilters
			}
			hcm := &hcmv3.HttpConnectionManager{}
			if err := out.Listeners[0].DefaultFilterChain.Filters[0].GetTypedConfig().UnmarshalTo(hcm); err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(egFilters, hcm.HttpFilters, protocmp.Transform()); d != "" {
				t.Errorf("HTTP filters differ from EG:\n%s", d)
			}
		})
	}
}
