package routecheck

import (
	"testing"

	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	routev3 "github.com/envoyproxy/go-control-plane/envoy/config/route/v3"
	matcherv3 "github.com/envoyproxy/go-control-plane/envoy/type/matcher/v3"
)

func hv(key, value string, action corev3.HeaderValueOption_HeaderAppendAction) *corev3.HeaderValueOption {
	return &corev3.HeaderValueOption{Header: &corev3.HeaderValue{Key: key, Value: value}, AppendAction: action}
}

func forwarded(t *testing.T, tbl *Table, req Request) (Answer, map[string]string) {
	t.Helper()
	if req.Port == 0 {
		req.Port = 10080
	}
	if req.Host == "" {
		req.Host = "example.com"
	}
	ans, fwd, err := tbl.CheckForwarded(req)
	if err != nil {
		t.Fatalf("%+v: %v", req, err)
	}
	return ans, fwd
}

func TestForwardedHeaderChanges(t *testing.T) {
	r := prefixRoute("r", "/", "c")
	r.RequestHeadersToRemove = []string{"X-Drop", "x-set"}
	r.RequestHeadersToAdd = []*corev3.HeaderValueOption{
		hv("x-append", "gw", corev3.HeaderValueOption_APPEND_IF_EXISTS_OR_ADD),
		hv("X-Set", "new", corev3.HeaderValueOption_OVERWRITE_IF_EXISTS_OR_ADD),
		hv("x-absent", "only-if-absent", corev3.HeaderValueOption_ADD_IF_ABSENT),
		hv("x-present", "replaced", corev3.HeaderValueOption_ADD_IF_ABSENT),
		hv("x-empty", "", corev3.HeaderValueOption_OVERWRITE_IF_EXISTS_OR_ADD), // skipped: empty and not kept
		hv("x-only-if-there", "v", corev3.HeaderValueOption_OVERWRITE_IF_EXISTS),
	}
	tbl := singleTable(t, routeConfig("rc", vhost("vh", []string{"*"}, r)))
	_, fwd := forwarded(t, tbl, Request{Host: "a.example.com", Path: "/p", Headers: map[string]string{
		"X-Drop": "1", "x-set": "old", "x-append": "client", "x-present": "client"}})
	want := map[string]string{
		":authority": "a.example.com", ":path": "/p", ":method": "GET", "x-append": "client,gw", "x-set": "new",
		"x-absent": "only-if-absent", "x-present": "client",
	}
	for k, v := range want {
		if fwd[k] != v {
			t.Errorf("%s = %q, want %q", k, fwd[k], v)
		}
	}
	for _, k := range []string{"x-drop", "x-empty", "x-only-if-there"} {
		if _, ok := fwd[k]; ok {
			t.Errorf("%s should be absent: %v", k, fwd)
		}
	}
}

func TestForwardedRewrites(t *testing.T) {
	prefix := routeWithMatch("prefix",
		&routev3.RouteMatch{PathSpecifier: &routev3.RouteMatch_PathSeparatedPrefix{PathSeparatedPrefix: "/api"}}, "c")
	prefix.GetRoute().PrefixRewrite = "/backend"
	prefix.GetRoute().HostRewriteSpecifier = &routev3.RouteAction_HostRewriteLiteral{HostRewriteLiteral: "internal"}
	prefix.GetRoute().AppendXForwardedHost = true
	re := routeWithMatch("regex",
		&routev3.RouteMatch{PathSpecifier: &routev3.RouteMatch_PathSeparatedPrefix{PathSeparatedPrefix: "/static"}}, "c")
	re.GetRoute().RegexRewrite = &matcherv3.RegexMatchAndSubstitute{Pattern: &matcherv3.RegexMatcher{Regex: `^/static\/*`},
		Substitution: "/"}
	tbl := singleTable(t, routeConfig("rc", vhost("vh", []string{"*"}, prefix, re)))

	_, fwd := forwarded(t, tbl, Request{Host: "shop.example.com", Path: "/api/items?page=2"})
	if fwd[":path"] != "/backend/items?page=2" || fwd[":authority"] != "internal" ||
		fwd["x-forwarded-host"] != "shop.example.com" {
		t.Errorf("prefix route: %v", fwd)
	}
	_, fwd = forwarded(t, tbl, Request{Host: "shop.example.com", Path: "/static/css/a.css?v=1"})
	if fwd[":path"] != "/css/a.css?v=1" || fwd[":authority"] != "shop.example.com" {
		t.Errorf("regex route: %v", fwd)
	}
}

func TestForwardedHostFromHeader(t *testing.T) {
	r := routeWithMatch("h", &routev3.RouteMatch{PathSpecifier: &routev3.RouteMatch_Prefix{Prefix: "/"}}, "c")
	r.GetRoute().HostRewriteSpecifier = &routev3.RouteAction_HostRewriteHeader{HostRewriteHeader: "X-Target-Host"}
	r.GetRoute().AppendXForwardedHost = true
	tbl := singleTable(t, routeConfig("rc", vhost("vh", []string{"*"}, r)))
	_, fwd := forwarded(t, tbl,
		Request{Host: "shop.example.com", Path: "/", Headers: map[string]string{"x-target-host": "backend.internal"}})
	if fwd[":authority"] != "backend.internal" || fwd["x-forwarded-host"] != "shop.example.com" {
		t.Errorf("with the header: %v", fwd)
	}
	// without the header Envoy leaves the host intact (and records no forwarded host)
	_, fwd = forwarded(t, tbl, Request{Host: "shop.example.com", Path: "/"})
	if fwd[":authority"] != "shop.example.com" || fwd["x-forwarded-host"] != "" {
		t.Errorf("without the header: %v", fwd)
	}
}

func TestForwardedWeightedClusterBeforeRoute(t *testing.T) {
	c0 := cw("c0", 1)
	c0.HostRewriteSpecifier = &routev3.WeightedCluster_ClusterWeight_HostRewriteLiteral{
		HostRewriteLiteral: "backend.internal"}
	c0.RequestHeadersToAdd = []*corev3.HeaderValueOption{hv("x-who", "c0",
		corev3.HeaderValueOption_OVERWRITE_IF_EXISTS_OR_ADD)}
	c1 := cw("c1", 1)
	r := weightedRoute("w", "", c0, c1)
	r.GetRoute().HostRewriteSpecifier = &routev3.RouteAction_HostRewriteLiteral{HostRewriteLiteral: "route.internal"}
	r.GetRoute().AppendXForwardedHost = true
	r.RequestHeadersToAdd = []*corev3.HeaderValueOption{hv("x-who", "route",
		corev3.HeaderValueOption_APPEND_IF_EXISTS_OR_ADD)}
	tbl := singleTable(t, routeConfig("rc", vhost("vh", []string{"*"}, r)))

	ans, fwd := forwarded(t, tbl, Request{Host: "h.example.com", Random: 0})
	// the entry's changes come first; the route's host rewrite wins and records the entry's host
	if ans.Cluster != "c0" || fwd["x-who"] != "c0,route" || fwd[":authority"] != "route.internal" ||
		fwd["x-forwarded-host"] != "backend.internal" {
		t.Errorf("entry c0: %s %v", ans.Cluster, fwd)
	}
	ans, fwd = forwarded(t, tbl, Request{Host: "h.example.com", Random: 1})
	if ans.Cluster != "c1" || fwd["x-who"] != "route" || fwd["x-forwarded-host"] != "h.example.com" {
		t.Errorf("entry c1: %s %v", ans.Cluster, fwd)
	}
}

func TestForwardedOnlyWhenForwarding(t *testing.T) {
	direct := &routev3.Route{Name: "d", Match: &routev3.RouteMatch{PathSpecifier: &routev3.RouteMatch_Prefix{Prefix: "/"}},
		Action: &routev3.Route_DirectResponse{
			DirectResponse: &routev3.DirectResponseAction{Status: 503, BodyFormat: &corev3.SubstitutionFormatString{
				Format: &corev3.SubstitutionFormatString_TextFormatSource{
					TextFormatSource: &corev3.DataSource{Specifier: &corev3.DataSource_InlineBytes{InlineBytes: []byte(
						"100%% down")}}},
			}}}}
	tbl := singleTable(t, routeConfig("rc", vhost("vh", []string{"*"}, direct)))
	ans, fwd := forwarded(t, tbl, Request{Path: "/"})
	if fwd != nil || ans.Status != 503 || ans.Body != "100% down" {
		t.Errorf("direct response: %+v %v", ans, fwd)
	}
	// plain Check leaves the forwarded headers alone
	if ans, err := tbl.Check(Request{Port: 10080, Host: "example.com", Path: "/"}); err != nil || ans.Status != 503 {
		t.Errorf("Check: %+v %v", ans, err)
	}
}

func TestLiteralFormat(t *testing.T) {
	src := func(s string) *corev3.SubstitutionFormatString {
		return &corev3.SubstitutionFormatString{Format: &corev3.SubstitutionFormatString_TextFormatSource{
			TextFormatSource: &corev3.DataSource{Specifier: &corev3.DataSource_InlineString{InlineString: s}}}}
	}
	if got, err := literalFormat(src("plain text")); err != nil || got != "plain text" {
		t.Errorf("plain: %q %v", got, err)
	}
	if _, err := literalFormat(src("code %RESPONSE_CODE%")); err == nil {
		t.Error("command operators are not evaluated and must be reported")
	}
}
