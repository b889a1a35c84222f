package routecheck

import (
	"crypto/sha1"
	"encoding/base64"
	"strings"
	"testing"

	expr "cel.dev/expr"
	cncfv3 "github.com/cncf/xds/go/xds/core/v3"
	cncfmatcherv3 "github.com/cncf/xds/go/xds/type/matcher/v3"
	cncftypev3 "github.com/cncf/xds/go/xds/type/v3"
	rbacconfigv3 "github.com/envoyproxy/go-control-plane/envoy/config/rbac/v3"
	apikeyauthv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/http/api_key_auth/v3"
	basicauthv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/http/basic_auth/v3"
	rbacv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/http/rbac/v3"
	"github.com/google/cel-go/cel"

	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	routev3 "github.com/envoyproxy/go-control-plane/envoy/config/route/v3"
	corsv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/http/cors/v3"
	injectorv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/http/credential_injector/v3"
	csrfv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/http/csrf/v3"
	jwtauthnv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/http/jwt_authn/v3"
	luav3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/http/lua/v3"
	hcmv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/network/http_connection_manager/v3"
	genericv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/http/injected_credentials/generic/v3"
	tlsv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/transport_sockets/tls/v3"
	matcherv3 "github.com/envoyproxy/go-control-plane/envoy/type/matcher/v3"
	typev3 "github.com/envoyproxy/go-control-plane/envoy/type/v3"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/anypb"
	"google.golang.org/protobuf/types/known/emptypb"
)

const luaName = "envoy.filters.http.lua/envoyextensionpolicy/default/p/lua/0"

// filterTable is one listener whose connection manager has CORS, CSRF, jwt_authn, a
// disabled Lua filter and the router, and routes configured per test.
func filterTable(t *testing.T, routes ...*routev3.Route) *Table {
	t.Helper()
	jwt := &jwtauthnv3.JwtAuthentication{
		Providers: map[string]*jwtauthnv3.JwtProvider{
			"example_1": {Issuer: "https://issuer.example.com",
				ClaimToHeaders:  []*jwtauthnv3.JwtClaimToHeader{{HeaderName: "x-org", ClaimName: "org.name"}},
				ClearRouteCache: true},
		},
		RequirementMap: map[string]*jwtauthnv3.JwtRequirement{
			"example_req": {RequiresType: &jwtauthnv3.JwtRequirement_ProviderName{ProviderName: "example_1"}},
			"example-or-missing_req": {RequiresType: &jwtauthnv3.JwtRequirement_RequiresAny{
				RequiresAny: &jwtauthnv3.JwtRequirementOrList{Requirements: []*jwtauthnv3.JwtRequirement{
					{RequiresType: &jwtauthnv3.JwtRequirement_ProviderName{ProviderName: "example_1"}},
					{RequiresType: &jwtauthnv3.JwtRequirement_AllowMissing{AllowMissing: &emptypb.Empty{}}},
				}}}},
		},
	}
	h := rdsHCM("rc")
	h.HttpFilters = []*hcmv3.HttpFilter{
		{Name: "envoy.filters.http.cors", ConfigType: &hcmv3.HttpFilter_TypedConfig{TypedConfig: mustAny(t, &corsv3.Cors{})}},
		{Name: "envoy.filters.http.csrf",
			ConfigType: &hcmv3.HttpFilter_TypedConfig{TypedConfig: mustAny(t,
				&csrfv3.CsrfPolicy{FilterEnabled: &corev3.RuntimeFractionalPercent{DefaultValue: &typev3.FractionalPercent{}}})}},
		{Name: "envoy.filters.http.jwt_authn", ConfigType: &hcmv3.HttpFilter_TypedConfig{TypedConfig: mustAny(t, jwt)}},
		{Name: luaName, Disabled: true, ConfigType: &hcmv3.HttpFilter_TypedConfig{TypedConfig: mustAny(t, &luav3.Lua{})}},
		routerFilter(t),
	}
	return hcmTable(t, h, routeConfig("rc", vhost("vh", []string{"*"}, routes...)))
}

func withFilters(t *testing.T, r *routev3.Route, cfg map[string]proto.Message) *routev3.Route {
	r.TypedPerFilterConfig = map[string]*anypb.Any{}
	for k, m := range cfg {
		r.TypedPerFilterConfig[k] = mustAny(t, m)
	}
	return r
}

func token(payload string) string {
	enc := base64.RawURLEncoding.EncodeToString
	return enc([]byte(`{"alg":"none"}`)) + "." + enc([]byte(payload)) + ".sig"
}

func kinds(d Detailed) []string {
	var out []string
	for _, f := range d.Filters {
		out = append(out, f.Kind+":"+f.Mode+":"+f.Outcome)
	}
	return out
}

func TestJWTFilter(t *testing.T) {
	tbl := filterTable(t,
		// The claim-matching rule comes first; the fallback needs the same requirement.
		withFilters(t, routeWithMatch("acme", &routev3.RouteMatch{
			PathSpecifier: &routev3.RouteMatch_Prefix{Prefix: "/"},
			Headers: []*routev3.HeaderMatcher{{Name: "x-org",
				HeaderMatchSpecifier: &routev3.HeaderMatcher_StringMatch{StringMatch: exactStr("acme")}}},
		},
			"acme"),
			map[string]proto.Message{
				"envoy.filters.http.jwt_authn": &jwtauthnv3.PerRouteConfig{
					RequirementSpecifier: &jwtauthnv3.PerRouteConfig_RequirementName{RequirementName: "example_req"}}}),
		withFilters(t, prefixRoute("optional", "/opt", "opt"),
			map[string]proto.Message{
				"envoy.filters.http.jwt_authn": &jwtauthnv3.PerRouteConfig{
					RequirementSpecifier: &jwtauthnv3.PerRouteConfig_RequirementName{RequirementName: "example-or-missing_req"}}}),
		withFilters(t, prefixRoute("fallback", "/", "fallback"),
			map[string]proto.Message{
				"envoy.filters.http.jwt_authn": &jwtauthnv3.PerRouteConfig{
					RequirementSpecifier: &jwtauthnv3.PerRouteConfig_RequirementName{RequirementName: "example_req"}}}),
	)
	cases := []struct {
		name, path, auth string
		status           int
		cluster          string
		answeredBy       string
		effect           string
	}{
		{"no token: 401", "/", "", 401, "", "jwt_authn", "jwt_authn:required:missing"},
		{"wrong issuer: 401", "/", "Bearer " + token(`{"iss":"https://evil"}`), 401, "", "jwt_authn",
			"jwt_authn:required:invalid"},
		{"not a JWT: 401", "/", "Bearer abc", 401, "", "jwt_authn", "jwt_authn:required:invalid"},
		{"valid, other org: fallback", "/", "Bearer " + token(`{"iss":"https://issuer.example.com","org":{"name":"other"}}`),
			200, "fallback", "", "jwt_authn:required:valid"},
		{"valid, claim reroutes (SP-07)", "/",
			"Bearer " + token(`{"iss":"https://issuer.example.com","org":{"name":"acme"}}`), 200, "acme", "",
			"jwt_authn:required:valid"},
		{"optional: missing passes", "/opt", "", 200, "opt", "", "jwt_authn:optional:missing"},
		{"optional: invalid fails", "/opt", "Bearer abc", 401, "", "jwt_authn", "jwt_authn:optional:invalid"},
	}
	for _, c := range cases {
		req := Request{Port: 10080, Host: "a.example.com", Path: c.path, Headers: map[string]string{}}
		if c.auth != "" {
			req.Headers["Authorization"] = c.auth
		}
		d, err := tbl.CheckDetailed(req)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if d.Status != c.status || d.Cluster != c.cluster || d.AnsweredBy != c.answeredBy {
			t.Errorf("%s: status %d cluster %q answered by %q", c.name, d.Status, d.Cluster, d.AnsweredBy)
		}
		if k := kinds(d); len(k) != 1 || k[0] != c.effect {
			t.Errorf("%s: filters %v, want [%s]", c.name, k, c.effect)
		}
		if c.status == 401 && d.Forwarded != nil {
			t.Errorf("%s: a 401 forwards nothing", c.name)
		}
		if c.cluster == "acme" && d.Forwarded["x-org"] != "acme" {
			t.Errorf("%s: claim header not forwarded: %v", c.name, d.Forwarded)
		}
	}
	// A client cannot forge the claim header: without a token the request is refused.
	d, _ := tbl.CheckDetailed(Request{Port: 10080, Host: "a", Headers: map[string]string{"x-org": "acme"}})
	if d.Status != 401 {
		t.Errorf("forged x-org without token: %d", d.Status)
	}
}

func TestCSRFAndCORSAndLua(t *testing.T) {
	enforced := &csrfv3.CsrfPolicy{
		FilterEnabled:     &corev3.RuntimeFractionalPercent{DefaultValue: &typev3.FractionalPercent{Numerator: 100}},
		AdditionalOrigins: []*matcherv3.StringMatcher{exactStr("trusted.example.com")}}
	shadowed := &csrfv3.CsrfPolicy{
		FilterEnabled: &corev3.RuntimeFractionalPercent{DefaultValue: &typev3.FractionalPercent{}},
		ShadowEnabled: &corev3.RuntimeFractionalPercent{DefaultValue: &typev3.FractionalPercent{Numerator: 100}}}
	cors := &corsv3.CorsPolicy{AllowOriginStringMatch: []*matcherv3.StringMatcher{exactStr("https://app.example.com")},
		ForwardNotMatchingPreflights: boolv(false)}
	tbl := filterTable(t,
		withFilters(t, prefixRoute("enforced", "/enforced", "c"),
			map[string]proto.Message{"envoy.filters.http.csrf": enforced, luaName: &routev3.FilterConfig{Config: &anypb.Any{}}}),
		withFilters(t, prefixRoute("shadowed", "/shadowed", "c"),
			map[string]proto.Message{"envoy.filters.http.csrf": shadowed}),
		withFilters(t, prefixRoute("cors", "/cors", "c"), map[string]proto.Message{"envoy.filters.http.cors": cors}),
		prefixRoute("plain", "/", "c"),
	)
	cases := []struct {
		name, method, path string
		headers            map[string]string
		status             int
		answeredBy         string
		effects            []string
	}{
		{"GET is a safe method", "GET", "/enforced", nil, 200, "", []string{"csrf:enforced:safe method", "lua::"}},
		{"POST without origin: 403", "POST", "/enforced", nil, 403, "csrf", []string{"csrf:enforced:invalid origin"}},
		{"POST from own host", "POST", "/enforced", map[string]string{"origin": "https://a.example.com"}, 200, "",
			[]string{"csrf:enforced:valid origin", "lua::"}},
		{"POST from an additional origin", "POST", "/enforced", map[string]string{"origin": "http://trusted.example.com"},
			200, "", []string{"csrf:enforced:valid origin", "lua::"}},
		{"shadow: invalid passes", "POST", "/shadowed", map[string]string{"origin": "https://evil.com"}, 200, "",
			[]string{"csrf:shadowed:invalid origin"}},
		{"preflight allowed", "OPTIONS", "/cors",
			map[string]string{"origin": "https://app.example.com", "access-control-request-method": "PUT"}, 200, "cors",
			[]string{"cors::preflight"}},
		{"preflight not allowed, not forwarded", "OPTIONS", "/cors",
			map[string]string{"origin": "https://evil.com", "access-control-request-method": "PUT"}, 200, "cors",
			[]string{"cors::preflight, origin not allowed"}},
		{"simple CORS request", "GET", "/cors", map[string]string{"origin": "https://app.example.com"}, 200, "",
			[]string{"cors::origin allowed"}},
		{"no policy: no filter acts, Lua stays disabled", "POST", "/", nil, 200, "", nil},
	}
	for _, c := range cases {
		d, err := tbl.CheckDetailed(
			Request{Port: 10080, Host: "a.example.com", Method: c.method, Path: c.path, Headers: c.headers})
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if d.Status != c.status || d.AnsweredBy != c.answeredBy {
			t.Errorf("%s: status %d answered by %q", c.name, d.Status, d.AnsweredBy)
		}
		got := kinds(d)
		if len(got) != len(c.effects) {
			t.Errorf("%s: filters %v, want %v", c.name, got, c.effects)
			continue
		}
		for i := range got {
			if got[i] != c.effects[i] {
				t.Errorf("%s: filters %v, want %v", c.name, got, c.effects)
			}
		}
	}
}

func TestRBACFilter(t *testing.T) {
	celPred := func(src string) *cncfmatcherv3.Matcher_MatcherList_Predicate {
		ast, iss := cel.NewEnv()
		_ = iss
		a, issues := ast.Parse(src)
		if issues != nil && issues.Err() != nil {
			t.Fatal(issues.Err())
		}
		pe, err := cel.AstToParsedExpr(a)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := proto.Marshal(pe)
		parsed := &expr.ParsedExpr{}
		if err := proto.Unmarshal(b, parsed); err != nil {
			t.Fatal(err)
		}
		return &cncfmatcherv3.Matcher_MatcherList_Predicate{
			MatchType: &cncfmatcherv3.Matcher_MatcherList_Predicate_SinglePredicate_{
				SinglePredicate: &cncfmatcherv3.Matcher_MatcherList_Predicate_SinglePredicate{
					Input: &cncfv3.TypedExtensionConfig{Name: "cel",
						TypedConfig: mustAny(t, &cncfmatcherv3.HttpAttributesCelMatchInput{})},
					Matcher: &cncfmatcherv3.Matcher_MatcherList_Predicate_SinglePredicate_CustomMatch{
						CustomMatch: &cncfv3.TypedExtensionConfig{
							Name:        "cel_matcher",
							TypedConfig: mustAny(t, &cncfmatcherv3.CelMatcher{ExprMatch: &cncftypev3.CelExpression{CelExprParsed: parsed}}),
						}},
				}}}
	}
	per := &rbacv3.RBACPerRoute{Rbac: &rbacv3.RBAC{Matcher: &cncfmatcherv3.Matcher{
		MatcherType: &cncfmatcherv3.Matcher_MatcherList_{
			MatcherList: &cncfmatcherv3.Matcher_MatcherList{Matchers: []*cncfmatcherv3.Matcher_MatcherList_FieldMatcher{
				{Predicate: celPred("request.path.startsWith('/admin')"),
					OnMatch: rbacAction(t, "allow-admin", rbacconfigv3.RBAC_ALLOW)},
				{Predicate: &cncfmatcherv3.Matcher_MatcherList_Predicate{
					MatchType: &cncfmatcherv3.Matcher_MatcherList_Predicate_AndMatcher{
						AndMatcher: &cncfmatcherv3.Matcher_MatcherList_Predicate_PredicateList{
							Predicate: []*cncfmatcherv3.Matcher_MatcherList_Predicate{
								celPred("request.method == 'POST'"), headerPredicate(t, "x-team", "team-a", false),
							}},
					}}, OnMatch: rbacAction(t, "allow-team-post", rbacconfigv3.RBAC_ALLOW)},
				{Predicate: celPred("response.code == 200"), OnMatch: rbacAction(t, "never", rbacconfigv3.RBAC_ALLOW)},
			}}},
		OnNoMatch: rbacAction(t, "default", rbacconfigv3.RBAC_DENY),
	}}}
	h := rdsHCM("rc")
	h.HttpFilters = []*hcmv3.HttpFilter{
		{Name: "envoy.filters.http.rbac", ConfigType: &hcmv3.HttpFilter_TypedConfig{TypedConfig: mustAny(t, &rbacv3.RBAC{})}},
		routerFilter(t),
	}
	tbl := hcmTable(t, h, routeConfig("rc", vhost("vh", []string{"*"},
		withFilters(t, prefixRoute("r", "/", "c"), map[string]proto.Message{"envoy.filters.http.rbac": per}))))
	cases := []struct {
		name, method, path string
		headers            map[string]string
		status             int
		rule               string
	}{
		{"CEL on the path", "GET", "/admin/x", nil, 200, "allow-admin"},
		{"CEL and header", "POST", "/x", map[string]string{"x-team": "team-a"}, 200, "allow-team-post"},
		{"header missing", "POST", "/x", nil, 403, "never"},
		{"a response attribute stops the matcher, which denies (real Envoy 1.39.3)", "GET", "/x", nil, 403, "never"},
	}
	for _, c := range cases {
		d, err := tbl.CheckDetailed(Request{Port: 10080, Host: "a", Method: c.method, Path: c.path, Headers: c.headers})
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if d.Status != c.status || len(d.Filters) != 1 || d.Filters[0].Mode != c.rule {
			t.Errorf("%s: status %d filters %v", c.name, d.Status, d.Filters)
		}
	}
}

func TestBasicAndAPIKeyAuth(t *testing.T) {
	sum := sha1.Sum([]byte("s3cret"))
	users := "alice:{SHA}" + base64.StdEncoding.EncodeToString(sum[:]) + "\n"
	basicName := "envoy.filters.http.basic_auth/securitypolicy/default/sp"
	h := rdsHCM("rc")
	h.HttpFilters = []*hcmv3.HttpFilter{
		{Name: "envoy.filters.http.api_key_auth", Disabled: true,
			ConfigType: &hcmv3.HttpFilter_TypedConfig{TypedConfig: mustAny(t, &apikeyauthv3.ApiKeyAuth{})}},
		{Name: basicName, Disabled: true,
			ConfigType: &hcmv3.HttpFilter_TypedConfig{TypedConfig: mustAny(t, &basicauthv3.BasicAuth{})}},
		routerFilter(t),
	}
	tbl := hcmTable(t, h, routeConfig("rc", vhost("vh", []string{"*"},
		withFilters(t, prefixRoute("basic", "/basic", "c"),
			map[string]proto.Message{basicName: &basicauthv3.BasicAuthPerRoute{
				Users: &corev3.DataSource{Specifier: &corev3.DataSource_InlineBytes{InlineBytes: []byte(users)}}}}),
		withFilters(t, prefixRoute("key", "/key", "c"),
			map[string]proto.Message{"envoy.filters.http.api_key_auth": &apikeyauthv3.ApiKeyAuthPerRoute{
				Credentials: []*apikeyauthv3.Credential{{Client: "c1", Key: "k1"}},
				KeySources:  []*apikeyauthv3.KeySource{{Header: "x-api-key"}}}}),
		prefixRoute("open", "/", "c"))))
	basic := func(up string) map[string]string {
		return map[string]string{"authorization": "Basic " + base64.StdEncoding.EncodeToString([]byte(up))}
	}
	checkFilterCases(t, tbl, []filterCase{
		{"basic: no credentials", "/basic", nil, 401, "missing"},
		{"basic: wrong password", "/basic", basic("alice:nope"), 401, "invalid"},
		{"basic: right password", "/basic", basic("alice:s3cret"), 200, "valid"},
		{"key: none", "/key", nil, 401, "missing"},
		{"key: unknown", "/key", map[string]string{"x-api-key": "k2"}, 401, "invalid"},
		{"key: known", "/key", map[string]string{"x-api-key": "k1"}, 200, "valid"},
		{"disabled filters do not act", "/", nil, 200, ""},
	})
}

func TestCredentialInjector(t *testing.T) {
	name := "envoy.filters.http.credential_injector/httproutefilter/default/token"
	secret := "credential_injector/credential/httproutefilter/default/token"
	injector := func(header string, overwrite bool) *anypb.Any {
		return mustAny(t, &injectorv3.CredentialInjector{Overwrite: overwrite, Credential: &corev3.TypedExtensionConfig{
			Name: "envoy.http.injected_credentials.generic", TypedConfig: mustAny(t, &genericv3.Generic{
				Credential: &tlsv3.SdsSecretConfig{Name: secret}, Header: header})}})
	}
	build := func(header string, overwrite bool) *Table {
		h := rdsHCM("rc")
		h.HttpFilters = []*hcmv3.HttpFilter{
			{Name: name, Disabled: true, ConfigType: &hcmv3.HttpFilter_TypedConfig{TypedConfig: injector(header, overwrite)}},
			routerFilter(t),
		}
		tbl := hcmTable(t, h, routeConfig("rc", vhost("vh", []string{"*"},
			withFilters(t, prefixRoute("api", "/api", "c"),
				map[string]proto.Message{name: &routev3.FilterConfig{Config: &anypb.Any{}}}),
			prefixRoute("open", "/", "c"))))
		return tbl
	}
	secrets := []*tlsv3.Secret{{Name: secret, Type: &tlsv3.Secret_GenericSecret{GenericSecret: &tlsv3.GenericSecret{
		Secret: &corev3.DataSource{Specifier: &corev3.DataSource_InlineBytes{InlineBytes: []byte("Bearer t0ken")}}}}}}
	cases := []struct {
		name, header string
		overwrite    bool
		secrets      bool
		path         string
		sent         map[string]string
		wantHeader   string // the forwarded value of the header ("" absent)
		outcome      string
	}{
		{"injected into Authorization", "", false, true, "/api", nil, "Bearer t0ken", "injected"},
		{"the client's header is kept", "", false, true, "/api", map[string]string{"authorization": "mine"}, "mine", "kept"},
		{"overwrite replaces it", "X-Key", true, true, "/api", map[string]string{"x-key": "mine"}, "Bearer t0ken",
			"injected"},
		{"without the secrets the credential is unknown", "", false, false, "/api", nil, "", "unknown credential"},
		{"routes without the filter are not touched", "", false, true, "/", nil, "", ""},
	}
	for _, c := range cases {
		tbl := build(c.header, c.overwrite)
		if c.secrets {
			tbl.UseSecrets(secrets)
		}
		d, err := tbl.CheckDetailed(Request{Port: 10080, Host: "a", Path: c.path, Headers: c.sent})
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		header := strings.ToLower(c.header)
		if header == "" {
			header = "authorization"
		}
		outcome := ""
		if len(d.Filters) == 1 {
			outcome = d.Filters[0].Outcome
		}
		if d.Status != 200 || d.Forwarded[header] != c.wantHeader || outcome != c.outcome {
			t.Errorf("%s: status %d, %s %q, filters %v", c.name, d.Status, header, d.Forwarded[header], d.Filters)
		}
	}
}
