package routecheck

import (
	"testing"

	xdscorev3 "github.com/cncf/xds/go/xds/core/v3"
	routev3 "github.com/envoyproxy/go-control-plane/envoy/config/route/v3"
	commonrlv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/common/ratelimit/v3"
	localrlv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/http/local_ratelimit/v3"
	ratelimitv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/http/ratelimit/v3"
	hcmv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/network/http_connection_manager/v3"
	matcherv3 "github.com/envoyproxy/go-control-plane/envoy/type/matcher/v3"
	typev3 "github.com/envoyproxy/go-control-plane/envoy/type/v3"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/durationpb"
	"google.golang.org/protobuf/types/known/wrapperspb"
)

func genericKey(k string) *routev3.RateLimit_Action {
	return &routev3.RateLimit_Action{
		ActionSpecifier: &routev3.RateLimit_Action_GenericKey_{
			GenericKey: &routev3.RateLimit_Action_GenericKey{DescriptorKey: k,
				DescriptorValue: k}}}
}

// rateLimitTable: a connection manager with local_ratelimit, the listener's ratelimit
// filter (domain lis) and a policy's (domain pol); route /per carries per-route configs,
// route /action only route action rate limits (as EG v1.8 wrote shared rules), route
// /none nothing.
func rateLimitTable(t *testing.T) *Table {
	t.Helper()
	rl := func(domain string) *hcmv3.HttpFilter {
		name := "envoy.filters.http.ratelimit"
		if domain != "lis" {
			name += "/" + domain
		}
		return &hcmv3.HttpFilter{Name: name,
			ConfigType: &hcmv3.HttpFilter_TypedConfig{TypedConfig: mustAny(t, &ratelimitv3.RateLimit{Domain: domain})}}
	}
	h := rdsHCM("rc")
	h.HttpFilters = []*hcmv3.HttpFilter{
		{Name: "envoy.filters.http.local_ratelimit",
			ConfigType: &hcmv3.HttpFilter_TypedConfig{TypedConfig: mustAny(t, &localrlv3.LocalRateLimit{StatPrefix: "l"})}},
		rl("lis"), rl("pol"),
		routerFilter(t),
	}
	method := &routev3.RateLimit_Action{
		ActionSpecifier: &routev3.RateLimit_Action_HeaderValueMatch_{
			HeaderValueMatch: &routev3.RateLimit_Action_HeaderValueMatch{
				DescriptorKey: "m", DescriptorValue: "m", ExpectMatch: wrapperspb.Bool(true),
				Headers: []*routev3.HeaderMatcher{{Name: ":method",
					HeaderMatchSpecifier: &routev3.HeaderMatcher_StringMatch{StringMatch: exactStr("POST")}}},
			}}}
	notInternal := &routev3.RateLimit_Action{
		ActionSpecifier: &routev3.RateLimit_Action_RemoteAddressMatch_{
			RemoteAddressMatch: &routev3.RateLimit_Action_RemoteAddressMatch{
				DescriptorKey: "masked_remote_address", DescriptorValue: "invert:10.0.0.0/8",
				AddressMatcher: &matcherv3.AddressMatcher{Ranges: []*xdscorev3.CidrRange{{AddressPrefix: "10.0.0.0",
					PrefixLen: wrapperspb.UInt32(8)}}, InvertMatch: true},
			}}}
	user := &routev3.RateLimit_Action{
		ActionSpecifier: &routev3.RateLimit_Action_RequestHeaders_{
			RequestHeaders: &routev3.RateLimit_Action_RequestHeaders{HeaderName: "x-user",
				DescriptorKey: "u"}}}
	page := &routev3.RateLimit_Action{
		ActionSpecifier: &routev3.RateLimit_Action_QueryParameters_{
			QueryParameters: &routev3.RateLimit_Action_QueryParameters{QueryParameterName: "page",
				DescriptorKey: "p"}}}
	per := withFilters(t, prefixRoute("per", "/per", "c"), map[string]proto.Message{
		"envoy.filters.http.ratelimit": &ratelimitv3.RateLimitPerRoute{Domain: "lis", RateLimits: []*routev3.RateLimit{
			{Actions: []*routev3.RateLimit_Action{genericKey("per"), method}},
			{Actions: []*routev3.RateLimit_Action{genericKey("per"), notInternal}},
		}},
		"envoy.filters.http.ratelimit/pol": &ratelimitv3.RateLimitPerRoute{Domain: "pol", RateLimits: []*routev3.RateLimit{
			{Actions: []*routev3.RateLimit_Action{genericKey("pol/rule/0"), user, page}},
		}},
		"envoy.filters.http.local_ratelimit": &localrlv3.LocalRateLimit{
			StatPrefix:  "l",
			TokenBucket: &typev3.TokenBucket{MaxTokens: 50, FillInterval: durationpb.New(1e9)},
			RateLimits:  []*routev3.RateLimit{{Actions: []*routev3.RateLimit_Action{user}}},
			Descriptors: []*commonrlv3.LocalRateLimitDescriptor{{Entries: []*commonrlv3.RateLimitDescriptor_Entry{{Key: "u"}}}},
		},
	})
	action := prefixRoute("action", "/action", "c")
	action.GetRoute().RateLimits = []*routev3.RateLimit{{Actions: []*routev3.RateLimit_Action{genericKey("pol/rule/0"),
		user}}}
	tbl := hcmTable(t, h, routeConfig("rc",
		vhost("vh", []string{"*"}, per, action, prefixRoute("none", "/", "c"))))
	return tbl
}

func TestRateLimitFiltersReportSelectedRequests(t *testing.T) {
	tbl := rateLimitTable(t)
	effects := func(req Request) map[string]FilterEffect {
		t.Helper()
		req.Port = 10080
		d, err := tbl.CheckDetailed(req)
		if err != nil {
			t.Fatal(err)
		}
		if d.Status != 200 {
			t.Fatalf("%+v: status %d", req, d.Status)
		}
		m := map[string]FilterEffect{}
		for _, f := range d.Filters {
			m[f.Name] = f
		}
		return m
	}
	for _, tc := range []struct {
		name string
		req  Request
		want map[string]string // filter name → outcome; filters not listed must not act
	}{
		{"a GET from inside 10/8 without x-user takes only the route's local bucket",
			Request{Path: "/per", ClientIP: "10.1.2.3"},
			map[string]string{"envoy.filters.http.local_ratelimit": "route 50/1s"}},
		{"a POST from outside 10/8 with x-user and page selects every rule",
			Request{Path: "/per?page=2", Method: "POST", ClientIP: "192.0.2.1", Headers: map[string]string{"x-user": "ann"}},
			map[string]string{
				"envoy.filters.http.local_ratelimit": "route 50/1s; u=ann",
				"envoy.filters.http.ratelimit":       "per=per,m=m; per=per,masked_remote_address=invert:10.0.0.0/8",
				"envoy.filters.http.ratelimit/pol":   "pol/rule/0=pol/rule/0,u=ann,p=2",
			}},
		{"without a client address the address rule is not evaluated",
			Request{Path: "/per", Method: "POST"},
			map[string]string{"envoy.filters.http.local_ratelimit": "route 50/1s",
				"envoy.filters.http.ratelimit": "per=per,m=m"}},
		{"route action rate limits are read by every ratelimit filter, each in its domain",
			Request{Path: "/action", Headers: map[string]string{"x-user": "ann"}},
			map[string]string{"envoy.filters.http.ratelimit": "pol/rule/0=pol/rule/0,u=ann",
				"envoy.filters.http.ratelimit/pol": "pol/rule/0=pol/rule/0,u=ann"}},
		{"a route without rate limits", Request{Path: "/x", Headers: map[string]string{"x-user": "ann"}},
			map[string]string{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := effects(tc.req)
			for name, f := range got {
				w, ok := tc.want[name]
				if !ok {
					t.Errorf("%s acts (%s %s), expected not to", name, f.Mode, f.Outcome)
					continue
				}
				if f.Outcome != w {
					t.Errorf("%s: outcome %q, want %q", name, f.Outcome, w)
				}
			}
			for name := range tc.want {
				if _, ok := got[name]; !ok {
					t.Errorf("%s does not act", name)
				}
			}
		})
	}
}
