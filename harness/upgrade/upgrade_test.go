package upgrade

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"testing"

	clusterv3 "github.com/envoyproxy/go-control-plane/envoy/config/cluster/v3"
	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	endpointv3 "github.com/envoyproxy/go-control-plane/envoy/config/endpoint/v3"
	listenerv3 "github.com/envoyproxy/go-control-plane/envoy/config/listener/v3"
	routev3 "github.com/envoyproxy/go-control-plane/envoy/config/route/v3"
	jwtv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/http/jwt_authn/v3"
	luav3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/http/lua/v3"
	ratelimitv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/http/ratelimit/v3"
	routerv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/http/router/v3"
	hcmv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/network/http_connection_manager/v3"
	tlsv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/transport_sockets/tls/v3"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/anypb"

	"github.com/egharness/egharness/harness/impl"
	"github.com/egharness/egharness/internal/testutil"
	"github.com/egharness/egharness/translator/resource"
	"github.com/egharness/egharness/translator/result"
)

// These tests feed hand-built results (the shapes EG v1.8 and v1.9 produce, per
// behaviors.md) to Compare, to pin the identity matching and the ID table independently of
// which translator stages exist yet. Scenario-level behavior is in suites/upgrade.

func mustAny(t *testing.T, m proto.Message) *anypb.Any {
	t.Helper()
	a, err := anypb.New(m)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

func httpListener(t *testing.T, name string, port uint32, rc string,
	filters ...*hcmv3.HttpFilter) *listenerv3.Listener {
	filters = append(filters,
		&hcmv3.HttpFilter{Name: "envoy.filters.http.router",
			ConfigType: &hcmv3.HttpFilter_TypedConfig{TypedConfig: mustAny(t, &routerv3.Router{})}})
	hcm := &hcmv3.HttpConnectionManager{
		StatPrefix:     "http",
		RouteSpecifier: &hcmv3.HttpConnectionManager_Rds{Rds: &hcmv3.Rds{RouteConfigName: rc}},
		HttpFilters:    filters,
	}
	return &listenerv3.Listener{
		Name: name,
		Address: &corev3.Address{Address: &corev3.Address_SocketAddress{SocketAddress: &corev3.SocketAddress{
			Address: "0.0.0.0", PortSpecifier: &corev3.SocketAddress_PortValue{PortValue: port}}}},
		DefaultFilterChain: &listenerv3.FilterChain{Name: name, Filters: []*listenerv3.Filter{{
			Name:       "envoy.filters.network.http_connection_manager",
			ConfigType: &listenerv3.Filter_TypedConfig{TypedConfig: mustAny(t, hcm)}}}},
	}
}

func httpFilter(t *testing.T, name string, m proto.Message) *hcmv3.HttpFilter {
	return &hcmv3.HttpFilter{Name: name, ConfigType: &hcmv3.HttpFilter_TypedConfig{TypedConfig: mustAny(t, m)}}
}

func inline(s string) *corev3.DataSource {
	return &corev3.DataSource{Specifier: &corev3.DataSource_InlineString{InlineString: s}}
}

func pipeCluster(name, path string) *clusterv3.Cluster {
	return &clusterv3.Cluster{Name: name, ClusterDiscoveryType: &clusterv3.Cluster_Type{Type: clusterv3.Cluster_STATIC},
		LoadAssignment: &endpointv3.ClusterLoadAssignment{ClusterName: name, Endpoints: []*endpointv3.LocalityLbEndpoints{{
			LbEndpoints: []*endpointv3.LbEndpoint{
				{HostIdentifier: &endpointv3.LbEndpoint_Endpoint{Endpoint: &endpointv3.Endpoint{
					Address: &corev3.Address{Address: &corev3.Address_Pipe{Pipe: &corev3.Pipe{Path: path}}}}}}}}}}}
}

func systemCA(name string) *tlsv3.Secret {
	return &tlsv3.Secret{Name: name,
		Type: &tlsv3.Secret_ValidationContext{ValidationContext: &tlsv3.CertificateValidationContext{
			TrustedCa: &corev3.DataSource{
				Specifier: &corev3.DataSource_Filename{Filename: "/etc/ssl/certs/ca-certificates.crt"}}}}}
}

// v1.8 and v1.9 shapes of one Gateway, one route with JWT, a shared rate limit and Lua,
// an SDS cluster and a system CA secret.
func upgradePair(t *testing.T) (before, after *result.Result) {
	provider := &jwtv3.JwtProvider{Issuer: "https://auth.example.com", Audiences: []string{"api"}}
	script := "function envoy_on_request(h) h:headers():add('x-a','1') end"
	rl := &routev3.RateLimit{Actions: []*routev3.RateLimit_Action{{ActionSpecifier: &routev3.RateLimit_Action_GenericKey_{
		GenericKey: &routev3.RateLimit_Action_GenericKey{DescriptorValue: "default/limits/rule/0"}}}}}
	match := &routev3.RouteMatch{PathSpecifier: &routev3.RouteMatch_Prefix{Prefix: "/api"}}
	fwd := &routev3.Route_Route{
		Route: &routev3.RouteAction{ClusterSpecifier: &routev3.RouteAction_Cluster{Cluster: "httproute/default/api/rule/0"}}}
	routeName := "httproute/default/api/rule/0/match/0/www_example_com"

	// v1.8: per-route JWT provider names, rate limits in the route action, Lua source per route.
	bRoute := &routev3.Route{Name: routeName, Match: match,
		Action: &routev3.Route_Route{
			Route: &routev3.RouteAction{ClusterSpecifier: fwd.Route.ClusterSpecifier, RateLimits: []*routev3.RateLimit{rl}}},
		TypedPerFilterConfig: map[string]*anypb.Any{
			"envoy.filters.http.lua/0": mustAny(t,
				&luav3.LuaPerRoute{Override: &luav3.LuaPerRoute_SourceCode{SourceCode: inline(script)}}),
		}}
	before = &result.Result{XDS: result.XDS{
		Listeners: []*listenerv3.Listener{httpListener(t, "default/eg/http", 10080, "default/eg/http",
			httpFilter(t, "envoy.filters.http.jwt_authn",
				&jwtv3.JwtAuthentication{Providers: map[string]*jwtv3.JwtProvider{routeName + "/auth": provider}}))},
		Routes: []*routev3.RouteConfiguration{{Name: "default/eg/http", VirtualHosts: []*routev3.VirtualHost{{
			Name: "default/eg/http/www_example_com", Domains: []string{"www.example.com"}, Routes: []*routev3.Route{bRoute}}}}},
		Clusters: []*clusterv3.Cluster{pipeCluster("sds_var_run_sds", "/var/run/sds.sock")},
		Secrets:  []*tlsv3.Secret{systemCA("backend-tls/default-ca")},
	}}
	// v1.9 with the V2 name scheme: content-hash JWT names, RateLimitPerRoute, listener Lua.
	aRoute := &routev3.Route{Name: routeName, Match: match, Action: fwd,
		TypedPerFilterConfig: map[string]*anypb.Any{
			"envoy.filters.http.ratelimit/default/limits": mustAny(t,
				&ratelimitv3.RateLimitPerRoute{RateLimits: []*routev3.RateLimit{rl}}),
		}}
	after = &result.Result{XDS: result.XDS{
		Listeners: []*listenerv3.Listener{httpListener(t, "tcp-80", 10080, "http-80",
			httpFilter(t, "envoy.filters.http.jwt_authn",
				&jwtv3.JwtAuthentication{Providers: map[string]*jwtv3.JwtProvider{"auth_0123456789abcdef": provider}}),
			httpFilter(t, "envoy.filters.http.lua/envoyextensionpolicy/default/lua/lua/0",
				&luav3.Lua{DefaultSourceCode: inline(script)}))},
		Routes: []*routev3.RouteConfiguration{{Name: "http-80", VirtualHosts: []*routev3.VirtualHost{{
			Name: "www_example_com", Domains: []string{"www.example.com"}, Routes: []*routev3.Route{aRoute}}}}},
		Clusters: []*clusterv3.Cluster{
			pipeCluster("sds_var_run_sds_sock_0123456789abcdef0123456789abcdef", "/var/run/sds.sock")},
		Secrets: []*tlsv3.Secret{systemCA("system_ca_certificates")},
	}}
	return before, after
}

func findingsByID(r *Report) map[string][]Finding {
	out := map[string][]Finding{}
	for _, f := range r.Findings {
		out[f.ID] = append(out[f.ID], f)
	}
	return out
}

func TestXDSMatchedByIdentity(t *testing.T) {
	before, after := upgradePair(t)
	rep := Compare("v1.8", "v1.9", before, after, nil)
	by := findingsByID(rep)
	want := map[string][]string{
		"NAME-02": {"Listener renamed: default/eg/http → tcp-80", "RouteConfiguration renamed: default/eg/http → http-80",
			"VirtualHost renamed: default/eg/http/www_example_com → www_example_com"},
		"SP-06": {"JWTProvider renamed: httproute/default/api/rule/0/match/0/www_example_com/auth → auth_0123456789abcdef"},
		"BTP-03": {"RateLimit moved: route httproute/default/api/rule/0/match/0/www_example_com: " +
			"route.rateLimits → route " +
			"httproute/default/api/rule/0/match/0/www_example_com: " +
			"typedPerFilterConfig[envoy.filters.http.ratelimit/default/limits].rateLimits"},
		"EEP-03": {"LuaScript renamed: envoy.filters.http.lua/0 → " +
			"envoy.filters.http.lua/envoyextensionpolicy/default/lua/lua/0"},
		"SDS-02": {"Cluster renamed: sds_var_run_sds → sds_var_run_sds_sock_0123456789abcdef0123456789abcdef"},
		"SDS-03": {"Secret renamed: backend-tls/default-ca → system_ca_certificates"},
	}
	for id, summaries := range want {
		for _, s := range summaries {
			found := false
			for _, f := range by[id] {
				if f.Summary == s {
					found = true
				}
			}
			if !found {
				t.Errorf("no %s finding %q; %s findings: %v", id, s, id, by[id])
			}
		}
	}
	// Nothing that was matched by identity is reported as removed and added again.
	for _, f := range rep.Findings {
		if f.Change == Removed &&
			(strings.Contains(f.Summary, "Listener") || strings.Contains(f.Summary, "JWTProvider") ||
				strings.Contains(f.Summary, "Secret")) {
			t.Errorf("a renamed thing is reported removed: %s", f.Summary)
		}
	}
	if rep.Breaking() {
		t.Errorf("renames alone are not breaking: %v", rep.Findings)
	}
}

// Patches that address what was renamed or moved miss after the upgrade, and take the ID
// of the rename.
func TestPatchMissesTakeTheRenameID(t *testing.T) {
	before, after := upgradePair(t)
	epp := resource.Ref{Kind: "EnvoyPatchPolicy", Namespace: "default", Name: "tweaks"}
	objs := decodeObjects(t, `apiVersion: gateway.envoyproxy.io/v1alpha1
kind: EnvoyPatchPolicy
metadata: {name: tweaks, namespace: default}
spec:
  targetRef: {group: gateway.networking.k8s.io, kind: Gateway, name: eg}
  type: JSONPatch
  jsonPatches:
  - type: type.googleapis.com/envoy.config.listener.v3.Listener
    name: default/eg/http
    operation: {op: add, path: /per_connection_buffer_limit_bytes, value: 1}
  - type: type.googleapis.com/envoy.config.route.v3.RouteConfiguration
    name: http-80
    operation: {op: add, path: /virtual_hosts/0/routes/0/route/rate_limits/-, value: {}}
  - type: type.googleapis.com/envoy.extensions.transport_sockets.tls.v3.Secret
    name: backend-tls/default-ca
    operation: {op: add, path: /validation_context/match_typed_subject_alt_names, value: []}
  - type: type.googleapis.com/envoy.config.cluster.v3.Cluster
    name: sds_var_run_sds
    operation: {op: add, path: /connect_timeout, value: 1s}
  - type: type.googleapis.com/envoy.config.route.v3.RouteConfiguration
    name: other
    operation: {op: add, path: /x, value: 1}
  - type: type.googleapis.com/envoy.config.route.v3.RouteConfiguration
    name: other
    operation: {op: add, path: /y, value: 1}
`)
	// the route configuration is renamed too: patch 1 addresses the new name, so only the
	// moved rate limit explains its miss
	before.XDS.Routes[0].Name = "http-80"
	before.XDS.Listeners[0] = httpListener(t, "default/eg/http", 10080, "http-80")
	for i := 0; i < 6; i++ {
		before.Patches = append(before.Patches, result.PatchOutcome{Policy: epp, Operation: i, Hit: i != 5})
		after.Patches = append(after.Patches,
			result.PatchOutcome{Policy: epp, Operation: i, Hit: i == 5, Reason: "not found"})
	}
	rep := Compare("v1.8", "v1.9", before, after, objs)
	got := map[string]string{}
	for _, f := range rep.Findings {
		if f.Object == epp {
			got[f.Summary[:len("operation 0")]] = f.ID + " " + string(f.Severity) + " " + f.Before
		}
	}
	want := map[string]string{
		"operation 0": "EPP-05 breaking hit: add /per_connection_buffer_limit_bytes on Listener default/eg/http",
		"operation 1": "BTP-03 breaking hit: add /virtual_hosts/0/routes/0/route/rate_limits/- on RouteConfiguration http-80",
		"operation 2": "SDS-03 breaking hit: add /validation_context/match_typed_subject_alt_names on " +
			"Secret backend-tls/default-ca",
		"operation 3": "SDS-02 breaking hit: add /connect_timeout on Cluster sds_var_run_sds",
		"operation 4": "EPP-04 breaking hit: add /x on RouteConfiguration other",
		"operation 5": "EPP-04 info miss: ",
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s: got %q, want %q", k, got[k], v)
		}
	}
	if !rep.Breaking() {
		t.Error("a patch that stops hitting is breaking")
	}
}

func TestIdenticalResultsHaveNoFindings(t *testing.T) {
	before, _ := upgradePair(t)
	again, _ := upgradePair(t)
	rep := Compare("v1.9", "v1.9", before, again, nil)
	if len(rep.Findings) != 0 {
		t.Errorf("findings between equal results: %+v", rep.Findings)
	}
}

// The JSON shape is exactly the contract; the HTML escapes what the objects say.
func TestRender(t *testing.T) {
	before, after := upgradePair(t)
	after.Warnings = []string{`HTTPRoute default/x: <script>alert("x")</script> & more`}
	rep := Compare("v1.8", "v1.9", before, after, nil)
	var js bytes.Buffer
	if err := rep.Write(&js, "json"); err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := json.Unmarshal(js.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	if len(doc) != 3 || doc["from"] != "v1.8" || doc["to"] != "v1.9" {
		t.Errorf("top-level keys: %v", doc)
	}
	for _, f := range doc["findings"].([]any) {
		m := f.(map[string]any)
		if len(m) != 6 {
			t.Errorf("finding keys: %v", m)
		}
		for _, k := range []string{"id", "object", "severity", "summary", "before", "after"} {
			if _, ok := m[k]; !ok {
				t.Errorf("finding without %s: %v", k, m)
			}
		}
		if o := m["object"].(map[string]any); len(o) != 3 {
			t.Errorf("object keys: %v", o)
		}
	}
	var page bytes.Buffer
	if err := rep.Write(&page, "html"); err != nil {
		t.Fatal(err)
	}
	html := page.String()
	if strings.Contains(html, "<script>") || !strings.Contains(html, "&lt;script&gt;") {
		t.Error("the page does not escape what the input says")
	}
	if !strings.Contains(html, `<table class="diff">`) || !strings.Contains(html, "tcp-80") {
		t.Error("the page has no side-by-side diff of the renamed listener")
	}
	var md bytes.Buffer
	if err := rep.Write(&md, "markdown"); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(md.String(), "| severity | behavior | object to change | affects |") ||
		strings.Contains(md.String(), "<script>") {
		t.Errorf("markdown:\n%s", md.String())
	}
	if err := rep.Write(&md, "pdf"); err == nil {
		t.Error("an unknown format is accepted")
	}
}

func TestParseSide(t *testing.T) {
	if s, err := ParseSide("v1.8", "", impl.Options{}); err != nil || s.Label != "v1.8" || s.Impl.Name() != "reference" ||
		s.Profile.Name != "v1.8" {
		t.Errorf("v1.8: %+v %v", s, err)
	}
	if s, err := ParseSide("v1.9", "exec:./adapter", impl.Options{}); err != nil || s.Impl.Name() != "exec:./adapter" ||
		s.Profile.Name != "v1.9" {
		t.Errorf("v1.9 with exec: %+v %v", s, err)
	}
	for spec, want := range map[string]string{
		"v2.0":          "unknown profile",
		"nosuch@v1.9.1": "unknown implementation nosuch@v1.9.1",
		"egctl@v3.1.0":  "no version profile for release v3.1",
		"":              "a side is a version profile",
	} {
		if _, err := ParseSide(spec, "", impl.Options{}); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: %v, want %q", spec, err, want)
		}
	}
}

// Entities that share an identity are paired by name first: of two routes with the same
// match, the one that goes is removed (not renamed into the one that stays, and not blamed
// on its JWT rename); several v1.8 JWT providers with one config all become the one v1.9
// provider; the jwt_authn filter that holds them keeps its name and changes its config.
func TestSharedIdentities(t *testing.T) {
	match := &routev3.RouteMatch{PathSpecifier: &routev3.RouteMatch_Prefix{Prefix: "/"}}
	route := func(name string) *routev3.Route {
		return &routev3.Route{Name: name, Match: match, Action: &routev3.Route_Route{Route: &routev3.RouteAction{
			ClusterSpecifier: &routev3.RouteAction_Cluster{Cluster: name}}}}
	}
	rc := func(routes ...*routev3.Route) []*routev3.RouteConfiguration {
		return []*routev3.RouteConfiguration{
			{Name: "rc", VirtualHosts: []*routev3.VirtualHost{{Name: "vh", Domains: []string{"*"}, Routes: routes}}}}
	}
	provider := &jwtv3.JwtProvider{Issuer: "https://auth.example.com"}
	jwt := func(names ...string) *hcmv3.HttpFilter {
		ps := map[string]*jwtv3.JwtProvider{}
		for _, n := range names {
			ps[n] = provider
		}
		return httpFilter(t, "envoy.filters.http.jwt_authn", &jwtv3.JwtAuthentication{Providers: ps})
	}
	before := &result.Result{
		XDS: result.XDS{Routes: rc(route("httproute/default/a/rule/0"), route("httproute/default/b/rule/0")),
			Listeners: []*listenerv3.Listener{
				httpListener(t, "l", 10080, "rc", jwt("httproute/default/a/rule/0/p", "httproute/default/b/rule/0/p"))}}}
	after := &result.Result{XDS: result.XDS{Routes: rc(route("httproute/default/a/rule/0")),
		Listeners: []*listenerv3.Listener{httpListener(t, "l", 10080, "rc", jwt("p_0123456789abcdef"))}}}
	rep := Compare("v1.8", "v1.9", before, after, nil)
	var got []string
	for _, f := range rep.Findings {
		got = append(got, f.Object.String()+" "+f.ID+" "+f.Summary)
	}
	want := []string{
		"HTTPRoute/default/a SP-06 JWTProvider renamed: httproute/default/a/rule/0/p → p_0123456789abcdef",
		"HTTPRoute/default/b SP-06 JWTProvider renamed: httproute/default/b/rule/0/p → p_0123456789abcdef",
		"HTTPRoute/default/b UNMAPPED Route httproute/default/b/rule/0 (virtual host vh) is no longer generated",
		"Listener/l SP-06 HTTPFilter envoy.filters.http.jwt_authn changes its config (listener l)",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("findings:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// A cluster's upstream TLS versions changing is BTLS-03; its TLS disappearing is breaking.
func TestUpstreamTLS(t *testing.T) {
	cluster := func(max tlsv3.TlsParameters_TlsProtocol, tls bool) *clusterv3.Cluster {
		c := pipeCluster("httproute/default/app/rule/0", "/unused")
		c.LoadAssignment.Endpoints[0].LbEndpoints[0].GetEndpoint().Address = &corev3.Address{
			Address: &corev3.Address_SocketAddress{
				SocketAddress: &corev3.SocketAddress{Address: "10.96.0.10",
					PortSpecifier: &corev3.SocketAddress_PortValue{PortValue: 443}}}}
		if tls {
			c.TransportSocket = &corev3.TransportSocket{Name: "envoy.transport_sockets.tls",
				ConfigType: &corev3.TransportSocket_TypedConfig{
					TypedConfig: mustAny(t,
						&tlsv3.UpstreamTlsContext{Sni: "app.example.com", CommonTlsContext: &tlsv3.CommonTlsContext{
							TlsParams: &tlsv3.TlsParameters{TlsMaximumProtocolVersion: max}}})}}
		}
		return c
	}
	res := func(c *clusterv3.Cluster) *result.Result {
		return &result.Result{XDS: result.XDS{Clusters: []*clusterv3.Cluster{c}}}
	}
	rep := Compare("v1.8", "v1.9", res(cluster(tlsv3.TlsParameters_TLSv1_2, true)),
		res(cluster(tlsv3.TlsParameters_TLSv1_3, true)), nil)
	if len(rep.Findings) != 1 || rep.Findings[0].ID != "BTLS-03" ||
		rep.Findings[0].Object.String() != "HTTPRoute/default/app" ||
		rep.Findings[0].After != "minVersion=TLS_AUTO maxVersion=TLSv1_3" {
		t.Errorf("version change: %+v", rep.Findings)
	}
	rep = Compare("v1.8", "v1.9", res(cluster(tlsv3.TlsParameters_TLSv1_2, true)), res(cluster(0, false)), nil)
	if !rep.Breaking() {
		t.Errorf("losing upstream TLS is breaking: %+v", rep.Findings)
	}
}

func TestHumanSummary(t *testing.T) {
	for in, want := range map[string]string{
		"new Cluster EmptyCluster":                   "new upstream cluster EmptyCluster",
		"PerFilterConfig envoy.filters.http.lua/0 x": "per-route filter config envoy.filters.http.lua/0 x",
		"JWTProvider renamed: a → b":                 "JWT provider renamed: a → b",
		"the API server refuses the object":          "the API server refuses the object",
	} {
		if got := HumanSummary(in); got != want {
			t.Errorf("%q: %q, want %q", in, got, want)
		}
	}
}

// The page stays linear in the findings: a resource many findings point at (the route
// table of a Gateway with many routes) is rendered and diffed once and linked from the
// other objects, the same change in many resources is shown once, and long diffs are cut.
func TestHTMLShowsEachDiffOnce(t *testing.T) {
	for _, sides := range [][2]string{{"v1.8", "v1.9"}, {"v1.9", "v1.10-preview"}} {
		rep, err := Check(context.Background(), benchRequest(t, 200, sides[0], sides[1]))
		if err != nil {
			t.Fatal(err)
		}
		var page bytes.Buffer
		if err := rep.Write(&page, "html"); err != nil {
			t.Fatal(err)
		}
		html := page.String()
		titles := map[string]int{}
		for _, m := range regexp.MustCompile(`<details id="d\d+"><summary>([^<]*)</summary>`).FindAllStringSubmatch(html,
			-1) {
			titles[m[1]]++
		}
		if len(titles) == 0 {
			t.Fatalf("%s → %s: no diff on the page", sides[0], sides[1])
		}
		for title, n := range titles {
			if n > 1 {
				t.Errorf("%s → %s: %q shown %d times", sides[0], sides[1], title, n)
			}
		}
		if sides[0] == "v1.8" && !strings.Contains(html, `Generated Envoy configuration shown above:`) {
			t.Errorf("%s → %s: no object links to a diff shown under another", sides[0], sides[1])
		}
		for _, table := range strings.Split(html, `<table class="diff">`)[1:] {
			if rows := strings.Count(table[:strings.Index(table, "</table>")], "<tr"); rows > diffRows+2 {
				t.Errorf("%s → %s: a diff of %d rows", sides[0], sides[1], rows)
			}
		}
	}
}

// Gateways that are not merged are separate proxies: their listeners share an address and
// a port without being one listener. A change on one Gateway's listener is attributed to
// that Gateway, and the filters the other Gateway keeps are not reported as new.
func TestListenersOfSeparateGatewaysOnOnePort(t *testing.T) {
	dump := testutil.GatewayClass + "---\n" + testutil.AppService
	// Both routes have CORS; only b's policy has a JWT provider, whose names change in
	// v1.9 (SP-06).
	jwt := map[string]string{"b": `
  jwt: {providers: [{name: issuer, remoteJWKS: {uri: "https://issuer.example.com/jwks.json"}}]}`}
	for _, gw := range []string{"a", "b"} {
		dump += fmt.Sprintf(`---
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: %[1]s, namespace: default}
spec:
  gatewayClassName: eg
  listeners: [{name: http, protocol: HTTP, port: 80}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: %[1]s, namespace: default}
spec:
  parentRefs: [{name: %[1]s}]
  hostnames: [%[1]s.example.com]
  rules: [{backendRefs: [{name: app, port: 8080}]}]
---
apiVersion: gateway.envoyproxy.io/v1alpha1
kind: SecurityPolicy
metadata: {name: sp-%[1]s, namespace: default}
spec:
  targetRefs: [{group: gateway.networking.k8s.io, kind: HTTPRoute, name: %[1]s}]
  cors: {allowOrigins: ["https://*.example.com"]}%[2]s
`, gw, jwt[gw])
	}
	rep, err := Check(context.Background(), dumpRequest(t, dump, "v1.8", "v1.9"))
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range rep.Findings {
		if f.ID == "UNMAPPED" || strings.HasPrefix(f.Summary, "new HTTPFilter") {
			t.Errorf("a filter both sides have is reported: %s %s (%s)", f.ID, f.Summary, f.Object)
		}
		if strings.Contains(f.Summary, "default/a/") || f.Object.Name == "a" {
			t.Errorf("Gateway a does not change, yet: %s %s (%s)", f.ID, f.Summary, f.Object)
		}
	}
	if len(findingsByID(rep)["SP-06"]) == 0 {
		t.Error("no SP-06 finding for b's JWT provider")
	}
}
