package xds

import (
	"testing"
	"time"

	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	routev3 "github.com/envoyproxy/go-control-plane/envoy/config/route/v3"
	matcherv3 "github.com/envoyproxy/go-control-plane/envoy/type/matcher/v3"
	typev3 "github.com/envoyproxy/go-control-plane/envoy/type/v3"
	"google.golang.org/protobuf/proto"

	"github.com/egharness/egharness/translator/ir"
)

func sp(s string) *string { return &s }

func TestRedirectAction(t *testing.T) {
	prefix := &ir.StringMatch{Prefix: sp("/docs/")}
	cases := []struct {
		name string
		r    *ir.HTTPRoute
		want *routev3.RedirectAction
	}{
		{"ports 80 and 443 are left out", &ir.HTTPRoute{Redirect: &ir.Redirect{Scheme: sp("https"), Port: ptrU32(443)}},
			&routev3.RedirectAction{SchemeRewriteSpecifier: &routev3.RedirectAction_SchemeRedirect{SchemeRedirect: "https"}}},
		{"another port is kept, 302 is FOUND",
			&ir.HTTPRoute{Redirect: &ir.Redirect{Hostname: sp("a.example.com"), Port: ptrU32(8443), StatusCode: ptrI32(302)}},
			&routev3.RedirectAction{HostRedirect: "a.example.com", PortRedirect: 8443,
				ResponseCode: routev3.RedirectAction_FOUND}},
		{"301 is Envoy's default",
			&ir.HTTPRoute{Redirect: &ir.Redirect{Path: &ir.PathModifier{FullReplace: sp("/home")}, StatusCode: ptrI32(301)}},
			&routev3.RedirectAction{PathRewriteSpecifier: &routev3.RedirectAction_PathRedirect{PathRedirect: "/home"}}},
		{"a prefix replacement keeps its trailing slash",
			&ir.HTTPRoute{PathMatch: prefix, Redirect: &ir.Redirect{Path: &ir.PathModifier{PrefixMatchReplace: sp("/a/")}}},
			&routev3.RedirectAction{PathRewriteSpecifier: &routev3.RedirectAction_PrefixRewrite{PrefixRewrite: "/a/"}}},
		{"a replacement by / is a regex of the prefix as written",
			&ir.HTTPRoute{PathMatch: prefix,
				Redirect: &ir.Redirect{Path: &ir.PathModifier{PrefixMatchReplace: sp("/")}, StatusCode: ptrI32(308)}},
			&routev3.RedirectAction{PathRewriteSpecifier: &routev3.RedirectAction_RegexRewrite{RegexRewrite: prefixRegexRewrite(
				"/docs/")},
				ResponseCode: routev3.RedirectAction_PERMANENT_REDIRECT}},
	}
	for _, c := range cases {
		if got := redirectAction(c.r); !proto.Equal(got, c.want) {
			t.Errorf("%s: got %v, want %v", c.name, got, c.want)
		}
	}
	if got := prefixRegexRewrite("/r6.x").GetPattern().GetRegex(); got != `^/r6\.x\/*` {
		t.Errorf("regex %q: metacharacters must be quoted", got)
	}
}

func ptrU32(v uint32) *uint32 { return &v }
func ptrI32(v int32) *int32   { return &v }

func TestApplyURLRewrite(t *testing.T) {
	cases := []struct {
		name  string
		rw    *ir.URLRewrite
		match *ir.StringMatch
		want  *routev3.RouteAction
	}{
		{"prefix without its trailing slash", &ir.URLRewrite{Path: &ir.PathModifier{PrefixMatchReplace: sp("/v2/")}},
			&ir.StringMatch{Prefix: sp("/api")},
			&routev3.RouteAction{PrefixRewrite: "/v2"}},
		{"prefix replaced by /", &ir.URLRewrite{Path: &ir.PathModifier{PrefixMatchReplace: sp("/")}},
			&ir.StringMatch{Prefix: sp("/static")},
			&routev3.RouteAction{RegexRewrite: prefixRegexRewrite("/static")}},
		{"full path", &ir.URLRewrite{Path: &ir.PathModifier{FullReplace: sp("/index.html")}}, &ir.StringMatch{Exact: sp("/")},
			&routev3.RouteAction{
				RegexRewrite: &matcherv3.RegexMatchAndSubstitute{Pattern: &matcherv3.RegexMatcher{Regex: "^/.*$"},
					Substitution: "/index.html"}}},
		{"hostname", &ir.URLRewrite{Hostname: sp("internal")}, nil,
			&routev3.RouteAction{HostRewriteSpecifier: &routev3.RouteAction_HostRewriteLiteral{HostRewriteLiteral: "internal"},
				AppendXForwardedHost: true}},
	}
	for _, c := range cases {
		got := &routev3.RouteAction{}
		applyURLRewrite(got, c.rw, c.match)
		if !proto.Equal(got, c.want) {
			t.Errorf("%s: got %v, want %v", c.name, got, c.want)
		}
	}
}

func TestMirrorPercent(t *testing.T) {
	f := func(v float32) *float32 { return &v }
	cases := []struct {
		percent *float32
		want    *typev3.FractionalPercent
	}{
		{nil, &typev3.FractionalPercent{Numerator: 100}},
		{f(25), &typev3.FractionalPercent{Numerator: 250000, Denominator: typev3.FractionalPercent_MILLION}},
		{f(100 * float32(1) / float32(3)),
			&typev3.FractionalPercent{Numerator: 333333, Denominator: typev3.FractionalPercent_MILLION}},
		{f(0), nil},
	}
	for _, c := range cases {
		got := mirrorPercent(&ir.Mirror{Percent: c.percent})
		if !proto.Equal(got, c.want) {
			t.Errorf("percent %v: got %v, want %v", c.percent, got, c.want)
		}
	}
	// no policy for a zero share, but the mirror's cluster is still made
	r := &ir.HTTPRoute{Mirrors: []*ir.Mirror{{Percent: f(0),
		Destination: &ir.Destination{Name: "m", Settings: []*ir.Backend{{Name: "m/backend/-1", Weight: 1}}}}}}
	if ps := mirrorPolicies(r.Mirrors); len(ps) != 0 {
		t.Errorf("policies %v", ps)
	}
	if cs := routeClusters(r); len(cs) != 1 || cs[0].cluster.GetName() != "m" || cs[0].cluster.GetMetadata() != nil {
		t.Errorf("mirror clusters %v", cs)
	}
}

func TestTimeoutsAndRetry(t *testing.T) {
	d := func(s string) *time.Duration { v, _ := time.ParseDuration(s); return &v }
	for _, c := range []struct {
		timeout, idle string
	}{{"10s", "1h"}, {"2h", "2h"}, {"0s", "0s"}} {
		out := &routev3.Route{Action: &routev3.Route_Route{Route: &routev3.RouteAction{}}}
		applyRouteFilters(out, &ir.HTTPRoute{Timeout: d(c.timeout)})
		a := out.GetRoute()
		if a.GetTimeout().AsDuration() != *d(c.timeout) || a.GetIdleTimeout().AsDuration() != *d(c.idle) {
			t.Errorf("timeout %s: got %v idle %v, want idle %s", c.timeout, a.GetTimeout(), a.GetIdleTimeout(), c.idle)
		}
	}

	rp := retryPolicy(&ir.Retry{})
	if rp.GetRetryOn() != retryDefaultOn || rp.GetNumRetries().GetValue() != 2 || len(rp.GetRetriableStatusCodes()) != 1 ||
		rp.GetRetriableStatusCodes()[0] != 503 || rp.GetHostSelectionRetryMaxAttempts() != 5 ||
		rp.GetRetryHostPredicate()[0].GetName() != "envoy.retry_host_predicates.previous_hosts" ||
		rp.GetPerTryTimeout() != nil {
		t.Errorf("defaults: %v", rp)
	}
	rp = retryPolicy(
		&ir.Retry{NumRetries: ptrU32(3), Codes: []uint32{500, 502}, PerTryTimeout: d("2s"), BackOff: d("100ms")})
	if rp.GetNumRetries().GetValue() != 3 || len(rp.GetRetriableStatusCodes()) != 2 ||
		rp.GetPerTryTimeout().AsDuration() != 2*time.Second ||
		rp.GetRetryBackOff().GetBaseInterval().AsDuration() != 100*time.Millisecond {
		t.Errorf("overrides: %v", rp)
	}

	// header changes apply to any action, the rest only to a forwarding route
	out := &routev3.Route{
		Action: &routev3.Route_DirectResponse{DirectResponse: &routev3.DirectResponseAction{Status: 500}}}
	applyRouteFilters(out,
		&ir.HTTPRoute{AddRequestHeaders: []ir.AddHeader{{Name: "x-a", Value: "1", Append: true}, {Name: "x-b", Value: "2"}},
			Timeout: d("1s")})
	want := []*corev3.HeaderValueOption{
		{Header: &corev3.HeaderValue{Key: "x-a", Value: "1"}, AppendAction: corev3.HeaderValueOption_APPEND_IF_EXISTS_OR_ADD},
		{Header: &corev3.HeaderValue{Key: "x-b", Value: "2"},
			AppendAction: corev3.HeaderValueOption_OVERWRITE_IF_EXISTS_OR_ADD},
	}
	if len(out.GetRequestHeadersToAdd()) != 2 || !proto.Equal(out.GetRequestHeadersToAdd()[0], want[0]) ||
		!proto.Equal(out.GetRequestHeadersToAdd()[1], want[1]) {
		t.Errorf("headers %v", out.GetRequestHeadersToAdd())
	}
}

func TestDirectResponseBodyFormat(t *testing.T) {
	got := directResponseAction(&ir.DirectResponse{Status: 503, Body: "down"})
	if got.GetBody() != nil || string(got.GetBodyFormat().GetTextFormatSource().GetInlineBytes()) != "down" ||
		got.GetStatus() != 503 {
		t.Errorf("got %v", got)
	}
	if got := directResponseAction(&ir.DirectResponse{Status: 500}); got.GetBodyFormat() != nil {
		t.Errorf("no body: got %v", got)
	}
}

func TestWeightedEntriesWithBackendFilters(t *testing.T) {
	d := &ir.Destination{Name: "c", Settings: []*ir.Backend{
		{Name: "c/backend/0", Weight: 3,
			Filters: &ir.BackendFilters{HostRewrite: sp("b0.internal"), RemoveRequestHeaders: []string{"x-drop"}}},
		{Name: "c/backend/1", Weight: 1},
	}}
	a := buildAction(d, false)
	wc := a.GetWeightedClusters().GetClusters()
	if len(wc) != 2 || wc[0].GetName() != "c/backend/0" || wc[0].GetHostRewriteLiteral() != "b0.internal" ||
		len(wc[0].GetRequestHeadersToRemove()) != 1 || wc[1].GetName() != "c/backend/1" ||
		a.GetClusterNotFoundResponseCode() != routev3.RouteAction_INTERNAL_SERVER_ERROR {
		t.Errorf("weighted clusters %v (no invalid-backend-cluster entry while all backends are valid)", a)
	}
}
