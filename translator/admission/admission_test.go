package admission

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	gwapiv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/egharness/egharness/translator/profile"
	"github.com/egharness/egharness/translator/resource"
)

func review(t *testing.T, text string) ([]string, []resource.Object, []string) {
	t.Helper()
	dec, err := resource.Decode("in.yaml", []byte(text), resource.Options{DefaultNamespace: "apps"})
	if err != nil {
		t.Fatal(err)
	}
	p, _ := profile.Get("v1.9")
	verdicts, admitted, warnings, err := Review(dec.Objects, p, nil)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, v := range verdicts {
		s := v.Object.String() + " allowed"
		if !v.Allowed {
			s = v.Object.String() + " refused: " + v.Message
		}
		out = append(out, s)
	}
	return out, admitted, warnings
}

// Objects of the CRD-defined groups are decided by the CRDs; the admitted ones come back as
// stored (served older version converted, defaults filled in, the harness's namespace kept);
// a kind no CRD defines is refused as the API server does, and BackendLBPolicy, which no
// release defines, is read as the translator's own.
func TestReview(t *testing.T) {
	verdicts, admitted, _ := review(t, `apiVersion: gateway.networking.k8s.io/v1beta1
kind: HTTPRoute
metadata: {name: old}
spec:
  rules: [{backendRefs: [{name: app, port: 80}]}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: typo}
spec:
  hostnames: one.example.com
---
apiVersion: gateway.networking.k8s.io/v1
kind: FooRoute
metadata: {name: foo}
---
apiVersion: gateway.networking.k8s.io/v1alpha2
kind: BackendLBPolicy
metadata: {name: lb}
spec:
  targetRefs: [{group: "", kind: Service, name: app}]
---
apiVersion: v1
kind: Service
metadata: {name: app}
spec: {ports: [{port: 80}]}
`)
	want := []string{
		"HTTPRoute/apps/old allowed",
		`HTTPRoute/apps/typo refused: HTTPRoute.gateway.networking.k8s.io "typo" is invalid: [spec.hostnames: Invalid ` +
			`value: "string": spec.hostnames in body must be of type array`,
		`FooRoute/apps/foo refused: no matches for kind "FooRoute" in version "gateway.networking.k8s.io/v1"`,
		"BackendLBPolicy/apps/lb allowed",
		"Service/apps/app allowed",
	}
	if len(verdicts) != len(want) {
		t.Fatalf("verdicts %q", verdicts)
	}
	for i := range want {
		if !strings.HasPrefix(verdicts[i], want[i]) {
			t.Errorf("verdict %d:\n got  %s\n want %s…", i, verdicts[i], want[i])
		}
	}
	if len(admitted) != 3 {
		t.Fatalf("admitted %d objects, want 3", len(admitted))
	}
	route, ok := admitted[0].Obj.(*gwapiv1.HTTPRoute)
	if !ok || admitted[0].APIVersion != "gateway.networking.k8s.io/v1" {
		t.Fatalf("the v1beta1 route is admitted as %T %s, want the stored v1 HTTPRoute", admitted[0].Obj,
			admitted[0].APIVersion)
	}
	if route.Namespace != "apps" {
		t.Errorf("namespace %q, want the harness's apps", route.Namespace)
	}
	br := route.Spec.Rules[0].BackendRefs[0]
	if br.Weight == nil || *br.Weight != 1 || br.Kind == nil || *br.Kind != "Service" {
		t.Errorf("backendRef %+v: want the CRD's defaults (weight 1, kind Service)", br)
	}
	if m := route.Spec.Rules[0].Matches; len(m) != 1 || m[0].Path == nil || *m[0].Path.Value != "/" {
		t.Errorf("matches %+v: want the CRD's default PathPrefix /", m)
	}
}

// Every object is decided, however many are refused: one file, every verdict.
func TestReviewListsEveryRefusal(t *testing.T) {
	var b strings.Builder
	for i := 0; i < 12; i++ {
		b.WriteString(
			"---\napiVersion: gateway.networking.k8s.io/v1\nkind: Gateway\nmetadata: {name: g" + string(
				rune('a'+i)) + "}\nspec: {gatewayClassName: eg, listeners: [{name: http, protocol: HTTP, port: 70000}]}\n")
	}
	verdicts, admitted, _ := review(t, b.String())
	if len(verdicts) != 12 || len(admitted) != 0 {
		t.Fatalf("%d verdicts, %d admitted; want 12 refusals", len(verdicts), len(admitted))
	}
	for _, v := range verdicts {
		if !strings.Contains(v, "should be less than or equal to 65535") {
			t.Errorf("verdict %q", v)
		}
	}
}

// A memo answers the objects an earlier review saw unchanged, with the same verdicts and
// stored objects, and asks the CRDs about the rest; it keeps only the last review's
// verdicts and forgets them all when the release changes.
func TestMemo(t *testing.T) {
	text := func(hostname string) string {
		return `apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: a}
spec: {hostnames: [a.example.com], rules: [{backendRefs: [{name: app, port: 80}]}]}
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: b}
spec: {hostnames: [` + hostname + `]}
`
	}
	decode := func(s string) []resource.Object {
		dec, err := resource.Decode("in.yaml", []byte(s), resource.Options{DefaultNamespace: "apps"})
		if err != nil {
			t.Fatal(err)
		}
		return dec.Objects
	}
	v19, _ := profile.Get("v1.9")
	v18, _ := profile.Get("v1.8")
	memo := &Memo{}
	run := func(p profile.Profile, s string) ([]string, int, int) {
		verdicts, admitted, _, err := Review(decode(s), p, memo)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, v := range verdicts {
			out = append(out, fmt.Sprint(v.Object, v.Allowed, v.Message))
		}
		for _, o := range admitted {
			out = append(out, o.Obj.GetNamespace()+"/"+o.Obj.GetName()+" "+o.APIVersion)
		}
		hits, misses := memo.Stats()
		return out, hits, misses
	}
	first, hits, misses := run(v19, text("b.example.com"))
	if hits != 0 || misses != 2 {
		t.Errorf("first review: %d hits, %d misses", hits, misses)
	}
	again, hits, misses := run(v19, text("b.example.com"))
	if hits != 2 || misses != 0 || !slices.Equal(first, again) {
		t.Errorf("same objects: %d hits, %d misses, verdicts %v then %v", hits, misses, first, again)
	}
	nofresh, _, _, _ := Review(decode(text("B.example.com")), v19, nil)
	edited, hits, misses := run(v19, text("B.example.com")) // upper case: refused
	if hits != 1 || misses != 1 || edited[1] != fmt.Sprint(nofresh[1].Object, nofresh[1].Allowed, nofresh[1].Message) ||
		nofresh[1].Allowed {
		t.Errorf("one object edited: %d hits, %d misses, %v", hits, misses, edited)
	}
	if _, hits, misses = run(v18, text("B.example.com")); hits != 0 || misses != 2 {
		t.Errorf("another release: %d hits, %d misses", hits, misses)
	}
}
