package routecheck

import (
	"math"
	"testing"

	xdscorev3 "github.com/cncf/xds/go/xds/core/v3"
	xdsmatcherv3 "github.com/cncf/xds/go/xds/type/matcher/v3"
	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	listenerv3 "github.com/envoyproxy/go-control-plane/envoy/config/listener/v3"
	routev3 "github.com/envoyproxy/go-control-plane/envoy/config/route/v3"
	tlsinspectorv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/listener/tls_inspector/v3"
	tcpv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/network/tcp_proxy/v3"
	udpv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/udp/udp_proxy/v3"
	tlsv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/transport_sockets/tls/v3"
	"google.golang.org/protobuf/types/known/wrapperspb"
)

// Builders for layer-4 listeners, shaped like Envoy Gateway's TCP/TLS/UDP
// listeners.

func tcpProxyNetFilter(t testing.TB, p *tcpv3.TcpProxy) *listenerv3.Filter {
	return networkFilter(t, tcpProxyFilterName, p)
}

func tcpChain(t testing.TB, name, cluster string, serverNames ...string) *listenerv3.FilterChain {
	return sniChain(name, tcpProxyNetFilter(t, &tcpv3.TcpProxy{
		StatPrefix:       "tcp",
		ClusterSpecifier: &tcpv3.TcpProxy_Cluster{Cluster: cluster},
	}), serverNames)
}

// terminating adds a TLS transport socket (TLS terminated by Envoy, then
// tcp_proxy forwards the plaintext).
func terminating(t testing.TB, fc *listenerv3.FilterChain) *listenerv3.FilterChain {
	fc.TransportSocket = &corev3.TransportSocket{
		Name: "envoy.transport_sockets.tls",
		ConfigType: &corev3.TransportSocket_TypedConfig{TypedConfig: mustAny(t, &tlsv3.DownstreamTlsContext{
			CommonTlsContext: &tlsv3.CommonTlsContext{
				TlsCertificateSdsSecretConfigs: []*tlsv3.SdsSecretConfig{{Name: "cert"}},
			},
		})},
	}
	return fc
}

func withTLSInspector(t testing.TB, l *listenerv3.Listener) *listenerv3.Listener {
	l.ListenerFilters = append(l.ListenerFilters, &listenerv3.ListenerFilter{
		Name:       tlsInspectorName,
		ConfigType: &listenerv3.ListenerFilter_TypedConfig{TypedConfig: mustAny(t, &tlsinspectorv3.TlsInspector{})},
	})
	return l
}

func udpListener(name string, port uint32, filters ...*listenerv3.ListenerFilter) *listenerv3.Listener {
	return &listenerv3.Listener{Name: name, Address: addr(port, true), ListenerFilters: filters}
}

func udpProxyListenerFilter(t testing.TB, cfg *udpv3.UdpProxyConfig) *listenerv3.ListenerFilter {
	return &listenerv3.ListenerFilter{
		Name:       udpProxyFilterName,
		ConfigType: &listenerv3.ListenerFilter_TypedConfig{TypedConfig: mustAny(t, cfg)},
	}
}

func udpRouteAction(t testing.TB, cluster string) *xdsmatcherv3.Matcher_OnMatch {
	return &xdsmatcherv3.Matcher_OnMatch{
		OnMatch: &xdsmatcherv3.Matcher_OnMatch_Action{Action: &xdscorev3.TypedExtensionConfig{
			Name:        "route",
			TypedConfig: mustAny(t, &udpv3.Route{Cluster: cluster}),
		}}}
}

// udpMatcherProxy is what Envoy Gateway generates for a UDPRoute.
func udpMatcherProxy(t testing.TB, m *xdsmatcherv3.Matcher) *listenerv3.ListenerFilter {
	return udpProxyListenerFilter(t, &udpv3.UdpProxyConfig{
		StatPrefix:     "service",
		RouteSpecifier: &udpv3.UdpProxyConfig_Matcher{Matcher: m},
	})
}

func TestL4(t *testing.T) {
	rcs := []*routev3.RouteConfiguration{
		routeConfig("rc", vhost("vh", []string{"*"}, prefixRoute("r", "/", "c-https"))),
		routeConfig("rc-h3", vhost("vh", []string{"*"}, prefixRoute("r", "/", "c-h3"))),
	}

	tlsDefault := withTLSInspector(t, listener("tls-default", 9446, tcpChain(t, "a", "c-a", "a.example.com")))
	tlsDefault.DefaultFilterChain = tcpChain(t, "fallback", "c-fallback")

	rawOnly := tcpChain(t, "raw", "c-raw")
	rawOnly.FilterChainMatch = &listenerv3.FilterChainMatch{TransportProtocol: "raw_buffer"}
	otherPort := tcpChain(t, "other-port", "c-other-port")
	otherPort.FilterChainMatch = &listenerv3.FilterChainMatch{DestinationPort: wrapperspb.UInt32(9999)}

	quic := &listenerv3.Listener{Name: "quic-8443", Address: addr(8443, true),
		FilterChains: []*listenerv3.FilterChain{httpChain(t, "h3", "rc-h3")}}

	nested := &xdsmatcherv3.Matcher{
		OnNoMatch: &xdsmatcherv3.Matcher_OnMatch{OnMatch: &xdsmatcherv3.Matcher_OnMatch_Matcher{
			Matcher: &xdsmatcherv3.Matcher{OnNoMatch: udpRouteAction(t, "c-nested")},
		}}}
	listMatcher := &xdsmatcherv3.Matcher{
		MatcherType: &xdsmatcherv3.Matcher_MatcherList_{MatcherList: &xdsmatcherv3.Matcher_MatcherList{}},
		OnNoMatch:   udpRouteAction(t, "c-list-default"),
	}
	badAction := &xdsmatcherv3.Matcher{
		OnNoMatch: &xdsmatcherv3.Matcher_OnMatch{
			OnMatch: &xdsmatcherv3.Matcher_OnMatch_Action{Action: &xdscorev3.TypedExtensionConfig{
				Name: "route", TypedConfig: mustAny(t, &tcpv3.TcpProxy{ClusterSpecifier: &tcpv3.TcpProxy_Cluster{Cluster: "x"}}),
			}}}}

	noCluster := &listenerv3.FilterChain{Name: "no-cluster",
		Filters: []*listenerv3.Filter{tcpProxyNetFilter(t, &tcpv3.TcpProxy{StatPrefix: "tcp"})}}
	zeroWeights := &listenerv3.FilterChain{Name: "zero",
		Filters: []*listenerv3.Filter{tcpProxyNetFilter(t, &tcpv3.TcpProxy{
			StatPrefix: "tcp",
			ClusterSpecifier: &tcpv3.TcpProxy_WeightedClusters{WeightedClusters: &tcpv3.TcpProxy_WeightedCluster{
				Clusters: []*tcpv3.TcpProxy_WeightedCluster_ClusterWeight{{Name: "z1"}, {Name: "z2"}},
			}},
		})}}
	redisOnly := &listenerv3.FilterChain{Name: "redis",
		Filters: []*listenerv3.Filter{{Name: "envoy.filters.network.redis_proxy"}}}

	listeners := []*listenerv3.Listener{
		listener("tcp-plain", 9000, tcpChain(t, "tcp-route", "c-tcp")),
		withTLSInspector(t, listener("tls-passthrough", 9443,
			tcpChain(t, "exact", "c-exact", "api.example.com", "www.example.com"),
			tcpChain(t, "wild", "c-wild", "*.example.com"),
			tcpChain(t, "wild-long", "c-wild-long", "*.b.example.com"),
		)),
		withTLSInspector(t, listener("tls-terminate", 9444,
			terminating(t, tcpChain(t, "t-api", "c-term-api", "api.example.com")),
			terminating(t, tcpChain(t, "t-any", "c-term-any")),
		)),
		listener("tls-terminate-single", 9445, terminating(t, tcpChain(t, "t-only", "c-term-only"))),
		tlsDefault,
		listener("tcp-raw", 9300, rawOnly),
		listener("tcp-dport", 9301, otherPort),
		udpListener("udp-dns", 5353, udpMatcherProxy(t, &xdsmatcherv3.Matcher{OnNoMatch: udpRouteAction(t, "c-dns")})),
		udpListener("udp-legacy", 5354, udpProxyListenerFilter(t, &udpv3.UdpProxyConfig{
			StatPrefix: "legacy", RouteSpecifier: &udpv3.UdpProxyConfig_Cluster{Cluster: "c-legacy"},
		})),
		udpListener("udp-nested", 5355, udpMatcherProxy(t, nested)),
		listener("tcp-7000", 7000, tcpChain(t, "tcp-7000-route", "c-tcp-7000")),
		udpListener("udp-7000", 7000, udpMatcherProxy(t, &xdsmatcherv3.Matcher{OnNoMatch: udpRouteAction(t, "c-udp-7000")})),
		listener("https-8443", 8443, httpChain(t, "h2", "rc")),
		quic,
		// Broken or unsupported.
		udpListener("udp-noroute", 5400, udpMatcherProxy(t, &xdsmatcherv3.Matcher{})),
		udpListener("udp-list", 5401, udpMatcherProxy(t, listMatcher)),
		udpListener("udp-badaction", 5402, udpMatcherProxy(t, badAction)),
		udpListener("udp-other", 5403, &listenerv3.ListenerFilter{Name: "envoy.filters.udp.dns_filter"}),
		listener("tcp-nocluster", 9200, noCluster),
		listener("tcp-zero", 9201, zeroWeights),
		listener("tcp-redis", 9202, redisOnly),
	}
	tbl, err := New(listeners, rcs)
	if err != nil {
		t.Fatal(err)
	}

	l4 := func(listener, chain, cluster string) Answer {
		return Answer{Listener: listener, FilterChain: chain, Cluster: cluster, Status: 200, Matched: true, L4: true}
	}
	cases := []struct {
		name    string
		req     Request
		want    Answer
		err     error // sentinel; nil means success
		errSubs []string
	}{
		// Plain TCP: one chain, no SNI involved; HTTP fields are irrelevant.
		{"plain tcp", Request{Port: 9000}, l4("tcp-plain", "tcp-route", "c-tcp"), nil, nil},
		{"plain tcp ignores host and path", Request{Port: 9000, Host: "h", Path: "/x"}, l4("tcp-plain", "tcp-route", "c-tcp"),
			nil, nil},
		{"plain tcp with SNI", Request{Port: 9000, SNI: "x.example.com"}, l4("tcp-plain", "tcp-route", "c-tcp"), nil, nil},
		{"plain tcp, explicit TCP", Request{Port: 9000, Protocol: "TCP"}, l4("tcp-plain", "tcp-route", "c-tcp"), nil, nil},
		// Without a TLS inspector the connection is raw_buffer whatever the client sends.
		{"no inspector: SNI unseen, raw_buffer chain", Request{Port: 9300, SNI: "x.example.com"},
			l4("tcp-raw", "raw", "c-raw"), nil, nil},
		{"no inspector: no chain names the unseen SNI", Request{Port: 9301, SNI: "s.example.com"},
			Answer{Listener: "tcp-dport"},
			ErrNoFilterChain, []string{"tcp-dport", `SNI ""`, "raw_buffer", `SNI "s.example.com" is not seen`}},

		// TLS passthrough: exact server names, then the longest wildcard.
		{"passthrough exact", Request{Port: 9443, SNI: "api.example.com"}, l4("tls-passthrough", "exact", "c-exact"), nil,
			nil},
		{"passthrough exact second name, case-insensitive", Request{Port: 9443, SNI: "WWW.Example.COM"},
			l4("tls-passthrough", "exact", "c-exact"), nil, nil},
		{"passthrough wildcard", Request{Port: 9443, SNI: "x.example.com"}, l4("tls-passthrough", "wild", "c-wild"), nil,
			nil},
		{"passthrough wildcard, deeper name", Request{Port: 9443, SNI: "x.y.example.com"},
			l4("tls-passthrough", "wild", "c-wild"), nil, nil},
		{"passthrough longest wildcard", Request{Port: 9443, SNI: "a.b.example.com"},
			l4("tls-passthrough", "wild-long", "c-wild-long"), nil, nil},
		{"passthrough wildcard needs a label", Request{Port: 9443, SNI: "example.com"}, Answer{Listener: "tls-passthrough"},
			ErrNoFilterChain, []string{"tls-passthrough", `"example.com"`}},
		{"passthrough no SNI", Request{Port: 9443}, Answer{Listener: "tls-passthrough"},
			ErrNoFilterChain, []string{"tls-passthrough", `SNI ""`, "raw_buffer", "no default_filter_chain"}},
		{"passthrough unknown SNI", Request{Port: 9443, SNI: "other.org"}, Answer{Listener: "tls-passthrough"},
			ErrNoFilterChain, []string{`"other.org"`}},

		// TLS terminated by the chain's transport socket.
		{"terminate by SNI", Request{Port: 9444, SNI: "api.example.com"}, l4("tls-terminate", "t-api", "c-term-api"), nil,
			nil},
		{"terminate catch-all chain", Request{Port: 9444, SNI: "other.example.com"},
			l4("tls-terminate", "t-any", "c-term-any"), nil, nil},
		{"terminate catch-all without SNI", Request{Port: 9444}, l4("tls-terminate", "t-any", "c-term-any"), nil, nil},
		{"terminate single chain", Request{Port: 9445, SNI: "any.example.com"},
			l4("tls-terminate-single", "t-only", "c-term-only"), nil, nil},
		{"default_filter_chain by SNI", Request{Port: 9446, SNI: "a.example.com"}, l4("tls-default", "a", "c-a"), nil, nil},
		{"default_filter_chain fallback", Request{Port: 9446, SNI: "b.example.com"},
			l4("tls-default", "fallback", "c-fallback"), nil, nil},

		// UDP.
		{"udp matcher", Request{Port: 5353, Protocol: "UDP"}, l4("udp-dns", "", "c-dns"), nil, nil},
		{"udp protocol is case-insensitive", Request{Port: 5353, Protocol: "udp"}, l4("udp-dns", "", "c-dns"), nil, nil},
		{"udp-only port without protocol", Request{Port: 5353}, l4("udp-dns", "", "c-dns"), nil, nil},
		{"udp-only port, TCP", Request{Port: 5353, Protocol: "TCP"}, Answer{}, ErrNoListener,
			[]string{"no TCP listener on port 5353", "5353 (udp-dns, UDP)"}},
		{"tcp-only port, UDP", Request{Port: 9000, Protocol: "UDP"}, Answer{}, ErrNoListener,
			[]string{"no UDP listener on port 9000"}},
		{"udp legacy cluster", Request{Port: 5354, Protocol: "UDP"}, l4("udp-legacy", "", "c-legacy"), nil, nil},
		{"udp nested matcher", Request{Port: 5355, Protocol: "UDP"}, l4("udp-nested", "", "c-nested"), nil, nil},

		// TCP and UDP on the same port.
		{"shared port, default protocol", Request{Port: 7000}, l4("tcp-7000", "tcp-7000-route", "c-tcp-7000"), nil, nil},
		{"shared port, TCP", Request{Port: 7000, Protocol: "TCP"}, l4("tcp-7000", "tcp-7000-route", "c-tcp-7000"), nil, nil},
		{"shared port, UDP", Request{Port: 7000, Protocol: "UDP"}, l4("udp-7000", "", "c-udp-7000"), nil, nil},
		// HTTPS and HTTP/3 on one port: UDP reaches the QUIC listener's HCM.
		{"https over TCP", Request{Port: 8443, SNI: "example.com", Host: "example.com"},
			Answer{Listener: "https-8443", FilterChain: "h2", RouteConfig: "rc", VirtualHost: "vh", Route: "r",
				Cluster: "c-https", Status: 200, Matched: true}, nil, nil},
		{"http/3 over UDP", Request{Port: 8443, Protocol: "UDP", SNI: "example.com", Host: "example.com"},
			Answer{Listener: "quic-8443", FilterChain: "h3", RouteConfig: "rc-h3", VirtualHost: "vh", Route: "r",
				Cluster: "c-h3", Status: 200, Matched: true}, nil, nil},

		// Errors.
		{"unknown protocol", Request{Port: 9000, Protocol: "SCTP"}, Answer{}, ErrUnsupported, []string{`"SCTP"`}},
		{"udp without route", Request{Port: 5400, Protocol: "UDP"}, Answer{Listener: "udp-noroute"}, ErrNoRoute,
			[]string{"udp-noroute", "on_no_match"}},
		{"udp matcher_list", Request{Port: 5401, Protocol: "UDP"}, Answer{Listener: "udp-list"}, ErrUnsupported,
			[]string{"udp-list", "matcher_list"}},
		{"udp action of the wrong type", Request{Port: 5402, Protocol: "UDP"}, Answer{Listener: "udp-badaction"},
			ErrInvalidConfig, []string{"udp-badaction", udpRouteTypeURL, tcpProxyTypeURL}},
		{"udp without udp_proxy", Request{Port: 5403, Protocol: "UDP"}, Answer{Listener: "udp-other"}, ErrUnsupported,
			[]string{"udp-other", "envoy.filters.udp.dns_filter"}},
		{"tcp_proxy without cluster", Request{Port: 9200}, Answer{Listener: "tcp-nocluster", FilterChain: "no-cluster"},
			ErrInvalidConfig, []string{"tcp-nocluster", "no cluster specifier"}},
		{"tcp_proxy with zero weights", Request{Port: 9201}, Answer{Listener: "tcp-zero", FilterChain: "zero"},
			ErrInvalidConfig, []string{"sum of weights"}},
		{"chain without hcm or tcp_proxy", Request{Port: 9202}, Answer{Listener: "tcp-redis", FilterChain: "redis"},
			ErrNoHTTPConnectionManager,
			[]string{"tcp-redis", `filter chain "redis"`, "envoy.filters.network.redis_proxy"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ans, err := tbl.Check(c.req)
			if c.err != nil {
				wantErr(t, err, c.err, c.errSubs...)
			} else if err != nil {
				t.Fatalf("Check(%+v): unexpected error: %v", c.req, err)
			}
			if ans != c.want {
				t.Errorf("Check(%+v):\n got %+v\nwant %+v", c.req, ans, c.want)
			}
		})
	}
}

func TestTCPProxyWeightedClusters(t *testing.T) {
	weighted := func(name string, weights ...uint32) *listenerv3.FilterChain {
		wc := &tcpv3.TcpProxy_WeightedCluster{}
		for i, w := range weights {
			wc.Clusters = append(wc.Clusters,
				&tcpv3.TcpProxy_WeightedCluster_ClusterWeight{Name: string(rune('a' + i)), Weight: w})
		}
		return &listenerv3.FilterChain{Name: name, Filters: []*listenerv3.Filter{tcpProxyNetFilter(t, &tcpv3.TcpProxy{
			StatPrefix:       "tcp",
			ClusterSpecifier: &tcpv3.TcpProxy_WeightedClusters{WeightedClusters: wc},
		})}}
	}
	tbl, err := New([]*listenerv3.Listener{
		listener("w37", 9100, weighted("w37", 3, 7)),                           // a: 0-2, b: 3-9
		withTLSInspector(t, listener("w112", 9101, weighted("w112", 1, 1, 2))), // a: 0, b: 1, c: 2-3
		listener("w-max", 9102, weighted("w-max", math.MaxUint32-1, 1)),        // a: 0..2^32-3, b: 2^32-2
		listener("w-single", 9103, weighted("w-single", 5)),                    // always a
	}, nil)
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		port    uint32
		random  uint64
		cluster string
	}{
		{9100, 0, "a"},
		{9100, 2, "a"}, // last value of the first range
		{9100, 3, "b"}, // first value of the second range
		{9100, 9, "b"},
		{9100, 10, "a"}, // wraps: 10 % 10 == 0
		{9100, 12, "a"},
		{9100, 13, "b"},
		{9100, math.MaxUint64, "b"}, // 18446744073709551615 % 10 == 5
		{9101, 0, "a"},
		{9101, 1, "b"},
		{9101, 2, "c"},
		{9101, 3, "c"},
		{9101, 4, "a"},
		{9101, math.MaxUint64, "c"}, // % 4 == 3
		{9102, math.MaxUint32 - 2, "a"},
		{9102, math.MaxUint32 - 1, "b"},
		{9102, math.MaxUint32, "a"}, // % (2^32-1) == 0
		{9103, 0, "a"},
		{9103, math.MaxUint64, "a"},
	}
	for _, c := range cases {
		ans, err := tbl.Check(Request{Port: c.port, Random: c.random, SNI: "ignored.example.com"})
		if err != nil {
			t.Errorf("port %d random %d: %v", c.port, c.random, err)
			continue
		}
		if ans.Cluster != c.cluster || ans.Status != 200 || !ans.Matched || !ans.L4 || ans.RouteConfig != "" {
			t.Errorf("port %d random %d: got %+v, want cluster %q", c.port, c.random, ans, c.cluster)
		}
	}
}
