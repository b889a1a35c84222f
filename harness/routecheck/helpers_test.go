package routecheck

import (
	"errors"
	"strings"
	"testing"

	cncfv3 "github.com/cncf/xds/go/xds/core/v3"
	cncfmatcherv3 "github.com/cncf/xds/go/xds/type/matcher/v3"
	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	listenerv3 "github.com/envoyproxy/go-control-plane/envoy/config/listener/v3"
	rbacconfigv3 "github.com/envoyproxy/go-control-plane/envoy/config/rbac/v3"
	routev3 "github.com/envoyproxy/go-control-plane/envoy/config/route/v3"
	routerv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/http/router/v3"
	hcmv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/network/http_connection_manager/v3"
	matcherv3 "github.com/envoyproxy/go-control-plane/envoy/type/matcher/v3"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/anypb"
	"google.golang.org/protobuf/types/known/wrapperspb"
)

// Small builders so each test shows only the xDS that matters to it.

func mustAny(t testing.TB, m proto.Message) *anypb.Any {
	t.Helper()
	a, err := anypb.New(m)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

func rdsHCM(routeConfig string) *hcmv3.HttpConnectionManager {
	return &hcmv3.HttpConnectionManager{
		StatPrefix: "http",
		RouteSpecifier: &hcmv3.HttpConnectionManager_Rds{Rds: &hcmv3.Rds{
			RouteConfigName: routeConfig,
		}},
	}
}

// networkFilter is the network filter name with config as its typed_config.
func networkFilter(t testing.TB, name string, config proto.Message) *listenerv3.Filter {
	return &listenerv3.Filter{
		Name:       name,
		ConfigType: &listenerv3.Filter_TypedConfig{TypedConfig: mustAny(t, config)},
	}
}

func hcmFilter(t testing.TB, h *hcmv3.HttpConnectionManager) *listenerv3.Filter {
	return networkFilter(t, hcmFilterName, h)
}

// sniChain is the filter chain name of the one filter f, matching serverNames by SNI when
// there are any.
func sniChain(name string, f *listenerv3.Filter, serverNames []string) *listenerv3.FilterChain {
	fc := &listenerv3.FilterChain{Name: name, Filters: []*listenerv3.Filter{f}}
	if len(serverNames) > 0 {
		fc.FilterChainMatch = &listenerv3.FilterChainMatch{ServerNames: serverNames}
	}
	return fc
}

func httpChain(t testing.TB, name, routeConfig string, serverNames ...string) *listenerv3.FilterChain {
	return sniChain(name, hcmFilter(t, rdsHCM(routeConfig)), serverNames)
}

// hcmTable is a table of one plain-HTTP listener with the connection manager h over rc.
func hcmTable(t *testing.T, h *hcmv3.HttpConnectionManager, rc *routev3.RouteConfiguration) *Table {
	t.Helper()
	l := listener("l", 10080, &listenerv3.FilterChain{Filters: []*listenerv3.Filter{hcmFilter(t, h)}})
	tbl, err := New([]*listenerv3.Listener{l}, []*routev3.RouteConfiguration{rc})
	if err != nil {
		t.Fatal(err)
	}
	return tbl
}

func addr(port uint32, udp bool) *corev3.Address {
	proto := corev3.SocketAddress_TCP
	if udp {
		proto = corev3.SocketAddress_UDP
	}
	return &corev3.Address{Address: &corev3.Address_SocketAddress{SocketAddress: &corev3.SocketAddress{
		Protocol:      proto,
		Address:       "0.0.0.0",
		PortSpecifier: &corev3.SocketAddress_PortValue{PortValue: port},
	}}}
}

func listener(name string, port uint32, chains ...*listenerv3.FilterChain) *listenerv3.Listener {
	return &listenerv3.Listener{Name: name, Address: addr(port, false), FilterChains: chains}
}

func vhost(name string, domains []string, routes ...*routev3.Route) *routev3.VirtualHost {
	return &routev3.VirtualHost{Name: name, Domains: domains, Routes: routes}
}

func routeConfig(name string, vhs ...*routev3.VirtualHost) *routev3.RouteConfiguration {
	return &routev3.RouteConfiguration{Name: name, VirtualHosts: vhs}
}

func toCluster(cluster string) *routev3.Route_Route {
	return &routev3.Route_Route{Route: &routev3.RouteAction{
		ClusterSpecifier: &routev3.RouteAction_Cluster{Cluster: cluster},
	}}
}

func prefixRoute(name, prefix, cluster string) *routev3.Route {
	return &routev3.Route{
		Name:   name,
		Match:  &routev3.RouteMatch{PathSpecifier: &routev3.RouteMatch_Prefix{Prefix: prefix}},
		Action: toCluster(cluster),
	}
}

func routeWithMatch(name string, m *routev3.RouteMatch, cluster string) *routev3.Route {
	return &routev3.Route{Name: name, Match: m, Action: toCluster(cluster)}
}

func exactStr(s string) *matcherv3.StringMatcher {
	return &matcherv3.StringMatcher{MatchPattern: &matcherv3.StringMatcher_Exact{Exact: s}}
}

func regex(re string) *matcherv3.RegexMatcher {
	return &matcherv3.RegexMatcher{Regex: re}
}

func boolv(b bool) *wrapperspb.BoolValue { return wrapperspb.Bool(b) }

// singleTable serves one route configuration on port 10080 over plaintext.
func singleTable(t testing.TB, rc *routev3.RouteConfiguration) *Table {
	t.Helper()
	tbl, err := New([]*listenerv3.Listener{listener("http", 10080, httpChain(t, "", rc.GetName()))},
		[]*routev3.RouteConfiguration{rc})
	if err != nil {
		t.Fatal(err)
	}
	return tbl
}

func check(t *testing.T, tbl *Table, req Request) Answer {
	t.Helper()
	if req.Port == 0 {
		req.Port = 10080
	}
	if req.Host == "" {
		req.Host = "example.com"
	}
	ans, err := tbl.Check(req)
	if err != nil {
		t.Fatalf("Check(%+v): unexpected error: %v", req, err)
	}
	return ans
}

func wantErr(t *testing.T, err error, sentinel error, substrs ...string) {
	t.Helper()
	if err == nil {
		t.Fatalf("want error %v, got nil", sentinel)
	}
	if sentinel != nil && !errors.Is(err, sentinel) {
		t.Errorf("error %q is not %v", err, sentinel)
	}
	for _, s := range substrs {
		if !strings.Contains(err.Error(), s) {
			t.Errorf("error %q does not contain %q", err, s)
		}
	}
}

// filterCase is a request to port 10080 of host a, the status it must get and the outcome
// of the one HTTP filter that acts on it ("": no filter acts).
type filterCase struct {
	name, path string
	headers    map[string]string
	status     int
	outcome    string
}

// checkFilterCases checks each case against tbl and returns their decisions, in order.
func checkFilterCases(t *testing.T, tbl *Table, cases []filterCase) []Detailed {
	t.Helper()
	out := make([]Detailed, len(cases))
	for i, c := range cases {
		d, err := tbl.CheckDetailed(Request{Port: 10080, Host: "a", Path: c.path, Headers: c.headers})
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		outcome := ""
		if len(d.Filters) == 1 {
			outcome = d.Filters[0].Outcome
		}
		if d.Status != c.status || outcome != c.outcome || (c.outcome == "") != (len(d.Filters) == 0) {
			t.Errorf("%s: status %d filters %v", c.name, d.Status, d.Filters)
		}
		out[i] = d
	}
	return out
}

// httpFilter is the HTTP filter name of a connection manager, configured with cfg.
func httpFilter(t testing.TB, name string, cfg proto.Message) *hcmv3.HttpFilter {
	return &hcmv3.HttpFilter{Name: name, ConfigType: &hcmv3.HttpFilter_TypedConfig{TypedConfig: mustAny(t, cfg)}}
}

// routerFilter is the router, the last HTTP filter of a connection manager.
func routerFilter(t testing.TB) *hcmv3.HttpFilter {
	return httpFilter(t, "envoy.filters.http.router", &routerv3.Router{})
}

// headerPredicate is a matcher predicate on request header name being v (either case when
// ignoreCase), as EG writes it for RBAC and geoip rules.
func headerPredicate(t testing.TB, name, v string, ignoreCase bool) *cncfmatcherv3.Matcher_MatcherList_Predicate {
	return &cncfmatcherv3.Matcher_MatcherList_Predicate{
		MatchType: &cncfmatcherv3.Matcher_MatcherList_Predicate_SinglePredicate_{
			SinglePredicate: &cncfmatcherv3.Matcher_MatcherList_Predicate_SinglePredicate{
				Input: &cncfv3.TypedExtensionConfig{Name: "http_header",
					TypedConfig: mustAny(t, &matcherv3.HttpRequestHeaderMatchInput{HeaderName: name})},
				Matcher: &cncfmatcherv3.Matcher_MatcherList_Predicate_SinglePredicate_ValueMatch{
					ValueMatch: &cncfmatcherv3.StringMatcher{MatchPattern: &cncfmatcherv3.StringMatcher_Exact{Exact: v},
						IgnoreCase: ignoreCase}},
			}}}
}

// rbacAction is an RBAC matcher's action named name: allow or deny.
func rbacAction(t testing.TB, name string, a rbacconfigv3.RBAC_Action) *cncfmatcherv3.Matcher_OnMatch {
	return &cncfmatcherv3.Matcher_OnMatch{
		OnMatch: &cncfmatcherv3.Matcher_OnMatch_Action{Action: &cncfv3.TypedExtensionConfig{
			Name: name, TypedConfig: mustAny(t, &rbacconfigv3.Action{Name: name, Action: a}),
		}}}
}
