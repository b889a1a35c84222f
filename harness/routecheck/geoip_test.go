package routecheck

import (
	"testing"

	cncfmatcherv3 "github.com/cncf/xds/go/xds/type/matcher/v3"
	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	listenerv3 "github.com/envoyproxy/go-control-plane/envoy/config/listener/v3"
	rbacconfigv3 "github.com/envoyproxy/go-control-plane/envoy/config/rbac/v3"
	routev3 "github.com/envoyproxy/go-control-plane/envoy/config/route/v3"
	geoipv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/http/geoip/v3"
	rbacv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/http/rbac/v3"
	hcmv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/network/http_connection_manager/v3"
	geocommonv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/geoip_providers/common/v3"
	maxmindv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/geoip_providers/maxmind/v3"
	customheaderv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/http/original_ip_detection/custom_header/v3"
	xffv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/http/original_ip_detection/xff/v3"
	"google.golang.org/protobuf/proto"
)

// EG's shape (scenarios authorization-geoip and -prerequisites): a geoip filter before RBAC
// writes internal headers, the route's RBAC matches them; the stand-in geolocation
// (harness/geoip) places the client. Every answer here is one real Envoy 1.39.3 gave.
func TestGeoIPBeforeRBAC(t *testing.T) {
	headerIs := func(name, v string) *cncfmatcherv3.Matcher_MatcherList_Predicate {
		return headerPredicate(t, name, v, true)
	}
	// Allow US, or (second route) an anonymous proxy; deny the rest.
	allow := func(p *cncfmatcherv3.Matcher_MatcherList_Predicate) *rbacv3.RBACPerRoute {
		return &rbacv3.RBACPerRoute{Rbac: &rbacv3.RBAC{Matcher: &cncfmatcherv3.Matcher{
			MatcherType: &cncfmatcherv3.Matcher_MatcherList_{
				MatcherList: &cncfmatcherv3.Matcher_MatcherList{Matchers: []*cncfmatcherv3.Matcher_MatcherList_FieldMatcher{
					{Predicate: p, OnMatch: rbacAction(t, "a", rbacconfigv3.RBAC_ALLOW)},
				}}},
			OnNoMatch: rbacAction(t, "a", rbacconfigv3.RBAC_DENY),
		}}}
	}
	us := allow(headerIs("x-geo-country", "US"))
	proxies := allow(headerIs("x-geo-proxy", "true"))
	routes := func(name string, direct500 bool) *routev3.RouteConfiguration {
		r := prefixRoute("us", "/", "app")
		p := prefixRoute("proxies", "/proxy", "app")
		if direct500 {
			r.Action = &routev3.Route_DirectResponse{DirectResponse: &routev3.DirectResponseAction{Status: 500}}
		}
		return routeConfig(name, vhost("vh", []string{"*"},
			withFilters(t, p, map[string]proto.Message{"envoy.filters.http.rbac": proxies}),
			withFilters(t, r, map[string]proto.Message{"envoy.filters.http.rbac": us})))
	}
	geo := func(g *geoipv3.Geoip, anonKey bool) *hcmv3.HttpFilter {
		keys := &geocommonv3.CommonGeoipProviderConfig_GeolocationFieldKeys{Country: "x-geo-country",
			AnonProxy: "x-geo-proxy"}
		if anonKey {
			keys.Anon = "x-geo-anon"
		}
		g.Provider = &corev3.TypedExtensionConfig{Name: "envoy.geoip_providers.maxmind",
			TypedConfig: mustAny(t, &maxmindv3.MaxMindConfig{
				CityDbPath: "/geo/City.mmdb", AnonDbPath: "/geo/Anon.mmdb",
				CommonProviderConfig: &geocommonv3.CommonGeoipProviderConfig{GeoFieldKeys: keys},
			})}
		return &hcmv3.HttpFilter{Name: "envoy.filters.http.geoip",
			ConfigType: &hcmv3.HttpFilter_TypedConfig{TypedConfig: mustAny(t, g)}}
	}
	rbac := &hcmv3.HttpFilter{Name: "envoy.filters.http.rbac",
		ConfigType: &hcmv3.HttpFilter_TypedConfig{TypedConfig: mustAny(t, &rbacv3.RBAC{})}}
	router := routerFilter(t)
	hcm := func(rc string, filters ...*hcmv3.HttpFilter) *hcmv3.HttpConnectionManager {
		h := rdsHCM(rc)
		h.HttpFilters = append(filters, rbac, router)
		return h
	}
	// 10080: directSourceIP (the connection's source); 10081: the same with isAnonymous in
	// use; 10082: X-Forwarded-For, numTrustedHops 2; 10083: a custom header; 10084: the
	// policy failed (no geoip filter, the route a direct 500 behind its RBAC).
	direct := hcm("rc", geo(&geoipv3.Geoip{}, false))
	direct.UseRemoteAddress = boolv(true)
	anon := hcm("rc", geo(&geoipv3.Geoip{}, true))
	anon.UseRemoteAddress = boolv(true)
	xff := hcm("rc", geo(&geoipv3.Geoip{XffConfig: &geoipv3.Geoip_XffConfig{XffNumTrustedHops: 1}}, false))
	xff.UseRemoteAddress = boolv(false)
	xff.OriginalIpDetectionExtensions = []*corev3.TypedExtensionConfig{
		{Name: "envoy.extensions.http.original_ip_detection.xff",
			TypedConfig: mustAny(t, &xffv3.XffConfig{XffNumTrustedHops: 1, SkipXffAppend: boolv(false)})}}
	custom := hcm("rc",
		geo(&geoipv3.Geoip{CustomHeaderConfig: &geoipv3.Geoip_CustomHeaderConfig{HeaderName: "x-real-client-ip"}}, false))
	custom.UseRemoteAddress = boolv(false)
	custom.OriginalIpDetectionExtensions = []*corev3.TypedExtensionConfig{
		{Name: "envoy.extensions.http.original_ip_detection.custom_header",
			TypedConfig: mustAny(t, &customheaderv3.CustomHeaderConfig{HeaderName: "x-real-client-ip"})}}
	failed := hcm("rc500")
	failed.UseRemoteAddress = boolv(true)
	var ls []*listenerv3.Listener
	for i, h := range []*hcmv3.HttpConnectionManager{direct, anon, xff, custom, failed} {
		ls = append(ls,
			listener(string(rune('a'+i)), 10080+uint32(i),
				&listenerv3.FilterChain{Filters: []*listenerv3.Filter{hcmFilter(t, h)}}))
	}
	tbl, err := New(ls, []*routev3.RouteConfiguration{routes("rc", false), routes("rc500", true)})
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name     string
		req      Request
		status   int
		answered string
	}{
		{"Seattle is allowed", Request{Port: 10080, ClientIP: "192.0.2.10"}, 200, ""},
		{"Berlin is denied", Request{Port: 10080, ClientIP: "198.51.100.7"}, 403, "rbac"},
		{"the loopback client is in Tokyo", Request{Port: 10080}, 403, "rbac"},
		{"a forged country from a client no database knows stays",
			Request{Port: 10080, ClientIP: "203.0.113.200", Headers: map[string]string{"x-geo-country": "us"}}, 200, ""},
		{"a known client's forged country is overwritten",
			Request{Port: 10080, ClientIP: "198.51.100.7", Headers: map[string]string{"x-geo-country": "US"}}, 403, "rbac"},
		{"anon_proxy alone: the Anonymous IP database is not asked",
			Request{Port: 10080, Path: "/proxy", ClientIP: "192.0.2.200"}, 403, "rbac"},
		{"so a forged proxy flag stays",
			Request{Port: 10080, Path: "/proxy", ClientIP: "192.0.2.10", Headers: map[string]string{"x-geo-proxy": "true"}}, 200,
			""},
		{"with is_anon in use the proxy flag is written", Request{Port: 10081, Path: "/proxy", ClientIP: "192.0.2.200"}, 200,
			""},
		{"and a forged one from a client without a record stays",
			Request{Port: 10081, Path: "/proxy", ClientIP: "192.0.2.10", Headers: map[string]string{"x-geo-proxy": "true"}}, 200,
			""},
		{"xff: the appended hop is skipped, the client's entry looked up",
			Request{Port: 10082, Headers: map[string]string{"x-forwarded-for": "198.51.100.7"}}, 403, "rbac"},
		{"xff: the last client entry decides",
			Request{Port: 10082, Headers: map[string]string{"x-forwarded-for": "198.51.100.7, 192.0.2.1"}}, 200, ""},
		{"xff: none, the loopback client", Request{Port: 10082}, 403, "rbac"},
		{"custom header", Request{Port: 10083, Headers: map[string]string{"x-real-client-ip": "192.0.2.10"}}, 200, ""},
		{"custom header Berlin", Request{Port: 10083, Headers: map[string]string{"x-real-client-ip": "198.51.100.7"}}, 403,
			"rbac"},
		{"custom header missing: the connection's source", Request{Port: 10083, ClientIP: "192.0.2.10"}, 200, ""},
		// The failed listener: RBAC's default Deny answers before the route's direct 500
		// (real Envoy 1.39.3 answers 403, scenario authorization-geoip-prerequisites).
		{"failed: denied before the 500", Request{Port: 10084, ClientIP: "192.0.2.10"}, 403, "rbac"},
		{"failed: a forged header reaches the 500", Request{Port: 10084, Headers: map[string]string{"x-geo-country": "US"}},
			500, ""},
	}
	for _, c := range cases {
		ans := check(t, tbl, c.req)
		if ans.Status != c.status || ans.AnsweredBy != c.answered {
			t.Errorf("%s: status %d answered by %q, want %d by %q", c.name, ans.Status, ans.AnsweredBy, c.status, c.answered)
		}
	}
	// The filter's effect names the address looked up and what it wrote.
	d, err := tbl.CheckDetailed(
		Request{Port: 10082, Host: "example.com", Headers: map[string]string{"x-forwarded-for": "203.0.113.9"}})
	if err != nil {
		t.Fatal(err)
	}
	if len(d.Filters) == 0 || d.Filters[0].Kind != "geoip" || d.Filters[0].Mode != "203.0.113.9" ||
		d.Filters[0].Outcome != "located country=CA" {
		t.Errorf("geoip effect: %+v", d.Filters)
	}
}
