package crds_test

import (
	"path/filepath"
	"reflect"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/egharness/egharness/harness/catalog"
	"github.com/egharness/egharness/harness/scenario"
	"github.com/egharness/egharness/translator/crds"
)

// The remembered CEL answers (celMemo) change no verdict: every object of every scenario,
// and objects that repeat a broken part at several places, get the same verdict, message
// and stored object as from the CEL validator run directly, the first time and when their
// parts are answered from memory.
func TestCELMemoChangesNoVerdict(t *testing.T) {
	set, err := crds.ForRelease(crds.Built)
	if err != nil {
		t.Fatal(err)
	}
	cat, err := catalog.Load()
	if err != nil {
		t.Fatal(err)
	}
	root := filepath.Join("..", "..", "scenarios")
	scenarios, err := scenario.Loader{Catalog: cat, Root: root}.LoadPaths(root)
	if err != nil {
		t.Fatal(err)
	}
	var docs [][]byte
	for _, sc := range scenarios.Scenarios {
		for _, o := range sc.Objects {
			if o.Raw != nil && o.Kind != "BackendLBPolicy" {
				docs = append(docs, o.Raw)
			}
		}
	}
	for _, y := range []string{`apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: twice, namespace: default}
spec:
  parentRefs: [{name: eg}]
  rules:
  - matches: [{path: {type: PathPrefix, value: "/a//b"}}, {path: {type: RegularExpression, value: "/x"}}]
    filters: [{type: RequestRedirect, requestRedirect: {path: {type: ReplaceFullPath}}}, {type: URLRewrite, urlRewrite: {}}]
  - matches: [{path: {type: PathPrefix, value: "/a//b"}}]
    filters: [{type: RequestRedirect, requestRedirect: {path: {type: ReplaceFullPath}}}, {type: URLRewrite, urlRewrite: {}}]
`, `apiVersion: gateway.envoyproxy.io/v1alpha1
kind: BackendTrafficPolicy
metadata: {name: two-rules, namespace: default}
spec:
  targetRefs: [{group: gateway.networking.k8s.io, kind: HTTPRoute, name: app}, {group: gateway.networking.k8s.io, kind: HTTPRoute, name: app}]
  loadBalancer: {type: ConsistentHash}
  faultInjection: {}
  healthCheck: {active: {type: HTTP}}
  mergeType: Replace
`} {
		js, err := yaml.YAMLToJSON([]byte(y))
		if err != nil {
			t.Fatal(err)
		}
		docs = append(docs, js)
	}
	refused := 0
	for pass := range 2 {
		for _, js := range docs {
			want, err := crds.AdmitWithoutMemo(set, js)
			if err != nil {
				t.Fatal(err)
			}
			got, err := set.Admit(js)
			if err != nil {
				t.Fatal(err)
			}
			if got.Allowed != want.Allowed || got.Message != want.Message || !reflect.DeepEqual(got.Object, want.Object) {
				t.Fatalf("pass %d: %s\nwith memory: %v %s\nwithout:     %v %s", pass, js, got.Allowed, got.Message, want.Allowed, want.Message)
			}
			if pass == 0 && !got.Allowed {
				refused++
			}
		}
	}
	if refused < 20 {
		t.Fatalf("only %d refusals among %d objects: the test checks too little", refused, len(docs))
	}
	t.Logf("%d objects, %d refused", len(docs), refused)
}
