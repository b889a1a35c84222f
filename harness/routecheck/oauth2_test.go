package routecheck

import (
	"errors"
	"strings"
	"testing"

	routev3 "github.com/envoyproxy/go-control-plane/envoy/config/route/v3"
	oauth2v3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/http/oauth2/v3"
	hcmv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/network/http_connection_manager/v3"
	matcherv3 "github.com/envoyproxy/go-control-plane/envoy/type/matcher/v3"
	"google.golang.org/protobuf/proto"
)

// The oauth2 filter as real Envoy runs it: without a session the request is sent to the
// authorization endpoint; pass-through matchers, session cookies, the callback and the
// sign-out path are told apart; routes without the per-route config are left alone.
func TestOAuth2Filter(t *testing.T) {
	exact := func(s string) *matcherv3.PathMatcher {
		return &matcherv3.PathMatcher{
			Rule: &matcherv3.PathMatcher_Path{
				Path: &matcherv3.StringMatcher{MatchPattern: &matcherv3.StringMatcher_Exact{Exact: s}}}}
	}
	cfg := &oauth2v3.OAuth2PerRoute{Config: &oauth2v3.OAuth2Config{
		AuthorizationEndpoint: "https://idp.example.com/auth",
		RedirectPathMatcher:   exact("/oauth2/callback"),
		SignoutPath:           exact("/logout"),
		PassThroughMatcher: []*routev3.HeaderMatcher{
			{Name: "Authorization", HeaderMatchSpecifier: &routev3.HeaderMatcher_StringMatch{
				StringMatch: &matcherv3.StringMatcher{MatchPattern: &matcherv3.StringMatcher_Prefix{Prefix: "Bearer "}}}}},
		DenyRedirectMatcher: []*routev3.HeaderMatcher{
			{Name: "x-requested-with", HeaderMatchSpecifier: &routev3.HeaderMatcher_StringMatch{
				StringMatch: &matcherv3.StringMatcher{MatchPattern: &matcherv3.StringMatcher_Exact{Exact: "XMLHttpRequest"}}}}},
		Credentials: &oauth2v3.OAuth2Credentials{
			CookieNames: &oauth2v3.OAuth2Credentials_CookieNames{BearerToken: "AccessToken-1",
				OauthHmac: "OauthHMAC-1"}},
	}}
	name := "envoy.filters.http.oauth2"
	h := rdsHCM("rc")
	h.HttpFilters = []*hcmv3.HttpFilter{
		{Name: name, ConfigType: &hcmv3.HttpFilter_TypedConfig{TypedConfig: mustAny(t, &oauth2v3.OAuth2{})}},
		routerFilter(t),
	}
	tbl := hcmTable(t, h, routeConfig("rc", vhost("vh", []string{"*"},
		prefixRoute("open", "/open", "c"),
		withFilters(t, prefixRoute("sso", "/", "c"), map[string]proto.Message{name: cfg}))))
	cases := []filterCase{
		{"no session: redirect", "/app", nil, 302, "redirect"},
		{"bearer token passes", "/app", map[string]string{"authorization": "Bearer x"}, 200, "pass through"},
		{"session cookies", "/app", map[string]string{"cookie": "AccessToken-1=a; OauthHMAC-1=b"}, 200, "session"},
		{"callback without a code", "/oauth2/callback", nil, 401, "callback"},
		{"sign out", "/logout", nil, 302, "sign out"},
		{"a request that cannot follow a redirect", "/app", map[string]string{"x-requested-with": "XMLHttpRequest"}, 401,
			"denied"},
		{"a route without oauth2", "/open", nil, 200, ""},
	}
	for i, d := range checkFilterCases(t, tbl, cases) {
		c := cases[i]
		if c.outcome == "redirect" &&
			(d.AnsweredBy != "oauth2" || !strings.HasPrefix(d.Location, "https://idp.example.com/auth?")) {
			t.Errorf("%s: answered by %q, location %q", c.name, d.AnsweredBy, d.Location)
		}
	} // The checker cannot model the callback's code exchange: it says so.
	if _, err := tbl.CheckDetailed(Request{Port: 10080, Host: "a", Path: "/oauth2/callback?code=c&state=s"}); !errors.Is(
		err, ErrUnsupported) {
		t.Errorf("a callback with a code: %v, want ErrUnsupported", err)
	}
	// After a login the request is taken as signed in.
	d, err := tbl.CheckDetailed(Request{Port: 10080, Host: "a", Path: "/app", OAuth2Login: true})
	if err != nil || d.Status != 200 || len(d.Filters) != 1 ||
		!strings.HasPrefix(d.Filters[0].Outcome, "session after a login") {
		t.Errorf("after a login: %v %d %v", err, d.Status, d.Filters)
	}
}
