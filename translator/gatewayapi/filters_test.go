package gatewayapi

import (
	"reflect"
	"strings"
	"testing"
	"time"

	gwapiv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/egharness/egharness/internal/testutil"
	"github.com/egharness/egharness/translator/conditions"
	"github.com/egharness/egharness/translator/ir"
	"github.com/egharness/egharness/translator/result"
)

func hdr(name, value string) gwapiv1.HTTPHeader {
	return gwapiv1.HTTPHeader{Name: gwapiv1.HTTPHeaderName(name), Value: value}
}

func TestRequestHeadersAddThenSetFirstSpellingWins(t *testing.T) {
	filters := &ruleFilters{}
	err := filters.requestHeaders(&gwapiv1.HTTPHeaderFilter{
		Set:    []gwapiv1.HTTPHeader{hdr("X-Env", "prod"), hdr("x-add", "from-set")},
		Add:    []gwapiv1.HTTPHeader{hdr("x-add", "a"), hdr("X-Add", "dup")},
		Remove: []string{"X-Drop", "x-drop"},
	})
	if err != nil {
		t.Fatalf("unexpected error %+v", err)
	}
	want := []ir.AddHeader{{Name: "x-add", Value: "a", Append: true}, {Name: "X-Env", Value: "prod"}}
	if !reflect.DeepEqual(filters.addRequest, want) {
		t.Errorf("added %+v, want %+v", filters.addRequest, want)
	}
	if !reflect.DeepEqual(filters.removeRequest, []string{"X-Drop"}) {
		t.Errorf("removed %v, want [X-Drop]", filters.removeRequest)
	}
}

func TestHeaderModifierErrors(t *testing.T) {
	// An invalid entry is reported and the valid ones are kept.
	filters := &ruleFilters{}
	err := filters.requestHeaders(&gwapiv1.HTTPHeaderFilter{Set: []gwapiv1.HTTPHeader{hdr("Host", "x"), hdr("x-ok", "1")}})
	if err == nil || err.typ != errAccepted || err.reason != "UnsupportedValue" ||
		!strings.HasPrefix(err.msg, `Header: "Host". The RequestHeaderModifier filter cannot set the Host header`) ||
		!strings.HasSuffix(err.msg, "To modify the Host header use the URLRewrite or the HTTPRouteFilter filter.") {
		t.Errorf("error %+v", err)
	}
	if len(filters.addRequest) != 1 || filters.addRequest[0].Name != "x-ok" {
		t.Errorf("kept %+v, want x-ok", filters.addRequest)
	}

	// Nothing valid at all: EG's summary error replaces the details.
	filters = &ruleFilters{}
	err = filters.responseHeaders(
		&gwapiv1.HTTPHeaderFilter{Add: []gwapiv1.HTTPHeader{hdr("host", "x")}, Remove: []string{"Host"}})
	if err == nil ||
		err.msg != "ResponseHeaderModifier Filter did not provide valid configuration to add/remove any headers" {
		t.Errorf("error %+v", err)
	}

	// The response filter says "set" even for added headers; a removal says "remove".
	filters = &ruleFilters{}
	err = filters.responseHeaders(
		&gwapiv1.HTTPHeaderFilter{Add: []gwapiv1.HTTPHeader{hdr("host", "x"), hdr("x-a", "1")}, Remove: []string{"a/b"}})
	want := `Header: "host". The ResponseHeaderModifier filter cannot set the Host header or headers with a ` +
		`'/' or ':' character in them.` + "\n" +
		`Header: "a/b". The ResponseHeaderModifier filter cannot remove the Host header or headers with a ` +
		`'/' or ':' character in them.`
	if err == nil || err.msg != want {
		t.Errorf("error %+v, want message %q", err, want)
	}
}

func TestRequestRedirectMapping(t *testing.T) {
	filters := &ruleFilters{}
	scheme, port := "https", gwapiv1.PortNumber(443)
	if err := filters.requestRedirect(&gwapiv1.HTTPRequestRedirectFilter{Scheme: &scheme, Port: &port}); err != nil {
		t.Fatal(err)
	}
	if got := filters.redirect; *got.Scheme != "https" || *got.Port != 443 || *got.StatusCode != 302 {
		t.Errorf("redirect %+v: want https, port 443 and the CRD default 302", got)
	}
	if err := filters.requestRedirect(&gwapiv1.HTTPRequestRedirectFilter{}); err == nil ||
		err.msg != "cannot configure multiple requestRedirect filters for a single HTTPRouteRule" {
		t.Errorf("second redirect: %+v", err)
	}

	ip := gwapiv1.PreciseHostname("10.0.0.1")
	if err := (&ruleFilters{}).requestRedirect(&gwapiv1.HTTPRequestRedirectFilter{Hostname: &ip}); err == nil ||
		err.msg != `hostname: "10.0.0.1" cannot be an ip address` {
		t.Errorf("IP hostname: %+v", err)
	}
	code := 307
	if err := (&ruleFilters{}).requestRedirect(&gwapiv1.HTTPRequestRedirectFilter{StatusCode: &code}); err != nil {
		t.Errorf("307 is one of EG's redirect codes: %+v", err)
	}
	code = 304
	if err := (&ruleFilters{}).requestRedirect(&gwapiv1.HTTPRequestRedirectFilter{StatusCode: &code}); err == nil ||
		err.msg != "status code 304 is invalid, only 302 and 301 are supported" {
		t.Errorf("304: %+v", err)
	}
}

func TestURLRewriteMapping(t *testing.T) {
	filters := &ruleFilters{}
	host := gwapiv1.PreciseHostname("internal.example.com")
	prefix := "/v2"
	rw := &gwapiv1.HTTPURLRewriteFilter{Hostname: &host,
		Path: &gwapiv1.HTTPPathModifier{Type: gwapiv1.PrefixMatchHTTPPathModifier, ReplacePrefixMatch: &prefix}}
	if err := filters.urlRewrite(rw); err != nil {
		t.Fatal(err)
	}
	if *filters.rewrite.Hostname != "internal.example.com" || *filters.rewrite.Path.PrefixMatchReplace != "/v2" {
		t.Errorf("rewrite %+v", filters.rewrite)
	}
	if err := filters.urlRewrite(rw); err == nil ||
		err.msg != "cannot configure multiple urlRewrite filters for a single HTTPRouteRule" {
		t.Errorf("second rewrite: %+v", err)
	}
	bad := &gwapiv1.HTTPURLRewriteFilter{Path: &gwapiv1.HTTPPathModifier{Type: gwapiv1.FullPathHTTPPathModifier}}
	if err := (&ruleFilters{}).urlRewrite(bad); err == nil ||
		err.msg != `ReplaceFullPath must be set when rewrite path type is "ReplaceFullPath"` {
		t.Errorf("full path without value: %+v", err)
	}
}

func TestRuleTimeouts(t *testing.T) {
	d := func(s string) *gwapiv1.Duration { v := gwapiv1.Duration(s); return &v }
	dur := func(s string) *time.Duration { v, _ := time.ParseDuration(s); return &v }
	cases := []struct {
		name    string
		rule    gwapiv1.HTTPRouteRule
		timeout *time.Duration
		retry   *ir.Retry
	}{
		{"none", gwapiv1.HTTPRouteRule{}, nil, nil},
		{"request", gwapiv1.HTTPRouteRule{Timeouts: &gwapiv1.HTTPRouteTimeouts{Request: d("10s")}}, dur("10s"), nil},
		{"backendRequest without retry replaces request",
			gwapiv1.HTTPRouteRule{Timeouts: &gwapiv1.HTTPRouteTimeouts{Request: d("10s"), BackendRequest: d("2s")}}, dur("2s"),
			nil},
		{"backendRequest 0s without retry still replaces request",
			gwapiv1.HTTPRouteRule{Timeouts: &gwapiv1.HTTPRouteTimeouts{Request: d("1m30s"), BackendRequest: d("0s")}}, dur("0s"),
			nil},
		{"with a retry, backendRequest is per try",
			gwapiv1.HTTPRouteRule{Timeouts: &gwapiv1.HTTPRouteTimeouts{Request: d("10s"), BackendRequest: d("2s")},
				Retry: &gwapiv1.HTTPRouteRetry{Codes: []gwapiv1.HTTPRouteRetryStatusCode{500, 503}}},
			dur("10s"), &ir.Retry{PerTryTimeout: dur("2s"), Codes: []uint32{500, 503}}},
		{"per try without backoff or request",
			gwapiv1.HTTPRouteRule{Timeouts: &gwapiv1.HTTPRouteTimeouts{BackendRequest: d("5s")},
				Retry: &gwapiv1.HTTPRouteRetry{}},
			nil, &ir.Retry{PerTryTimeout: dur("5s")}},
		{"attempts and backoff",
			gwapiv1.HTTPRouteRule{Retry: &gwapiv1.HTTPRouteRetry{Attempts: ptr(3), Backoff: d("100ms")}},
			nil, &ir.Retry{NumRetries: ptr(uint32(3)), BackOff: dur("100ms")}},
	}
	for _, c := range cases {
		timeout, retry := ruleTimeouts(c.rule)
		if !reflect.DeepEqual(timeout, c.timeout) || !reflect.DeepEqual(retry, c.retry) {
			t.Errorf("%s: got timeout %v retry %+v, want %v %+v", c.name, timeout, retry, c.timeout, c.retry)
		}
	}
}

func TestBackendFilterSupport(t *testing.T) {
	full := "/x"
	cases := []struct {
		filters []gwapiv1.HTTPRouteFilter
		want    string
	}{
		{[]gwapiv1.HTTPRouteFilter{{Type: gwapiv1.HTTPRouteFilterRequestHeaderModifier},
			{Type: gwapiv1.HTTPRouteFilterURLRewrite, URLRewrite: &gwapiv1.HTTPURLRewriteFilter{}}}, ""},
		{[]gwapiv1.HTTPRouteFilter{{Type: gwapiv1.HTTPRouteFilterRequestMirror}}, msgBackendFilterNotSupported},
		{[]gwapiv1.HTTPRouteFilter{{Type: gwapiv1.HTTPRouteFilterExtensionRef,
			ExtensionRef: &gwapiv1.LocalObjectReference{Group: "example.com", Kind: "Foo"}}}, msgBackendFilterNotSupported},
		// the path check returns at once, before a later unsupported filter is seen
		{[]gwapiv1.HTTPRouteFilter{
			{Type: gwapiv1.HTTPRouteFilterURLRewrite,
				URLRewrite: &gwapiv1.HTTPURLRewriteFilter{Path: &gwapiv1.HTTPPathModifier{Type: gwapiv1.FullPathHTTPPathModifier,
					ReplaceFullPath: &full}}},
			{Type: gwapiv1.HTTPRouteFilterRequestMirror}}, msgBackendPathRewrite},
	}
	for i, c := range cases {
		got := ""
		if e := backendFilterSupport(c.filters); e != nil {
			got = e.msg
			if e.reason != "UnsupportedRefValue" {
				t.Errorf("case %d: reason %q", i, e.reason)
			}
		}
		if got != c.want {
			t.Errorf("case %d: got %q, want %q", i, got, c.want)
		}
	}
}

func TestFilterConditions(t *testing.T) {
	accepted := func(reason string) result.Condition {
		return conditions.New("Accepted", "True", reason, msgRouteAccepted)
	}
	bad := &ruleCtx{filters: &ruleFilters{dropped: true,
		errs: []filterErr{{typ: errAccepted, reason: "UnsupportedValue", msg: "invalid filter X: nope"}}}}
	good := &ruleCtx{}

	// some rules dropped: PartiallyInvalid, Accepted stays
	ps := &result.ParentStatus{Conditions: []result.Condition{accepted("Accepted")}}
	filterConditions(ps, []*ruleCtx{good, bad})
	if len(ps.Conditions) != 2 || ps.Conditions[0] != accepted("Accepted") ||
		ps.Conditions[1] != conditions.New("PartiallyInvalid", "True", "UnsupportedValue", "Dropped Rule(s) "+
			"[1]: Invalid filter X: nope.") {
		t.Errorf("partial: %+v", ps.Conditions)
	}

	// every rule dropped: Accepted=False with the error
	ps = &result.ParentStatus{Conditions: []result.Condition{accepted("Accepted")}}
	filterConditions(ps, []*ruleCtx{bad})
	if len(ps.Conditions) != 1 ||
		ps.Conditions[0] != conditions.New("Accepted", "False", "UnsupportedValue", "Invalid filter X: nope.") {
		t.Errorf("all: %+v", ps.Conditions)
	}

	// no hostname intersection keeps its Accepted=False
	noHost := conditions.New("Accepted", "False", "NoMatchingListenerHostname", "no hosts")
	ps = &result.ParentStatus{Conditions: []result.Condition{noHost}}
	filterConditions(ps, []*ruleCtx{bad})
	if len(ps.Conditions) != 1 || ps.Conditions[0] != noHost {
		t.Errorf("no host: %+v", ps.Conditions)
	}
}

const filterObjects = testutil.GatewayAndApp + `---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: app, namespace: default}
spec:
  parentRefs: [{name: eg}]
  rules:
  - filters:
    - type: RequestHeaderModifier
      requestHeaderModifier: {set: [{name: x-a, value: b}]}
    - type: RequestMirror
      requestMirror: {backendRef: {name: app, port: 8080}, fraction: {numerator: 1, denominator: 3}}
    - type: RequestMirror
      requestMirror: {backendRef: {name: missing, port: 8080}}
    backendRefs: [{name: app, port: 8080}]
`

func TestMirrorsThroughTranslate(t *testing.T) {
	out := translateYAML(t, filterObjects)
	if len(out.IR.HTTP) != 1 || len(out.IR.HTTP[0].Routes) != 1 {
		t.Fatalf("IR %+v", out.IR.HTTP)
	}
	r := out.IR.HTTP[0].Routes[0]
	// the missing mirror backend fails the rule: 500, and the valid mirror is still listed
	if r.DirectResponse == nil || r.DirectResponse.Status != 500 || r.Destination != nil {
		t.Errorf("route action: direct %+v destination %+v", r.DirectResponse, r.Destination)
	}
	if len(r.Mirrors) != 1 || r.Mirrors[0].Destination.Name != "httproute/default/app/rule/0-mirror-1" ||
		r.Mirrors[0].Destination.Settings[0].Name != "httproute/default/app/rule/0-mirror-1/backend/-1" ||
		*r.Mirrors[0].Percent != float32(100)*1/3 {
		t.Errorf("mirrors %+v", r.Mirrors)
	}
	var parents []result.ParentStatus
	for _, s := range out.Statuses {
		if s.Object.Kind == "HTTPRoute" {
			parents = s.Parents
		}
	}
	if len(parents) != 1 {
		t.Fatalf("parents %+v", parents)
	}
	want := conditions.New("ResolvedRefs", "False", "BackendNotFound",
		"Failed to validate the RequestMirror filter: service default/missing not found.")
	if c := parents[0].Conditions; len(c) != 2 || c[1] != want {
		t.Errorf("conditions %+v, want ResolvedRefs %+v", c, want)
	}
}
