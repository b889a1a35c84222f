package routecheck

import (
	"testing"

	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	listenerv3 "github.com/envoyproxy/go-control-plane/envoy/config/listener/v3"
	routev3 "github.com/envoyproxy/go-control-plane/envoy/config/route/v3"
	hcmv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/network/http_connection_manager/v3"
	matcherv3 "github.com/envoyproxy/go-control-plane/envoy/type/matcher/v3"
	typev3 "github.com/envoyproxy/go-control-plane/envoy/type/v3"
	"google.golang.org/protobuf/types/known/wrapperspb"
)

// Within a route table: virtual host selection, route matching and route actions
// (weighted clusters, redirects, direct responses, require_tls). Listener selection, filter
// chains and the connection manager are in listener_test.go.

func TestVirtualHostDomainPrecedence(t *testing.T) {
	rc := routeConfig("rc",
		vhost("default", []string{"*"}, prefixRoute("r", "/", "c-default")),
		vhost("prefix", []string{"foo.*"}, prefixRoute("r", "/", "c-prefix")),
		vhost("prefix-long", []string{"foo.bar.*"}, prefixRoute("r", "/", "c-prefix-long")),
		vhost("suffix", []string{"*.example.com"}, prefixRoute("r", "/", "c-suffix")),
		vhost("suffix-long", []string{"*.b.example.com"}, prefixRoute("r", "/", "c-suffix-long")),
		vhost("exact", []string{"foo.example.com", "Other.Example.org"}, prefixRoute("r", "/", "c-exact")),
		vhost("suffix-nodot", []string{"*zed.net"}, prefixRoute("r", "/", "c-suffix-nodot")),
		vhost("prefix-nodot", []string{"bar*"}, prefixRoute("r", "/", "c-prefix-nodot")),
	)
	tbl := singleTable(t, rc)
	cases := []struct {
		host, want string
	}{
		{"foo.example.com", "exact"},
		{"FOO.Example.COM", "exact"},
		{"other.example.org", "exact"},
		{"a.example.com", "suffix"},
		{"x.y.example.com", "suffix"},
		{"a.b.example.com", "suffix-long"},
		{"b.example.com", "suffix"},      // "*.b.example.com" needs a non-empty label
		{"example.com", "default"},       // "*.example.com" does not match the bare domain
		{"foo.a.example.com", "suffix"},  // suffix wildcards beat prefix wildcards
		{"foo.org", "prefix"},            // no suffix match
		{"foo.bar.org", "prefix-long"},   // longest prefix first
		{"unknown.net", "default"},       // "*" last
		{"a.example.com:8080", "suffix"}, // full value fails, retried without port
		{"foo.example.com:8080", "prefix"},
		{"azed.net", "suffix-nodot"},
		{"zed.net", "default"}, // the '*' must stand for at least one character
		{"barx", "prefix-nodot"},
		{"bar", "default"},
	}
	for _, c := range cases {
		ans := check(t, tbl, Request{Host: c.host, Path: "/"})
		if ans.VirtualHost != c.want || ans.Cluster != "c-"+c.want || ans.Status != 200 || !ans.Matched {
			t.Errorf("host %q: got vhost %q cluster %q status %d matched %v, want vhost %q",
				c.host, ans.VirtualHost, ans.Cluster, ans.Status, ans.Matched, c.want)
		}
	}
}

func TestVirtualHostPortHandling(t *testing.T) {
	rc := routeConfig("rc",
		vhost("exact", []string{"foo.example.com"}, prefixRoute("r", "/", "c-exact")),
		vhost("prefix", []string{"foo.*"}, prefixRoute("r", "/", "c-prefix")),
	)
	rc.IgnorePortInHostMatching = true
	tbl := singleTable(t, rc)
	if ans := check(t, tbl, Request{Host: "foo.example.com:8080"}); ans.VirtualHost != "exact" {
		t.Errorf("ignore_port_in_host_matching: got vhost %q, want exact", ans.VirtualHost)
	}

	// strip_any_host_port in the HCM rewrites :authority before routing.
	rc2 := routeConfig("rc2", vhost("exact", []string{"foo.example.com"}, prefixRoute("r", "/", "c")),
		vhost("port", []string{"foo.*"}, prefixRoute("r", "/", "c-port")))
	h := rdsHCM("rc2")
	h.StripPortMode = &hcmv3.HttpConnectionManager_StripAnyHostPort{StripAnyHostPort: true}
	tbl2 := hcmTable(t, h, rc2)
	if ans := check(t, tbl2, Request{Host: "foo.example.com:8080"}); ans.VirtualHost != "exact" {
		t.Errorf("strip_any_host_port: got vhost %q, want exact", ans.VirtualHost)
	}
}

func TestNoVirtualHostIs404(t *testing.T) {
	tbl := singleTable(t, routeConfig("rc", vhost("only", []string{"a.example.com"}, prefixRoute("r", "/", "c"))))
	ans := check(t, tbl, Request{Host: "b.example.com", Path: "/"})
	want := Answer{Listener: "http", RouteConfig: "rc", Status: 404}
	if ans != want {
		t.Errorf("got %+v, want %+v", ans, want)
	}
}

func TestNoRouteIs404(t *testing.T) {
	tbl := singleTable(t, routeConfig("rc", vhost("vh", []string{"*"}, prefixRoute("r", "/api", "c"))))
	ans := check(t, tbl, Request{Path: "/web"})
	want := Answer{Listener: "http", RouteConfig: "rc", VirtualHost: "vh", Status: 404}
	if ans != want {
		t.Errorf("got %+v, want %+v", ans, want)
	}
}

func TestPathMatching(t *testing.T) {
	psp := func(name, p string) *routev3.Route {
		return routeWithMatch(name,
			&routev3.RouteMatch{PathSpecifier: &routev3.RouteMatch_PathSeparatedPrefix{PathSeparatedPrefix: p}}, name)
	}
	exact := func(name, p string, caseSensitive bool) *routev3.Route {
		return routeWithMatch(name,
			&routev3.RouteMatch{PathSpecifier: &routev3.RouteMatch_Path{Path: p}, CaseSensitive: boolv(caseSensitive)}, name)
	}
	re := func(name, r string) *routev3.Route {
		return routeWithMatch(name, &routev3.RouteMatch{PathSpecifier: &routev3.RouteMatch_SafeRegex{SafeRegex: regex(r)}},
			name)
	}
	ciPrefix := routeWithMatch("ci-prefix",
		&routev3.RouteMatch{PathSpecifier: &routev3.RouteMatch_Prefix{Prefix: "/Upper"}, CaseSensitive: boolv(false)},
		"ci-prefix")
	tbl := singleTable(t, routeConfig("rc", vhost("vh", []string{"*"},
		psp("psp", "/foo"),
		exact("exact", "/exact", true),
		exact("exact-ci", "/Exact-CI", false),
		re("regex", "/api/v[0-9]+"),
		ciPrefix,
		prefixRoute("fallback", "/", "fallback"),
	)))
	cases := []struct{ path, want string }{
		{"/foo", "psp"},
		{"/foo/bar", "psp"},
		{"/foo/", "psp"},
		{"/foo?x=1", "psp"},
		{"/foobar", "fallback"},
		{"/FOO", "fallback"},
		{"/exact", "exact"},
		{"/exact?q=1", "exact"},
		{"/exact/", "fallback"},
		{"/EXACT", "fallback"},
		{"/exact-ci", "exact-ci"},
		{"/EXACT-ci?z", "exact-ci"},
		{"/api/v1", "regex"},
		{"/api/v12?debug=1", "regex"},
		{"/api/v1/users", "fallback"}, // regex must match the whole path
		{"/xapi/v1", "fallback"},
		{"/upperCASE", "ci-prefix"},
	}
	for _, c := range cases {
		ans := check(t, tbl, Request{Path: c.path})
		if ans.Route != c.want || ans.Cluster != c.want {
			t.Errorf("path %q: got route %q cluster %q, want %q", c.path, ans.Route, ans.Cluster, c.want)
		}
	}
}

func TestHeaderMatchers(t *testing.T) {
	sm := func(m *matcherv3.StringMatcher) *routev3.HeaderMatcher_StringMatch {
		return &routev3.HeaderMatcher_StringMatch{StringMatch: m}
	}
	cases := []struct {
		name    string
		hm      *routev3.HeaderMatcher
		method  string
		host    string
		path    string
		headers map[string]string
		want    bool
	}{
		{"string exact", &routev3.HeaderMatcher{Name: "x-env", HeaderMatchSpecifier: sm(exactStr("prod"))}, "", "", "",
			map[string]string{"x-env": "prod"}, true},
		{"string exact is case-sensitive", &routev3.HeaderMatcher{Name: "x-env", HeaderMatchSpecifier: sm(exactStr("prod"))},
			"", "", "", map[string]string{"x-env": "Prod"}, false},
		{"string exact missing", &routev3.HeaderMatcher{Name: "x-env", HeaderMatchSpecifier: sm(exactStr("prod"))}, "", "",
			"", nil, false},
		{"header name case-insensitive", &routev3.HeaderMatcher{Name: "X-Env", HeaderMatchSpecifier: sm(exactStr("prod"))},
			"", "", "", map[string]string{"x-ENV": "prod"}, true},
		{"string exact ignore_case",
			&routev3.HeaderMatcher{Name: "x-env",
				HeaderMatchSpecifier: sm(
					&matcherv3.StringMatcher{MatchPattern: &matcherv3.StringMatcher_Exact{Exact: "prod"}, IgnoreCase: true})}, "", "",
			"", map[string]string{"x-env": "PROD"}, true},
		{"string prefix",
			&routev3.HeaderMatcher{Name: "x-v",
				HeaderMatchSpecifier: sm(&matcherv3.StringMatcher{MatchPattern: &matcherv3.StringMatcher_Prefix{Prefix: "ab"}})},
			"",
			"", "", map[string]string{"x-v": "abc"}, true},
		{"string prefix ignore_case",
			&routev3.HeaderMatcher{Name: "x-v",
				HeaderMatchSpecifier: sm(
					&matcherv3.StringMatcher{MatchPattern: &matcherv3.StringMatcher_Prefix{Prefix: "ab"}, IgnoreCase: true})}, "", "",
			"", map[string]string{"x-v": "ABc"}, true},
		{"string suffix",
			&routev3.HeaderMatcher{Name: "x-v",
				HeaderMatchSpecifier: sm(&matcherv3.StringMatcher{MatchPattern: &matcherv3.StringMatcher_Suffix{Suffix: "bc"}})},
			"",
			"", "", map[string]string{"x-v": "abd"}, false},
		{"string contains",
			&routev3.HeaderMatcher{Name: "x-v",
				HeaderMatchSpecifier: sm(
					&matcherv3.StringMatcher{MatchPattern: &matcherv3.StringMatcher_Contains{Contains: "mid"}})}, "", "", "",
			map[string]string{"x-v": "amidb"}, true},
		{"string regex full match",
			&routev3.HeaderMatcher{Name: "x-v",
				HeaderMatchSpecifier: sm(
					&matcherv3.StringMatcher{MatchPattern: &matcherv3.StringMatcher_SafeRegex{SafeRegex: regex("v[0-9]+")}})}, "", "",
			"", map[string]string{"x-v": "v12"}, true},
		{"string regex partial is no match",
			&routev3.HeaderMatcher{Name: "x-v",
				HeaderMatchSpecifier: sm(
					&matcherv3.StringMatcher{MatchPattern: &matcherv3.StringMatcher_SafeRegex{SafeRegex: regex("v[0-9]+")}})}, "", "",
			"", map[string]string{"x-v": "v12a"}, false},
		{"legacy exact",
			&routev3.HeaderMatcher{Name: "x-v", HeaderMatchSpecifier: &routev3.HeaderMatcher_ExactMatch{ExactMatch: "a"}}, "",
			"", "", map[string]string{"x-v": "a"}, true},
		{"legacy exact empty matches any value",
			&routev3.HeaderMatcher{Name: "x-v", HeaderMatchSpecifier: &routev3.HeaderMatcher_ExactMatch{ExactMatch: ""}}, "", "",
			"", map[string]string{"x-v": "anything"}, true},
		{"legacy prefix",
			&routev3.HeaderMatcher{Name: "x-v", HeaderMatchSpecifier: &routev3.HeaderMatcher_PrefixMatch{PrefixMatch: "a"}}, "",
			"", "", map[string]string{"x-v": "ba"}, false},
		{"legacy suffix",
			&routev3.HeaderMatcher{Name: "x-v", HeaderMatchSpecifier: &routev3.HeaderMatcher_SuffixMatch{SuffixMatch: "a"}}, "",
			"", "", map[string]string{"x-v": "ba"}, true},
		{"legacy contains",
			&routev3.HeaderMatcher{Name: "x-v", HeaderMatchSpecifier: &routev3.HeaderMatcher_ContainsMatch{ContainsMatch: "zz"}},
			"", "", "", map[string]string{"x-v": "ba"}, false},
		{"legacy regex",
			&routev3.HeaderMatcher{Name: "x-v",
				HeaderMatchSpecifier: &routev3.HeaderMatcher_SafeRegexMatch{SafeRegexMatch: regex("[a-c]+")}}, "", "", "",
			map[string]string{"x-v": "abcab"}, true},
		{"range inside",
			&routev3.HeaderMatcher{Name: "x-n",
				HeaderMatchSpecifier: &routev3.HeaderMatcher_RangeMatch{RangeMatch: &typev3.Int64Range{Start: 1, End: 10}}}, "", "",
			"", map[string]string{"x-n": "9"}, true},
		{"range end exclusive",
			&routev3.HeaderMatcher{Name: "x-n",
				HeaderMatchSpecifier: &routev3.HeaderMatcher_RangeMatch{RangeMatch: &typev3.Int64Range{Start: 1, End: 10}}}, "", "",
			"", map[string]string{"x-n": "10"}, false},
		{"present true, present",
			&routev3.HeaderMatcher{Name: "x-p", HeaderMatchSpecifier: &routev3.HeaderMatcher_PresentMatch{PresentMatch: true}},
			"", "", "", map[string]string{"x-p": ""}, true},
		{"present true, missing",
			&routev3.HeaderMatcher{Name: "x-p", HeaderMatchSpecifier: &routev3.HeaderMatcher_PresentMatch{PresentMatch: true}},
			"", "", "", nil, false},
		{"present false, missing",
			&routev3.HeaderMatcher{Name: "x-p", HeaderMatchSpecifier: &routev3.HeaderMatcher_PresentMatch{PresentMatch: false}},
			"", "", "", nil, true},
		{"present false, present",
			&routev3.HeaderMatcher{Name: "x-p", HeaderMatchSpecifier: &routev3.HeaderMatcher_PresentMatch{PresentMatch: false}},
			"", "", "", map[string]string{"x-p": "1"}, false},
		{"no specifier means present", &routev3.HeaderMatcher{Name: "x-p"}, "", "", "", map[string]string{"x-p": "1"}, true},
		{"invert present, missing",
			&routev3.HeaderMatcher{Name: "x-p", HeaderMatchSpecifier: &routev3.HeaderMatcher_PresentMatch{PresentMatch: true},
				InvertMatch: true}, "", "", "", nil, true},
		{"invert present, present",
			&routev3.HeaderMatcher{Name: "x-p", HeaderMatchSpecifier: &routev3.HeaderMatcher_PresentMatch{PresentMatch: true},
				InvertMatch: true}, "", "", "", map[string]string{"x-p": "1"}, false},
		{"invert exact, other value",
			&routev3.HeaderMatcher{Name: "x-env", HeaderMatchSpecifier: sm(exactStr("prod")), InvertMatch: true}, "", "", "",
			map[string]string{"x-env": "dev"}, true},
		{"invert exact, same value",
			&routev3.HeaderMatcher{Name: "x-env", HeaderMatchSpecifier: sm(exactStr("prod")), InvertMatch: true}, "", "", "",
			map[string]string{"x-env": "prod"}, false},
		// Envoy: a missing header never matches a value matcher, inverted or not.
		{"invert exact, missing",
			&routev3.HeaderMatcher{Name: "x-env", HeaderMatchSpecifier: sm(exactStr("prod")), InvertMatch: true}, "", "", "",
			nil, false},
		{"invert exact, missing treated as empty",
			&routev3.HeaderMatcher{Name: "x-env", HeaderMatchSpecifier: sm(exactStr("prod")), InvertMatch: true,
				TreatMissingHeaderAsEmpty: true}, "", "", "", nil, true},
		{"exact empty, missing treated as empty",
			&routev3.HeaderMatcher{Name: "x-env", HeaderMatchSpecifier: sm(exactStr("")), TreatMissingHeaderAsEmpty: true}, "",
			"", "", nil, true},
		{":method POST", &routev3.HeaderMatcher{Name: ":method", HeaderMatchSpecifier: sm(exactStr("POST"))}, "POST", "", "",
			nil, true},
		{":method defaults to GET", &routev3.HeaderMatcher{Name: ":method", HeaderMatchSpecifier: sm(exactStr("GET"))}, "",
			"", "", nil, true},
		{":method mismatch", &routev3.HeaderMatcher{Name: ":method", HeaderMatchSpecifier: sm(exactStr("POST"))}, "GET", "",
			"", nil, false},
		{":method inverted",
			&routev3.HeaderMatcher{Name: ":method", HeaderMatchSpecifier: sm(exactStr("POST")), InvertMatch: true}, "GET", "",
			"", nil, true},
		{":authority", &routev3.HeaderMatcher{Name: ":authority", HeaderMatchSpecifier: sm(exactStr("api.example.com"))}, "",
			"api.example.com", "", nil, true},
		{":path includes query", &routev3.HeaderMatcher{Name: ":path", HeaderMatchSpecifier: sm(exactStr("/a?b=1"))}, "", "",
			"/a?b=1", nil, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			m := &routev3.RouteMatch{PathSpecifier: &routev3.RouteMatch_Prefix{Prefix: "/"},
				Headers: []*routev3.HeaderMatcher{c.hm}}
			tbl := singleTable(t,
				routeConfig("rc",
					vhost("vh", []string{"*"}, routeWithMatch("hdr", m, "hdr"), prefixRoute("fallback", "/", "fallback"))))
			ans := check(t, tbl, Request{Method: c.method, Host: c.host, Path: c.path, Headers: c.headers})
			if got := ans.Route == "hdr"; got != c.want {
				t.Errorf("matched=%v (route %q), want %v", got, ans.Route, c.want)
			}
		})
	}
}

func TestQueryParameterMatchers(t *testing.T) {
	qp := func(q *routev3.QueryParameterMatcher) *routev3.Route {
		return routeWithMatch("q", &routev3.RouteMatch{
			PathSpecifier:   &routev3.RouteMatch_Prefix{Prefix: "/"},
			QueryParameters: []*routev3.QueryParameterMatcher{q},
		}, "q")
	}
	exact := func(name, v string) *routev3.QueryParameterMatcher {
		return &routev3.QueryParameterMatcher{Name: name,
			QueryParameterMatchSpecifier: &routev3.QueryParameterMatcher_StringMatch{StringMatch: exactStr(v)}}
	}
	present := &routev3.QueryParameterMatcher{Name: "debug",
		QueryParameterMatchSpecifier: &routev3.QueryParameterMatcher_PresentMatch{PresentMatch: true}}
	cases := []struct {
		name string
		q    *routev3.QueryParameterMatcher
		path string
		want bool
	}{
		{"exact", exact("v", "2"), "/p?a=1&v=2", true},
		{"exact mismatch", exact("v", "2"), "/p?v=3", false},
		{"missing", exact("v", "2"), "/p", false},
		{"first value wins", exact("v", "1"), "/p?v=1&v=2", true},
		{"later value ignored", exact("v", "2"), "/p?v=1&v=2", false},
		{"no equals is empty value", exact("flag", ""), "/p?flag", true},
		{"not percent-decoded (Envoy)", exact("q", "a b"), "/p?q=a%20b", false},
		{"raw encoded value", exact("q", "a%20b"), "/p?q=a%20b", true},
		{"present", present, "/p?debug", true},
		{"present with value", present, "/p?x=1&debug=0", true},
		{"present missing", present, "/p?x=1", false},
		{"prefix matcher",
			&routev3.QueryParameterMatcher{Name: "id",
				QueryParameterMatchSpecifier: &routev3.QueryParameterMatcher_StringMatch{
					StringMatch: &matcherv3.StringMatcher{MatchPattern: &matcherv3.StringMatcher_Prefix{Prefix: "usr-"}}}},
			"/p?id=usr-42", true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			tbl := singleTable(t,
				routeConfig("rc", vhost("vh", []string{"*"}, qp(c.q), prefixRoute("fallback", "/", "fallback"))))
			ans := check(t, tbl, Request{Path: c.path})
			if got := ans.Route == "q"; got != c.want {
				t.Errorf("matched=%v (route %q), want %v", got, ans.Route, c.want)
			}
		})
	}
}

func TestGRPCMatch(t *testing.T) {
	g := routeWithMatch("grpc",
		&routev3.RouteMatch{PathSpecifier: &routev3.RouteMatch_Prefix{Prefix: "/"},
			Grpc: &routev3.RouteMatch_GrpcRouteMatchOptions{}}, "grpc")
	tbl := singleTable(t, routeConfig("rc", vhost("vh", []string{"*"}, g, prefixRoute("fallback", "/", "fallback"))))
	for ct, want := range map[string]string{
		"application/grpc":       "grpc",
		"application/grpc+proto": "grpc",
		"application/grpc-web":   "fallback",
		"application/json":       "fallback",
		"":                       "fallback",
	} {
		h := map[string]string{}
		if ct != "" {
			h["Content-Type"] = ct
		}
		if ans := check(t, tbl, Request{Path: "/svc/Method", Headers: h}); ans.Route != want {
			t.Errorf("content-type %q: got route %q, want %q", ct, ans.Route, want)
		}
	}
}

func TestFirstMatchWins(t *testing.T) {
	onlyPost := routeWithMatch("post-only", &routev3.RouteMatch{
		PathSpecifier: &routev3.RouteMatch_Prefix{Prefix: "/api"},
		Headers: []*routev3.HeaderMatcher{{Name: ":method",
			HeaderMatchSpecifier: &routev3.HeaderMatcher_StringMatch{StringMatch: exactStr("POST")}}},
	}, "c-post")
	tbl := singleTable(t, routeConfig("rc", vhost("vh", []string{"*"},
		onlyPost,
		prefixRoute("api", "/api", "c-api"),
		prefixRoute("api-v2", "/api/v2", "c-api-v2"), // shadowed by "api"
		prefixRoute("all", "/", "c-all"),
	)))
	cases := []struct {
		method, path, route, cluster string
	}{
		{"POST", "/api/v2/x", "post-only", "c-post"},
		{"GET", "/api/v2/x", "api", "c-api"},
		{"GET", "/other", "all", "c-all"},
	}
	for _, c := range cases {
		ans := check(t, tbl, Request{Method: c.method, Path: c.path})
		if ans.Route != c.route || ans.Cluster != c.cluster || ans.Status != 200 || !ans.Matched {
			t.Errorf("%s %s: got %+v, want route %q cluster %q", c.method, c.path, ans, c.route, c.cluster)
		}
	}
}

func weightedRoute(name string, header string, clusters ...*routev3.WeightedCluster_ClusterWeight) *routev3.Route {
	wc := &routev3.WeightedCluster{Clusters: clusters}
	if header != "" {
		wc.RandomValueSpecifier = &routev3.WeightedCluster_HeaderName{HeaderName: header}
	}
	return &routev3.Route{
		Name:  name,
		Match: &routev3.RouteMatch{PathSpecifier: &routev3.RouteMatch_Prefix{Prefix: "/"}},
		Action: &routev3.Route_Route{Route: &routev3.RouteAction{
			ClusterSpecifier: &routev3.RouteAction_WeightedClusters{WeightedClusters: wc},
		}},
	}
}

func cw(name string, w uint32) *routev3.WeightedCluster_ClusterWeight {
	return &routev3.WeightedCluster_ClusterWeight{Name: name, Weight: wrapperspb.UInt32(w)}
}

func TestWeightedClusters(t *testing.T) {
	tbl := singleTable(t,
		routeConfig("rc", vhost("vh", []string{"*"}, weightedRoute("w", "", cw("ninety", 90), cw("ten", 10)))))
	for _, c := range []struct {
		random uint64
		want   string
	}{
		{0, "ninety"}, {89, "ninety"}, {90, "ten"}, {99, "ten"}, {100, "ninety"}, {189, "ninety"}, {190, "ten"},
		{18446744073709551615, "ninety"}, // (2^64-1) % 100 == 15
	} {
		ans := check(t, tbl, Request{Random: c.random})
		if ans.Cluster != c.want || ans.Status != 200 || ans.Route != "w" {
			t.Errorf("random %d: got cluster %q status %d, want %q", c.random, ans.Cluster, ans.Status, c.want)
		}
	}

	// A zero weight is never chosen; total_weight is ignored like current Envoy.
	weighted := weightedRoute("w3", "", cw("a", 1), cw("zero", 0), cw("b", 2))
	weighted.GetRoute().GetWeightedClusters().TotalWeight = wrapperspb.UInt32(100)
	tbl3 := singleTable(t, routeConfig("rc", vhost("vh", []string{"*"}, weighted)))
	for random, want := range map[uint64]string{0: "a", 1: "b", 2: "b", 3: "a", 5: "b"} {
		if ans := check(t, tbl3, Request{Random: random}); ans.Cluster != want {
			t.Errorf("1/0/2 random %d: got %q, want %q", random, ans.Cluster, want)
		}
	}

	// header_name supplies the random value when present and numeric.
	tblH := singleTable(t,
		routeConfig("rc", vhost("vh", []string{"*"}, weightedRoute("wh", "x-rand", cw("ninety", 90), cw("ten", 10)))))
	if ans := check(t, tblH, Request{Random: 0, Headers: map[string]string{"X-Rand": "95"}}); ans.Cluster != "ten" {
		t.Errorf("header random: got %q, want ten", ans.Cluster)
	}
	if ans := check(t, tblH, Request{Random: 95, Headers: map[string]string{"x-rand": "nope"}}); ans.Cluster != "ten" {
		t.Errorf("bad header falls back to Random: got %q, want ten", ans.Cluster)
	}
}

func redirectRoute(name string, m *routev3.RouteMatch, rd *routev3.RedirectAction) *routev3.Route {
	if m == nil {
		m = &routev3.RouteMatch{PathSpecifier: &routev3.RouteMatch_Prefix{Prefix: "/"}}
	}
	return &routev3.Route{Name: name, Match: m, Action: &routev3.Route_Redirect{Redirect: rd}}
}

func TestRedirect(t *testing.T) {
	prefix := func(p string) *routev3.RouteMatch {
		return &routev3.RouteMatch{PathSpecifier: &routev3.RouteMatch_Prefix{Prefix: p}}
	}
	cases := []struct {
		name     string
		m        *routev3.RouteMatch
		rd       *routev3.RedirectAction
		req      Request
		status   int
		location string
	}{
		{"https_redirect keeps path and query", nil,
			&routev3.RedirectAction{SchemeRewriteSpecifier: &routev3.RedirectAction_HttpsRedirect{HttpsRedirect: true}},
			Request{Host: "example.com", Path: "/a?b=1"}, 301, "https://example.com/a?b=1"},
		{"https_redirect drops :80", nil,
			&routev3.RedirectAction{SchemeRewriteSpecifier: &routev3.RedirectAction_HttpsRedirect{HttpsRedirect: true}},
			Request{Host: "example.com:80", Path: "/a"}, 301, "https://example.com/a"},
		{"https_redirect keeps a non-default port", nil,
			&routev3.RedirectAction{SchemeRewriteSpecifier: &routev3.RedirectAction_HttpsRedirect{HttpsRedirect: true}},
			Request{Host: "example.com:8080", Path: "/a"}, 301, "https://example.com:8080/a"},
		{"scheme_redirect and port_redirect", nil,
			&routev3.RedirectAction{SchemeRewriteSpecifier: &routev3.RedirectAction_SchemeRedirect{SchemeRedirect: "https"},
				PortRedirect: 8443},
			Request{Host: "example.com:8080", Path: "/a"}, 301, "https://example.com:8443/a"},
		{"port_redirect is appended even when it is the scheme default (Envoy)", nil,
			&routev3.RedirectAction{SchemeRewriteSpecifier: &routev3.RedirectAction_HttpsRedirect{HttpsRedirect: true},
				HostRedirect: "new.example.com", PortRedirect: 443},
			Request{Host: "example.com", Path: "/"}, 301, "https://new.example.com:443/"},
		{"host_redirect keeps scheme http", nil,
			&routev3.RedirectAction{HostRedirect: "new.example.com", ResponseCode: routev3.RedirectAction_FOUND},
			Request{Host: "example.com:8080", Path: "/a"}, 302, "http://new.example.com/a"},
		{"TLS request keeps https", nil,
			&routev3.RedirectAction{HostRedirect: "new.example.com"},
			Request{Host: "example.com", Path: "/a", SNI: "example.com", Port: 10443}, 301, "https://new.example.com/a"},
		{"path_redirect keeps query", nil,
			&routev3.RedirectAction{PathRewriteSpecifier: &routev3.RedirectAction_PathRedirect{PathRedirect: "/new"},
				ResponseCode: routev3.RedirectAction_SEE_OTHER},
			Request{Host: "h", Path: "/old?x=1"}, 303, "http://h/new?x=1"},
		{"path_redirect with strip_query", nil,
			&routev3.RedirectAction{PathRewriteSpecifier: &routev3.RedirectAction_PathRedirect{PathRedirect: "/new"},
				StripQuery: true},
			Request{Host: "h", Path: "/old?x=1"}, 301, "http://h/new"},
		{"path_redirect query wins over strip_query", nil,
			&routev3.RedirectAction{PathRewriteSpecifier: &routev3.RedirectAction_PathRedirect{PathRedirect: "/new?y=2"},
				StripQuery: true},
			Request{Host: "h", Path: "/old?x=1"}, 301, "http://h/new?y=2"},
		{"prefix_rewrite replaces the matched prefix", prefix("/old"),
			&routev3.RedirectAction{PathRewriteSpecifier: &routev3.RedirectAction_PrefixRewrite{PrefixRewrite: "/new"},
				ResponseCode: routev3.RedirectAction_TEMPORARY_REDIRECT},
			Request{Host: "h", Path: "/old/x?q=1"}, 307, "http://h/new/x?q=1"},
		{"prefix_rewrite with strip_query", prefix("/old"),
			&routev3.RedirectAction{PathRewriteSpecifier: &routev3.RedirectAction_PrefixRewrite{PrefixRewrite: "/"},
				StripQuery: true, ResponseCode: routev3.RedirectAction_PERMANENT_REDIRECT},
			Request{Host: "h", Path: "/old/x?q=1"}, 308, "http://h//x"},
		{"prefix_rewrite on path_separated_prefix",
			&routev3.RouteMatch{PathSpecifier: &routev3.RouteMatch_PathSeparatedPrefix{PathSeparatedPrefix: "/v1"}},
			&routev3.RedirectAction{PathRewriteSpecifier: &routev3.RedirectAction_PrefixRewrite{PrefixRewrite: "/v2"}},
			Request{Host: "h", Path: "/v1/users"}, 301, "http://h/v2/users"},
		{"regex_rewrite", prefix("/service"),
			&routev3.RedirectAction{
				PathRewriteSpecifier: &routev3.RedirectAction_RegexRewrite{RegexRewrite: &matcherv3.RegexMatchAndSubstitute{
					Pattern: regex(`^/service/([^/]+)(/.*)$`), Substitution: `\2/instance/\1`}}},
			Request{Host: "h", Path: "/service/foo/v1/api?z=1"}, 301, "http://h/v1/api/instance/foo?z=1"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			rc := routeConfig("rc", vhost("vh", []string{"*"}, redirectRoute("redir", c.m, c.rd)))
			l := listener("l", 10080, httpChain(t, "", "rc"))
			tl := &listenerv3.Listener{Name: "tls", Address: addr(10443, false),
				FilterChains: []*listenerv3.FilterChain{httpChain(t, "", "rc")}}
			tbl, err := New([]*listenerv3.Listener{l, tl}, []*routev3.RouteConfiguration{rc})
			if err != nil {
				t.Fatal(err)
			}
			ans := check(t, tbl, c.req)
			if ans.Status != c.status || ans.Location != c.location || ans.Cluster != "" || !ans.Matched ||
				ans.Route != "redir" {
				t.Errorf("got status %d location %q cluster %q matched %v, want %d %q",
					ans.Status, ans.Location, ans.Cluster, ans.Matched, c.status, c.location)
			}
		})
	}
}

func TestDirectResponse(t *testing.T) {
	direct := func(name string, status uint32, body *corev3.DataSource) *routev3.Route {
		return &routev3.Route{
			Name:   name,
			Match:  &routev3.RouteMatch{PathSpecifier: &routev3.RouteMatch_Path{Path: "/" + name}},
			Action: &routev3.Route_DirectResponse{DirectResponse: &routev3.DirectResponseAction{Status: status, Body: body}},
		}
	}
	tbl := singleTable(t, routeConfig("rc", vhost("vh", []string{"*"},
		direct("forbidden", 403, &corev3.DataSource{Specifier: &corev3.DataSource_InlineString{InlineString: "denied"}}),
		direct("bytes", 503, &corev3.DataSource{Specifier: &corev3.DataSource_InlineBytes{InlineBytes: []byte("down")}}),
		direct("nobody", 204, nil),
		direct("moved", 301, nil),
	)))
	cases := []struct {
		path     string
		status   int
		body     string
		location string
	}{
		{"/forbidden", 403, "denied", ""},
		{"/bytes", 503, "down", ""},
		{"/nobody", 204, "", ""},
		{"/moved?x=1", 301, "", "http://example.com/moved?x=1"}, // Envoy adds Location for 3xx
	}
	for _, c := range cases {
		ans := check(t, tbl, Request{Path: c.path})
		if ans.Status != c.status || ans.Body != c.body || ans.Location != c.location || ans.Cluster != "" || !ans.Matched {
			t.Errorf("%s: got %+v, want status %d body %q location %q", c.path, ans, c.status, c.body, c.location)
		}
	}
}

func TestRequireTLS(t *testing.T) {
	v := vhost("vh", []string{"*"}, prefixRoute("r", "/", "c"))
	v.RequireTls = routev3.VirtualHost_ALL
	rc := routeConfig("rc", v)
	tbl, err := New([]*listenerv3.Listener{
		listener("http", 10080, httpChain(t, "", "rc")),
		listener("https", 10443, httpChain(t, "", "rc")),
	}, []*routev3.RouteConfiguration{rc})
	if err != nil {
		t.Fatal(err)
	}
	ans := check(t, tbl, Request{Host: "example.com", Path: "/a?b"})
	if ans.Status != 301 || ans.Location != "https://example.com/a?b" || ans.Cluster != "" {
		t.Errorf("plaintext: got %+v", ans)
	}
	ans = check(t, tbl, Request{Port: 10443, SNI: "example.com", Path: "/a"})
	if ans.Status != 200 || ans.Cluster != "c" {
		t.Errorf("TLS: got %+v", ans)
	}
}
