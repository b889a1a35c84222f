package xds

import (
	"testing"

	egv1a1 "github.com/envoyproxy/gateway/api/v1alpha1"
	listenerv3 "github.com/envoyproxy/go-control-plane/envoy/config/listener/v3"
	routev3 "github.com/envoyproxy/go-control-plane/envoy/config/route/v3"
	jwtauthnv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/http/jwt_authn/v3"
	luav3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/http/lua/v3"
	hcmv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/network/http_connection_manager/v3"
	typev3 "github.com/envoyproxy/go-control-plane/envoy/type/v3"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	gwapiv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/egharness/egharness/translator/ir"
	"github.com/egharness/egharness/translator/policy"
	"github.com/egharness/egharness/translator/result"
)

// policyListener is one HTTP listener whose routes carry the given policies.
func policyListener(routes ...*ir.HTTPRoute) *ir.XDS {
	for i, r := range routes {
		r.Hostname = "*"
		r.Source = ir.Source{Kind: "HTTPRoute", Namespace: "default", Name: "r"}
		r.Destination = &ir.Destination{Name: r.Name + "-dest", Settings: []*ir.Backend{{
			Name: r.Name + "-dest/backend/0", Weight: 1, Endpoints: []ir.Endpoint{{Host: "1.2.3.4", Port: uint32(8080 + i)}},
		}}}
	}
	return &ir.XDS{HTTP: []*ir.HTTPListener{{
		Name: "default/gw/http", Gateway: "default/gw", SectionName: "http", Address: "0.0.0.0",
		Port: 10080, GatewayPort: 80, Hostnames: []string{"*"}, Routes: routes,
	}}}
}

func security(spec egv1a1.SecurityPolicySpec) ir.RoutePolicies {
	a := &ir.Applied[egv1a1.SecurityPolicySpec]{
		Policy: ir.PolicyRef{Kind: "SecurityPolicy", Namespace: "default", Name: "sp"}, Spec: &spec,
	}
	// the policy stage resolves the features; routes built by hand do it here
	p := ir.RoutePolicies{Security: a}
	policy.ResolveSecurityFeatures(&p)
	return p
}

func translateFor(t *testing.T, f Features, x *ir.XDS) (result.XDS, *hcmv3.HttpConnectionManager) {
	t.Helper()
	out, err := Translator{Features: f}.Translate(x)
	if err != nil {
		t.Fatal(err)
	}
	var lis *listenerv3.Listener
	for _, l := range out.Listeners {
		lis = l
	}
	hcm := &hcmv3.HttpConnectionManager{}
	if err := lis.DefaultFilterChain.Filters[0].GetTypedConfig().UnmarshalTo(hcm); err != nil {
		t.Fatal(err)
	}
	return out, hcm
}

func routesByName(out result.XDS) map[string]*routev3.Route {
	m := map[string]*routev3.Route{}
	for _, rc := range out.Routes {
		for _, vh := range rc.VirtualHosts {
			for _, r := range vh.Routes {
				m[r.Name] = r
			}
		}
	}
	return m
}

func filterNames(hcm *hcmv3.HttpConnectionManager) []string {
	var names []string
	for _, f := range hcm.HttpFilters {
		names = append(names, f.Name)
	}
	return names
}

// remoteProvider is the provider of EG's jwt-multi-route-single-provider test case, whose
// expected output fixes the names below.
func remoteProvider(claims ...egv1a1.ClaimToHeader) egv1a1.JWTProvider {
	d := gwapiv1.Duration("300s")
	return egv1a1.JWTProvider{
		Name: "example", Issuer: "https://www.example.com", Audiences: []string{"foo.com"},
		RemoteJWKS:     &egv1a1.RemoteJWKS{URI: "https://localhost/jwt/public-key/jwks.json", CacheDuration: &d},
		ClaimToHeaders: claims,
	}
}

func TestJWTStableNamesMatchEG(t *testing.T) {
	first := &ir.HTTPRoute{Name: "first-route",
		Policies: security(egv1a1.SecurityPolicySpec{JWT: &egv1a1.JWT{Providers: []egv1a1.JWTProvider{
			remoteProvider(egv1a1.ClaimToHeader{Header: "first-route-key", Claim: "claim.neteased.key"}),
		}}})}
	second := &ir.HTTPRoute{Name: "second-route",
		Policies: security(egv1a1.SecurityPolicySpec{JWT: &egv1a1.JWT{Providers: []egv1a1.JWTProvider{remoteProvider()}}})}
	third := &ir.HTTPRoute{Name: "third-route",
		Policies: security(egv1a1.SecurityPolicySpec{JWT: &egv1a1.JWT{Providers: []egv1a1.JWTProvider{remoteProvider()}}})}
	out, hcm := translateFor(t, Features{JWTStableNames: true}, policyListener(first, second, third))

	// EG v1.9.1 testdata/out/xds-ir/jwt-multi-route-single-provider: the requirement each
	// route names, and the provider behind it.
	want := map[string][2]string{
		"first-route":  {"example_c3b3e98f32dd654c", "example_ec0cbab21272dbab"},
		"second-route": {"example_670bf892477997dd", "example_ced70d98fe975d58"},
		"third-route":  {"example_670bf892477997dd", "example_ced70d98fe975d58"}, // shared (dedup)
	}
	jwt := &jwtauthnv3.JwtAuthentication{}
	for _, f := range hcm.HttpFilters {
		if f.Name == jwtAuthnFilter {
			if err := f.GetTypedConfig().UnmarshalTo(jwt); err != nil {
				t.Fatal(err)
			}
		}
	}
	if len(jwt.Providers) != 2 || len(jwt.RequirementMap) != 2 {
		t.Errorf("identical providers must be shared: %d providers, %d requirements", len(jwt.Providers),
			len(jwt.RequirementMap))
	}
	routes := routesByName(out)
	for name, w := range want {
		per := &jwtauthnv3.PerRouteConfig{}
		if err := routes[name].TypedPerFilterConfig[jwtAuthnFilter].UnmarshalTo(per); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if per.GetRequirementName() != w[0] {
			t.Errorf("%s: requirement %q, want %q", name, per.GetRequirementName(), w[0])
		}
		if got := jwt.RequirementMap[w[0]].GetProviderName(); got != w[1] {
			t.Errorf("%s: provider %q, want %q", name, got, w[1])
		}
	}
	var jwks int
	for _, c := range out.Clusters {
		if c.Name == "localhost_443" {
			jwks++
			if c.TransportSocket == nil {
				t.Errorf("https JWKS cluster without TLS")
			}
		}
	}
	if jwks != 1 {
		t.Errorf("JWKS cluster localhost_443 appears %d times, want once", jwks)
	}
}

func TestJWTPerRouteNamesV18(t *testing.T) {
	opt := true
	a := &ir.HTTPRoute{Name: "a",
		Policies: security(
			egv1a1.SecurityPolicySpec{JWT: &egv1a1.JWT{Optional: &opt, Providers: []egv1a1.JWTProvider{remoteProvider()}}})}
	b := &ir.HTTPRoute{Name: "b",
		Policies: security(egv1a1.SecurityPolicySpec{JWT: &egv1a1.JWT{Providers: []egv1a1.JWTProvider{remoteProvider()}}})}
	out, hcm := translateFor(t, Features{}, policyListener(a, b))
	jwt := &jwtauthnv3.JwtAuthentication{}
	if err := hcm.HttpFilters[0].GetTypedConfig().UnmarshalTo(jwt); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"a/example", "b/example"} {
		if jwt.Providers[k] == nil {
			t.Errorf("v1.8 provider %q missing: %v", k, jwt.Providers)
		}
	}
	if any := jwt.RequirementMap["a"].GetRequiresAny(); len(any.GetRequirements()) != 2 ||
		any.Requirements[1].GetAllowMissing() == nil {
		t.Errorf("optional JWT: requirement a must be any of provider or missing, got %v", jwt.RequirementMap["a"])
	}
	per := &jwtauthnv3.PerRouteConfig{}
	if err := routesByName(out)["b"].TypedPerFilterConfig[jwtAuthnFilter].UnmarshalTo(per); err != nil ||
		per.GetRequirementName() != "b" {
		t.Errorf("v1.8 route b names requirement %q (%v), want b", per.GetRequirementName(), err)
	}
}

func TestBoundedJWTNameKeepsHash(t *testing.T) {
	long := make([]byte, 300)
	for i := range long {
		long[i] = 'p'
	}
	got := boundedJWTName(string(long), "0123456789abcdef")
	if len(got) != maxJWTNameLength || got[len(got)-17:] != "_0123456789abcdef" {
		t.Errorf("bounded name %d long, ends %q", len(got), got[len(got)-17:])
	}
}

func TestHTTPFilterOrder(t *testing.T) {
	names := []string{
		routerFilter, "envoy.filters.http.lua/envoyextensionpolicy/ns/p/lua/1", jwtAuthnFilter, grpcWebFilter,
		"envoy.filters.http.lua/envoyextensionpolicy/ns/p/lua/0", csrfFilterName, corsFilterName, "envoy.filters.http.rbac",
		"envoy.filters.http.ext_proc/envoyextensionpolicy/ns/p/extproc/0", "envoy.filters.http.basic_auth",
	}
	var fs []*hcmv3.HttpFilter
	for _, n := range names {
		fs = append(fs, &hcmv3.HttpFilter{Name: n})
	}
	sortHTTPFilters(fs)
	want := []string{
		corsFilterName, csrfFilterName, "envoy.filters.http.basic_auth", jwtAuthnFilter,
		"envoy.filters.http.lua/envoyextensionpolicy/ns/p/lua/0", "envoy.filters.http.lua/envoyextensionpolicy/ns/p/lua/1",
		"envoy.filters.http.ext_proc/envoyextensionpolicy/ns/p/extproc/0", "envoy.filters.http.rbac", grpcWebFilter,
		routerFilter,
	}
	for i := range want {
		if fs[i].Name != want[i] {
			t.Fatalf("order %v, want %v", filterNames(&hcmv3.HttpConnectionManager{HttpFilters: fs}), want)
		}
	}
}

func TestCSRFShadowFraction(t *testing.T) {
	den := int32(1000)
	cases := []struct {
		name          string
		shadow        *gwapiv1.Fraction
		enforced      *typev3.FractionalPercent
		shadowEnabled bool
	}{
		{"unset: all enforced", nil, percent(100), false},
		{"100%: only shadow", &gwapiv1.Fraction{Numerator: 100}, percent(0), true},
		{"25 of 1000", &gwapiv1.Fraction{Numerator: 25, Denominator: &den},
			&typev3.FractionalPercent{Numerator: 9750, Denominator: typev3.FractionalPercent_TEN_THOUSAND}, true},
	}
	for _, c := range cases {
		p := csrfPolicy(
			&ir.CSRF{ShadowFraction: c.shadow,
				AdditionalOrigins: []string{"https://*.trusted.com", "http://a.example.com:8080"}})
		if got := p.FilterEnabled.DefaultValue; got.Numerator != c.enforced.Numerator ||
			got.Denominator != c.enforced.Denominator {
			t.Errorf("%s: enforced %v, want %v", c.name, got, c.enforced)
		}
		if (p.ShadowEnabled != nil) != c.shadowEnabled {
			t.Errorf("%s: shadow enabled %v", c.name, p.ShadowEnabled)
		}
		if p.AdditionalOrigins[0].GetSafeRegex().GetRegex() != `.*\.trusted\.com` ||
			p.AdditionalOrigins[1].GetExact() != "a.example.com:8080" {
			t.Errorf("%s: origins lose their scheme, wildcards become regexes: %v", c.name, p.AdditionalOrigins)
		}
	}
}

func lua(code string, ctx string) egv1a1.Lua {
	l := egv1a1.Lua{Type: egv1a1.LuaValueTypeInline, Inline: &code}
	if ctx != "" {
		l.FilterContext = &apiextensionsv1.JSON{Raw: []byte(ctx)}
	}
	return l
}

func extension(name string, ls ...egv1a1.Lua) ir.RoutePolicies {
	a := &ir.Applied[egv1a1.EnvoyExtensionPolicySpec]{
		Policy: ir.PolicyRef{Kind: "EnvoyExtensionPolicy", Namespace: "default", Name: name},
		Spec:   &egv1a1.EnvoyExtensionPolicySpec{Lua: ls},
	}
	// the policy stage resolves the scripts; routes built by hand do it here
	return ir.RoutePolicies{Extension: a, ExtensionSettings: policy.ResolveExtension(a, nil)}
}

func TestLuaPolicyFiltersV19(t *testing.T) {
	shared := extension("shared", lua("-- shared", `{"tenant":"a"}`))
	a := &ir.HTTPRoute{Name: "a", Policies: shared}
	b := &ir.HTTPRoute{Name: "b", Policies: extension("shared", lua("-- shared", `{"tenant":"b"}`))}
	c := &ir.HTTPRoute{Name: "c"}
	out, hcm := translateFor(t, Features{LuaPolicyFilters: true}, policyListener(a, b, c))
	name := "envoy.filters.http.lua/envoyextensionpolicy/default/shared/lua/0"
	if got := filterNames(hcm); len(got) != 2 || got[0] != name || !hcm.HttpFilters[0].Disabled {
		t.Fatalf("one disabled listener filter per policy script expected, got %v", got)
	}
	routes := routesByName(out)
	for r, tenant := range map[string]string{"a": "a", "b": "b"} {
		per := &luav3.LuaPerRoute{}
		if err := routes[r].TypedPerFilterConfig[name].UnmarshalTo(per); err != nil {
			t.Fatalf("%s: %v", r, err)
		}
		if got := per.GetFilterContext().GetFields()["tenant"].GetStringValue(); got != tenant {
			t.Errorf("route %s: filterContext tenant %q, want %q", r, got, tenant)
		}
	}
	if len(routes["c"].TypedPerFilterConfig) != 0 {
		t.Errorf("route c has no policy: Lua must stay disabled there")
	}
}

func TestLuaSlotFiltersV18(t *testing.T) {
	a := &ir.HTTPRoute{Name: "a", Policies: extension("p1", lua("-- one", ""), lua("-- two", ""))}
	b := &ir.HTTPRoute{Name: "b", Policies: extension("p2", lua("-- three", ""))}
	out, hcm := translateFor(t, Features{}, policyListener(a, b))
	if got := filterNames(hcm); len(got) != 3 || got[0] != "envoy.filters.http.lua/0" ||
		got[1] != "envoy.filters.http.lua/1" {
		t.Fatalf("v1.8: one slot per script index, got %v", got)
	}
	per := &luav3.LuaPerRoute{}
	if err := routesByName(out)["b"].TypedPerFilterConfig["envoy.filters.http.lua/0"].UnmarshalTo(per); err != nil {
		t.Fatal(err)
	}
	if per.GetSourceCode().GetInlineString() != "-- three" {
		t.Errorf("v1.8: route b's script goes in slot 0 as source code, got %v", per)
	}
}
