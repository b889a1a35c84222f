package routecheck

import (
	"strings"
	"testing"

	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	listenerv3 "github.com/envoyproxy/go-control-plane/envoy/config/listener/v3"
	routev3 "github.com/envoyproxy/go-control-plane/envoy/config/route/v3"
	hcmv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/network/http_connection_manager/v3"
	tcpv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/network/tcp_proxy/v3"
	customheaderv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/http/original_ip_detection/custom_header/v3"
	typev3 "github.com/envoyproxy/go-control-plane/envoy/type/v3"
	"google.golang.org/protobuf/types/known/anypb"
	"google.golang.org/protobuf/types/known/wrapperspb"
)

// Around the route table: path normalization, filter chain and listener selection, inline
// route configurations, configuration errors, client IP detection and header limits.

func TestPathNormalization(t *testing.T) {
	rc := routeConfig("rc", vhost("vh", []string{"*"},
		routeWithMatch("bc", &routev3.RouteMatch{PathSpecifier: &routev3.RouteMatch_Path{Path: "/b/c"}}, "bc"),
		prefixRoute("fallback", "/", "fallback")))
	mk := func(h *hcmv3.HttpConnectionManager) *Table { return hcmTable(t, h, rc) }
	plain := mk(rdsHCM("rc"))
	if ans := check(t, plain, Request{Path: "/a/../b//c"}); ans.Route != "fallback" {
		t.Errorf("no normalization: got route %q, want fallback", ans.Route)
	}
	h := rdsHCM("rc")
	h.NormalizePath = boolv(true)
	h.MergeSlashes = true
	norm := mk(h)
	for _, p := range []string{"/a/../b//c", "/b/./c", "/b/%2e/c?x=1", "//b/c"} {
		if ans := check(t, norm, Request{Path: p}); ans.Route != "bc" {
			t.Errorf("normalized %q: got route %q, want bc", p, ans.Route)
		}
	}
	h2 := rdsHCM("rc")
	h2.PathWithEscapedSlashesAction = hcmv3.HttpConnectionManager_REJECT_REQUEST
	if ans := check(t, mk(h2), Request{Path: "/b%2Fc"}); ans.Status != 400 || ans.Matched {
		t.Errorf("REJECT_REQUEST: got %+v", ans)
	}
	h3 := rdsHCM("rc")
	h3.PathWithEscapedSlashesAction = hcmv3.HttpConnectionManager_UNESCAPE_AND_REDIRECT
	if ans := check(t, mk(h3), Request{Path: "/b%2fc"}); ans.Status != 307 || ans.Location != "/b/c" {
		t.Errorf("UNESCAPE_AND_REDIRECT: got %+v", ans)
	}
	h4 := rdsHCM("rc")
	h4.PathWithEscapedSlashesAction = hcmv3.HttpConnectionManager_UNESCAPE_AND_FORWARD
	if ans := check(t, mk(h4), Request{Path: "/b%2Fc"}); ans.Route != "bc" {
		t.Errorf("UNESCAPE_AND_FORWARD: got %+v", ans)
	}
}

func TestFilterChainSNI(t *testing.T) {
	rcs := []*routev3.RouteConfiguration{}
	for _, n := range []string{"rc-exact", "rc-wild", "rc-wild-long", "rc-any", "rc-default", "rc-tls", "rc-plain"} {
		rcs = append(rcs, routeConfig(n, vhost("vh", []string{"*"}, prefixRoute("r", "/", "c-"+n))))
	}
	withTransport := func(fc *listenerv3.FilterChain, tp string) *listenerv3.FilterChain {
		if fc.FilterChainMatch == nil {
			fc.FilterChainMatch = &listenerv3.FilterChainMatch{}
		}
		fc.FilterChainMatch.TransportProtocol = tp
		return fc
	}
	sniListener := listener("sni", 10443,
		httpChain(t, "any", "rc-any"),
		httpChain(t, "wild", "rc-wild", "*.example.com"),
		httpChain(t, "exact", "rc-exact", "api.example.com", "www.example.com"),
		httpChain(t, "wild-long", "rc-wild-long", "*.b.example.com"),
	)
	defListener := listener("def", 20443, withTransport(httpChain(t, "only-api", "rc-exact", "api.example.com"), "tls"))
	defListener.DefaultFilterChain = httpChain(t, "fallback", "rc-default")
	mixed := listener("mixed", 30443,
		withTransport(httpChain(t, "plain", "rc-plain"), "raw_buffer"),
		withTransport(httpChain(t, "tls", "rc-tls"), "tls"),
	)
	// Envoy commits to the server-name level that matched; a transport
	// mismatch below it does not fall back to the catch-all chain.
	noFallback := listener("nofallback", 40443,
		withTransport(httpChain(t, "api-plain", "rc-exact", "api.example.com"), "raw_buffer"),
		httpChain(t, "catchall", "rc-any"),
	)
	h2 := httpChain(t, "h2", "rc-tls")
	h2.FilterChainMatch = &listenerv3.FilterChainMatch{ApplicationProtocols: []string{"h2"}}
	alpn := listener("alpn", 50443, httpChain(t, "no-alpn", "rc-plain"), h2)
	tbl, err := New([]*listenerv3.Listener{sniListener, defListener, mixed, noFallback, alpn}, rcs)
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		port       uint32
		sni        string
		alpn       []string
		chain, rc  string
		wantErrSub string
	}{
		{10443, "api.example.com", nil, "exact", "rc-exact", ""},
		{10443, "WWW.Example.com", nil, "exact", "rc-exact", ""},
		{10443, "x.example.com", nil, "wild", "rc-wild", ""},
		{10443, "x.y.example.com", nil, "wild", "rc-wild", ""},
		{10443, "a.b.example.com", nil, "wild-long", "rc-wild-long", ""},
		{10443, "example.com", nil, "any", "rc-any", ""},
		{10443, "", nil, "any", "rc-any", ""},
		{20443, "api.example.com", nil, "only-api", "rc-exact", ""},
		{20443, "other.org", nil, "fallback", "rc-default", ""},
		{20443, "", nil, "fallback", "rc-default", ""},
		{30443, "x.example.com", nil, "tls", "rc-tls", ""},
		{30443, "", nil, "plain", "rc-plain", ""},
		{40443, "other.example.com", nil, "catchall", "rc-any", ""},
		{40443, "api.example.com", nil, "", "", "no filter chain"},
		{50443, "x.example.com", []string{"h2", "http/1.1"}, "h2", "rc-tls", ""},
		{50443, "x.example.com", []string{"http/1.1"}, "no-alpn", "rc-plain", ""},
		{50443, "x.example.com", nil, "no-alpn", "rc-plain", ""},
	}
	for _, c := range cases {
		ans, err := tbl.Check(Request{Port: c.port, SNI: c.sni, ALPN: c.alpn, Host: "h", Path: "/"})
		if c.wantErrSub != "" {
			wantErr(t, err, ErrNoFilterChain, c.wantErrSub, "nofallback")
			continue
		}
		if err != nil {
			t.Errorf("port %d sni %q: %v", c.port, c.sni, err)
			continue
		}
		if ans.FilterChain != c.chain || ans.RouteConfig != c.rc || ans.Cluster != "c-"+c.rc {
			t.Errorf("port %d sni %q: got chain %q rc %q cluster %q, want chain %q rc %q",
				c.port, c.sni, ans.FilterChain, ans.RouteConfig, ans.Cluster, c.chain, c.rc)
		}
	}
}

func TestInlineRouteConfig(t *testing.T) {
	h := &hcmv3.HttpConnectionManager{
		StatPrefix: "inline",
		RouteSpecifier: &hcmv3.HttpConnectionManager_RouteConfig{
			RouteConfig: routeConfig("inline-rc", vhost("vh", []string{"*"}, prefixRoute("r", "/", "inline-cluster"))),
		},
	}
	l := listener("l", 10080, &listenerv3.FilterChain{Name: "fc", Filters: []*listenerv3.Filter{hcmFilter(t, h)}})
	tbl, err := New([]*listenerv3.Listener{l}, nil)
	if err != nil {
		t.Fatal(err)
	}
	ans := check(t, tbl, Request{Path: "/x"})
	want := Answer{Listener: "l", FilterChain: "fc", RouteConfig: "inline-rc", VirtualHost: "vh", Route: "r",
		Cluster: "inline-cluster", Status: 200, Matched: true}
	if ans != want {
		t.Errorf("got %+v, want %+v", ans, want)
	}
}

func TestListenerSelection(t *testing.T) {
	rc := routeConfig("rc", vhost("vh", []string{"*"}, prefixRoute("r", "/", "c")))
	udp := &listenerv3.Listener{Name: "quic", Address: addr(10443, true),
		FilterChains: []*listenerv3.FilterChain{httpChain(t, "", "rc")}}
	tcp := listener("tcp", 10443, httpChain(t, "", "rc"))
	// The address IP is ignored and additional_addresses count as ports.
	extra := listener("extra", 10080, httpChain(t, "", "rc"))
	extra.AdditionalAddresses = []*listenerv3.AdditionalAddress{{Address: addr(10081, false)}}
	tbl, err := New([]*listenerv3.Listener{udp, tcp, extra}, []*routev3.RouteConfiguration{rc})
	if err != nil {
		t.Fatal(err)
	}
	if ans := check(t, tbl, Request{Port: 10443}); ans.Listener != "tcp" {
		t.Errorf("TCP+UDP on one port: got listener %q, want tcp", ans.Listener)
	}
	if ans := check(t, tbl, Request{Port: 10081}); ans.Listener != "extra" {
		t.Errorf("additional address: got listener %q, want extra", ans.Listener)
	}
}

func TestErrors(t *testing.T) {
	rc := routeConfig("rc", vhost("vh", []string{"*"}, prefixRoute("r", "/", "c")))
	tcpAny, err := anypb.New(
		&tcpv3.TcpProxy{StatPrefix: "tcp", ClusterSpecifier: &tcpv3.TcpProxy_Cluster{Cluster: "backend"}})
	if err != nil {
		t.Fatal(err)
	}
	tcpListener := listener("tcp-l", 9000, &listenerv3.FilterChain{Filters: []*listenerv3.Filter{{
		Name: "envoy.filters.network.tcp_proxy", ConfigType: &listenerv3.Filter_TypedConfig{TypedConfig: tcpAny},
	}}})
	badAny := listener("bad-l", 9001, &listenerv3.FilterChain{Filters: []*listenerv3.Filter{{
		Name:       hcmFilterName,
		ConfigType: &listenerv3.Filter_TypedConfig{TypedConfig: &anypb.Any{TypeUrl: hcmTypeURL, Value: []byte{0x0a, 0xff}}},
	}}})
	missingRDS := listener("missing-rds-l", 9002, httpChain(t, "fc", "nope"))
	dupA := listener("dup-a", 9003, httpChain(t, "", "rc"))
	dupB := listener("dup-b", 9003, httpChain(t, "", "rc"))
	sniOnly := listener("sni-only-l", 9004, httpChain(t, "", "rc", "a.example.com"))
	unsupported := routeConfig("rc-unsupported", vhost("vh", []string{"*"},
		routeWithMatch("uri-template",
			&routev3.RouteMatch{
				PathSpecifier: &routev3.RouteMatch_PathMatchPolicy{PathMatchPolicy: &corev3.TypedExtensionConfig{Name: "uri"}}},
			"c"),
		prefixRoute("r", "/", "c")))
	unsupportedL := listener("unsupported-l", 9005, httpChain(t, "", "rc-unsupported"))
	badRegex := routeConfig("rc-bad-regex", vhost("vh", []string{"*"},
		routeWithMatch("bad", &routev3.RouteMatch{PathSpecifier: &routev3.RouteMatch_SafeRegex{SafeRegex: regex("(")}}, "c")))
	badRegexL := listener("bad-regex-l", 9006, httpChain(t, "", "rc-bad-regex"))
	dupDomain := routeConfig("rc-dup-domain", vhost("a", []string{"x.com"}), vhost("b", []string{"X.com"}))
	dupDomainL := listener("dup-domain-l", 9007, httpChain(t, "", "rc-dup-domain"))

	tbl, err := New(
		[]*listenerv3.Listener{listener("http", 10080, httpChain(t, "", "rc")), tcpListener, badAny, missingRDS, dupA, dupB,
			sniOnly, unsupportedL, badRegexL, dupDomainL},
		[]*routev3.RouteConfiguration{rc, unsupported, badRegex, dupDomain})
	if err != nil {
		t.Fatal(err)
	}

	_, err = tbl.Check(Request{Port: 8080, Host: "h", Path: "/"})
	wantErr(t, err, ErrNoListener, "no listener on port 8080; listeners: ", "9000 (tcp-l)", "10080 (http)")

	// A tcp_proxy chain answers at layer 4 (see l4_test.go).
	if ans, err := tbl.Check(Request{Port: 9000, Host: "h", Path: "/"}); err != nil ||
		ans != (Answer{Listener: "tcp-l", Cluster: "backend", Status: 200, Matched: true, L4: true}) {
		t.Errorf("tcp_proxy listener: got %+v, %v", ans, err)
	}

	ans, err := tbl.Check(Request{Port: 9001, Host: "h", Path: "/"})
	wantErr(t, err, ErrInvalidConfig, "bad-l")
	if ans.Listener != "bad-l" {
		t.Errorf("partial answer listener = %q, want bad-l", ans.Listener)
	}

	ans, err = tbl.Check(Request{Port: 9002, Host: "h", Path: "/"})
	wantErr(t, err, ErrRouteConfigNotFound, `"nope"`, "missing-rds-l")
	if ans.FilterChain != "fc" {
		t.Errorf("partial answer filter chain = %q, want fc", ans.FilterChain)
	}

	_, err = tbl.Check(Request{Port: 9003, Host: "h", Path: "/"})
	wantErr(t, err, ErrAmbiguousListener, "dup-a", "dup-b")

	_, err = tbl.Check(Request{Port: 9004, SNI: "b.example.com", Host: "h", Path: "/"})
	wantErr(t, err, ErrNoFilterChain, "sni-only-l", `"b.example.com"`)

	_, err = tbl.Check(Request{Port: 9005, Host: "h", Path: "/"})
	wantErr(t, err, ErrUnsupported, "uri-template")

	_, err = tbl.Check(Request{Port: 9006, Host: "h", Path: "/"})
	wantErr(t, err, ErrInvalidConfig, "safe_regex")

	_, err = tbl.Check(Request{Port: 9007, Host: "x.com", Path: "/"})
	wantErr(t, err, ErrInvalidConfig, "x.com")

	_, err = New([]*listenerv3.Listener{nil}, nil)
	wantErr(t, err, ErrInvalidConfig, "nil")
	_, err = New(nil, []*routev3.RouteConfiguration{rc, rc})
	wantErr(t, err, ErrInvalidConfig, `duplicate route configuration name "rc"`)
}

func TestCustomHeaderRejectsWithoutClientIP(t *testing.T) {
	rc := routeConfig("rc", vhost("vh", []string{"*"}, prefixRoute("all", "/", "c")))
	mk := func(reject bool) *Table {
		cfg := &customheaderv3.CustomHeaderConfig{HeaderName: "X-Client-IP"}
		if reject {
			cfg.RejectWithStatus = &typev3.HttpStatus{Code: typev3.StatusCode_Forbidden}
		}
		tc, err := anypb.New(cfg)
		if err != nil {
			t.Fatal(err)
		}
		h := rdsHCM("rc")
		h.OriginalIpDetectionExtensions = []*corev3.TypedExtensionConfig{
			{Name: "envoy.extensions.http.original_ip_detection.custom_header",
				TypedConfig: tc}}
		return hcmTable(t, h, rc)
	}
	closed := mk(true)
	for _, hdr := range []map[string]string{nil, {"x-client-ip": "not-an-ip"}} {
		if ans := check(t, closed, Request{Path: "/", Headers: hdr}); ans.Status != 403 || ans.Matched {
			t.Errorf("fail closed, headers %v: got %+v", hdr, ans)
		}
	}
	if ans := check(t, closed,
		Request{Path: "/", Headers: map[string]string{"X-Client-IP": "2001:db8::1"}}); ans.Status != 200 ||
		ans.Cluster != "c" {
		t.Errorf("fail closed with an IP: got %+v", ans)
	}
	if ans := check(t, mk(false), Request{Path: "/"}); ans.Status != 200 {
		t.Errorf("without reject_with_status the request passes: got %+v", ans)
	}
}

// TestMaxRequestHeaders: a header block over max_request_headers_kb (60 KiB when unset) is
// answered 431 before routing; Host counts, and the limit is whole KiB.
func TestMaxRequestHeaders(t *testing.T) {
	rc := routeConfig("rc", vhost("vh", []string{"*"}, prefixRoute("r", "/", "c")))
	mk := func(h *hcmv3.HttpConnectionManager) *Table { return hcmTable(t, h, rc) }
	pad := func(n int) map[string]string { return map[string]string{"x-p": strings.Repeat("p", n-len("x-p"))} }
	def := mk(rdsHCM("rc"))
	if ans := check(t, def, Request{Host: "a", Headers: pad(60*1024 - len("host") - 1)}); ans.Status != 200 {
		t.Errorf("at the 60 KiB default: got %+v", ans)
	}
	if ans := check(t, def, Request{Host: "ab", Headers: pad(60*1024 - len("host") - 1)}); ans.Status != 431 ||
		ans.Matched {
		t.Errorf("one byte over the 60 KiB default: got %+v", ans)
	}
	h := rdsHCM("rc")
	h.MaxRequestHeadersKb = wrapperspb.UInt32(2)
	small := mk(h)
	if ans := check(t, small, Request{Host: "a", Headers: pad(2000)}); ans.Status != 200 {
		t.Errorf("under 2 KiB: got %+v", ans)
	}
	if ans := check(t, small, Request{Host: "a", Headers: pad(2100)}); ans.Status != 431 {
		t.Errorf("over 2 KiB: got %+v", ans)
	}
}
