package facts_test

import (
	"testing"

	"github.com/egharness/egharness/harness/facts"
	"github.com/egharness/egharness/internal/testutil"
	"github.com/egharness/egharness/translator"
)

func TestMatch(t *testing.T) {
	for _, tt := range []struct {
		pattern, key string
		want         bool
	}{
		{"routes a b", "routes a b", true},
		{"routes a b", "routes a bc", false},
		{"routes *", "routes a b", true},
		{"*httproute/ops/ops/*", "cluster httproute/ops/ops/rule/0", true},
		{"*httproute/ops/ops/*", "cluster httproute/ops/other/rule/0", false},
		{"expect.statuses[*]", "expect.statuses[3]", true},
		{"expect.statuses[*]", "expect.statuses[3].conditions[0]", true}, // '*' is any text
		{"expect.statuses[3]", "expect.statuses[3].conditions[0]", false},
		{"a*b*c", "abc", true},
		{"a*b*c", "ac", false},
		{"error", "error", true},
	} {
		if got := facts.Match(tt.pattern, tt.key); got != tt.want {
			t.Errorf("Match(%q, %q) = %t, want %t", tt.pattern, tt.key, got, tt.want)
		}
	}
}

const objects = testutil.GatewayAndApp + `---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: app, namespace: default}
spec:
  parentRefs: [{name: eg}]
  hostnames: [app.example.com]
  rules:
  - matches: [{path: {type: PathPrefix, value: /old}}]
    filters: [{type: RequestRedirect,
      requestRedirect: {path: {type: ReplaceFullPath, replaceFullPath: /new}, statusCode: 301}}]
  - matches: [{path: {type: PathPrefix, value: /}}]
    backendRefs: [{name: app, port: 8080}]
    filters: [{type: RequestHeaderModifier, requestHeaderModifier: {set: [{name: x-a, value: "1"}]}}]
`

// The facts of a translation name what users see: the route order, each route's action
// and changes, the listener's filters, and conditions without their messages.
func TestOf(t *testing.T) {
	objs, p := testutil.DecodeV19(t, "in.yaml", objects)
	res, err := translator.Translate(translator.Input{Objects: objs, Profile: p})
	if err != nil {
		t.Fatal(err)
	}
	f := facts.Of(res, facts.Options{})
	vh := "default/eg/http default/eg/http/app_example_com"
	rule0 := " httproute/default/app/rule/0/match/0/app_example_com"
	rule1 := " httproute/default/app/rule/1/match/0/app_example_com"
	for key, want := range map[string]string{
		"routes " + vh: "httproute/default/app/rule/0/match/0/app_example_com, " +
			"httproute/default/app/rule/1/match/0/app_example_com",
		"route-action " + vh + rule0:                             `redirect {"pathRedirect":"/new"}`,
		"route-action " + vh + rule1:                             "cluster httproute/default/app/rule/1",
		"route-filters " + vh + rule1:                            "request-headers",
		"domains " + vh:                                          "app.example.com",
		"cluster httproute/default/app/rule/1":                   "EDS",
		"status HTTPRoute/default/app parent Gateway/default/eg": "Accepted=True/Accepted ResolvedRefs=True/ResolvedRefs",
		"status Gateway/default/eg listener http": "attachedRoutes=1 Accepted=True/Accepted " +
			"Programmed=True/Programmed ResolvedRefs=True/ResolvedRefs",
	} {
		if f[key] != want {
			t.Errorf("%s = %q, want %q", key, f[key], want)
		}
	}
	if got := f["http-filters default/eg/http default/eg/http (default)"]; got == "" {
		var keys []string
		for k := range f {
			keys = append(keys, k)
		}
		t.Errorf("no http-filters fact for the listener's chain; facts: %q", keys)
	}
	// Compare: one changed fact, one missing.
	g := facts.Set{}
	for k, v := range f {
		g[k] = v
	}
	g["routes "+vh] = "reversed"
	delete(g, "cluster httproute/default/app/rule/1")
	d := facts.Compare(f, g)
	if len(d) != 2 || d[0].Key != "cluster httproute/default/app/rule/1" || d[0].Got != "" || d[1].Want == d[1].Got {
		t.Errorf("Compare: %+v", d)
	}
}
