package admission

import (
	"strings"
	"testing"

	gwapiv1 "sigs.k8s.io/gateway-api/apis/v1"
)

func details(ps []problem) string {
	var out []string
	for _, p := range ps {
		out = append(out, p.path+": "+p.value+": "+p.detail)
	}
	return strings.Join(out, "\n")
}

func TestTimeoutProblems(t *testing.T) {
	d := func(s string) *gwapiv1.Duration { v := gwapiv1.Duration(s); return &v }
	cases := []struct {
		t    gwapiv1.HTTPRouteTimeouts
		want string
	}{
		{gwapiv1.HTTPRouteTimeouts{Request: d("10s"), BackendRequest: d("2s")}, ""},
		{gwapiv1.HTTPRouteTimeouts{Request: d("10s"), BackendRequest: d("10s")}, ""},
		{gwapiv1.HTTPRouteTimeouts{Request: d("1s"), BackendRequest: d("1s1ms")},
			"spec.rules[0].timeouts: object: backendRequest timeout cannot be longer than request timeout"},
		// request 0s is no timeout at all: any backendRequest fits
		{gwapiv1.HTTPRouteTimeouts{Request: d("0s"), BackendRequest: d("1h")}, ""},
		{gwapiv1.HTTPRouteTimeouts{BackendRequest: d("1h")}, ""},
		{gwapiv1.HTTPRouteTimeouts{Request: d("1d")},
			"spec.rules[0].timeouts.request: 1d: spec.rules[0].timeouts.request in body should match '^([0-9]{1,5}(h|m|s|ms)){1,4}$'"},
	}
	for i, c := range cases {
		if got := details(timeoutProblems("spec.rules[0].timeouts", &c.t)); got != c.want {
			t.Errorf("case %d: got %q, want %q", i, got, c.want)
		}
	}
}

func TestRuleFilterProblems(t *testing.T) {
	prefix := "/x"
	rewrite := gwapiv1.HTTPRouteFilter{Type: gwapiv1.HTTPRouteFilterURLRewrite, URLRewrite: &gwapiv1.HTTPURLRewriteFilter{
		Path: &gwapiv1.HTTPPathModifier{Type: gwapiv1.PrefixMatchHTTPPathModifier, ReplacePrefixMatch: &prefix}}}
	redirect := gwapiv1.HTTPRouteFilter{Type: gwapiv1.HTTPRouteFilterRequestRedirect, RequestRedirect: &gwapiv1.HTTPRequestRedirectFilter{}}
	exact := gwapiv1.PathMatchExact
	two := []gwapiv1.HTTPRouteMatch{{}, {}}
	backend := []gwapiv1.HTTPBackendRef{{}}
	cases := []struct {
		name string
		rule gwapiv1.HTTPRouteRule
		want string
	}{
		{"prefix rewrite, no matches (the CRD default is one PathPrefix)", gwapiv1.HTTPRouteRule{Filters: []gwapiv1.HTTPRouteFilter{rewrite}}, ""},
		{"prefix rewrite, two matches", gwapiv1.HTTPRouteRule{Matches: two, Filters: []gwapiv1.HTTPRouteFilter{rewrite}},
			"spec.rules[0]: object: When using URLRewrite filter with path.replacePrefixMatch, exactly one PathPrefix match must be specified"},
		{"prefix rewrite, an Exact match", gwapiv1.HTTPRouteRule{Matches: []gwapiv1.HTTPRouteMatch{{Path: &gwapiv1.HTTPPathMatch{Type: &exact}}},
			Filters: []gwapiv1.HTTPRouteFilter{rewrite}},
			"spec.rules[0]: object: When using URLRewrite filter with path.replacePrefixMatch, exactly one PathPrefix match must be specified"},
		{"redirect with backends", gwapiv1.HTTPRouteRule{Filters: []gwapiv1.HTTPRouteFilter{redirect}, BackendRefs: backend},
			"spec.rules[0]: object: RequestRedirect filter must not be used together with backendRefs"},
		{"backendRef prefix rewrite, two matches", gwapiv1.HTTPRouteRule{Matches: two,
			BackendRefs: []gwapiv1.HTTPBackendRef{{Filters: []gwapiv1.HTTPRouteFilter{rewrite}}}},
			"spec.rules[0]: object: Within backendRefs, When using URLRewrite filter with path.replacePrefixMatch, exactly one PathPrefix match must be specified"},
	}
	for _, c := range cases {
		if got := details(ruleFilterProblems("spec.rules[0]", c.rule)); got != c.want {
			t.Errorf("%s: got %q, want %q", c.name, got, c.want)
		}
	}
}

func TestFilterListProblems(t *testing.T) {
	hm := gwapiv1.HTTPRouteFilter{Type: gwapiv1.HTTPRouteFilterRequestHeaderModifier, RequestHeaderModifier: &gwapiv1.HTTPHeaderFilter{}}
	rw := gwapiv1.HTTPRouteFilter{Type: gwapiv1.HTTPRouteFilterURLRewrite, URLRewrite: &gwapiv1.HTTPURLRewriteFilter{}}
	rd := gwapiv1.HTTPRouteFilter{Type: gwapiv1.HTTPRouteFilterRequestRedirect, RequestRedirect: &gwapiv1.HTTPRequestRedirectFilter{}}
	den := int32(2)
	pct := int32(50)
	mirror := gwapiv1.HTTPRouteFilter{Type: gwapiv1.HTTPRouteFilterRequestMirror, RequestMirror: &gwapiv1.HTTPRequestMirrorFilter{
		Percent: &pct, Fraction: &gwapiv1.Fraction{Numerator: 3, Denominator: &den}}}
	missing := gwapiv1.HTTPRouteFilter{Type: gwapiv1.HTTPRouteFilterRequestHeaderModifier, ResponseHeaderModifier: &gwapiv1.HTTPHeaderFilter{}}
	got := details(filterListProblems("f", []gwapiv1.HTTPRouteFilter{hm, hm, rw, rd, mirror, missing}))
	for _, want := range []string{
		"f: object: May specify either httpRouteFilterRequestRedirect or httpRouteFilterRequestRewrite, but not both",
		"f: object: RequestHeaderModifier filter cannot be repeated",
		"f[4].requestMirror: object: Only one of percent or fraction may be specified in HTTPRequestMirrorFilter",
		"f[4].requestMirror.fraction: object: numerator must be less than or equal to denominator",
		"f[5]: object: filter.requestHeaderModifier must be specified for RequestHeaderModifier filter.type",
		"f[5]: object: filter.responseHeaderModifier must be nil if the filter.type is not ResponseHeaderModifier",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("missing %q in\n%s", want, got)
		}
	}
	if got := details(filterListProblems("f", []gwapiv1.HTTPRouteFilter{hm, rw})); got != "" {
		t.Errorf("valid list: %q", got)
	}
}
