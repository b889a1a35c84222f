package crds_test

import (
	"encoding/json"
	"maps"
	"reflect"
	"slices"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/egharness/egharness/translator/crds"
)

// The remembered CEL answers (celMemo) change no verdict: every object of every scenario,
// and objects that repeat a broken part at several places, get the same verdict, message
// and stored object as from the CEL validator run directly, the first time and when their
// parts are answered from memory.
func TestCELMemoChangesNoVerdict(t *testing.T) {
	set := builtSet(t)
	docs := scenarioDocs(t)
	for _, y := range []string{`apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: twice, namespace: default}
spec:
  parentRefs: [{name: eg}]
  rules:
  - matches: [{path: {type: PathPrefix, value: "/a//b"}}, {path: {type: RegularExpression, value: "/x"}}]
    filters:
    - {type: RequestRedirect, requestRedirect: {path: {type: ReplaceFullPath}}}
    - {type: URLRewrite, urlRewrite: {}}
  - matches: [{path: {type: PathPrefix, value: "/a//b"}}]
    filters:
    - {type: RequestRedirect, requestRedirect: {path: {type: ReplaceFullPath}}}
    - {type: URLRewrite, urlRewrite: {}}
`, `apiVersion: gateway.envoyproxy.io/v1alpha1
kind: BackendTrafficPolicy
metadata: {name: two-rules, namespace: default}
spec:
  targetRefs:
  - {group: gateway.networking.k8s.io, kind: HTTPRoute, name: app}
  - {group: gateway.networking.k8s.io, kind: HTTPRoute, name: app}
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
	docs = append(docs, variants(t, docs)...)
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
				t.Fatalf("pass %d: %s\nwith memory: %v %s\nwithout:     %v %s", pass, js, got.Allowed, got.Message, want.Allowed,
					want.Message)
			}
			if pass == 0 && !got.Allowed {
				refused++
			}
		}
	}
	if refused < 200 {
		t.Fatalf("only %d refusals among %d objects: the test checks too little", refused, len(docs))
	}
	t.Logf("%d objects, %d refused", len(docs), refused)
}

// variants are the objects again with one part changed, where a node's rules read only
// some of its value (celaccess.go): every "type" set to each type the objects use (the
// union members no longer match it), and each member of a spec's objects taken out in
// turn (the fields its rules ask has() about). They are admitted after the originals, so
// that answers the originals left in memory are offered to values that differ from them
// only where a rule looks.
func variants(t *testing.T, docs [][]byte) [][]byte {
	t.Helper()
	types := map[string]bool{}
	var collect func(v any)
	collect = func(v any) {
		switch x := v.(type) {
		case map[string]any:
			for k, e := range x {
				if s, ok := e.(string); ok && k == "type" {
					types[s] = true
				}
				collect(e)
			}
		case []any:
			for _, e := range x {
				collect(e)
			}
		}
	}
	var objs []map[string]any
	for _, js := range docs {
		var o map[string]any
		if err := json.Unmarshal(js, &o); err != nil {
			t.Fatal(err)
		}
		objs = append(objs, o)
		collect(o)
	}
	typeList := slices.Sorted(maps.Keys(types))
	var out [][]byte
	add := func(o map[string]any) {
		js, err := json.Marshal(o)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, js)
	}
	for i, o := range objs {
		spec, ok := o["spec"].(map[string]any)
		if !ok {
			continue
		}
		// a few objects' worth each, so the test stays quick: every ninth object
		if i%9 != 0 {
			continue
		}
		var edits []func(map[string]any)
		var walk func(v any, at []any)
		walk = func(v any, at []any) {
			switch x := v.(type) {
			case map[string]any:
				for _, k := range slices.Sorted(maps.Keys(x)) {
					path := append(slices.Clip(at), k)
					if k == "type" {
						for _, ty := range typeList {
							edits = append(edits, func(root map[string]any) { setAt(root, path, ty) })
						}
					} else {
						edits = append(edits, func(root map[string]any) { deleteAt(root, path) })
					}
					walk(x[k], path)
				}
			case []any:
				for j, e := range x {
					walk(e, append(slices.Clip(at), j))
				}
			}
		}
		walk(spec, []any{"spec"})
		for _, edit := range edits {
			c := deepCopy(o).(map[string]any)
			edit(c)
			add(c)
		}
	}
	return out
}

func deepCopy(v any) any {
	switch x := v.(type) {
	case map[string]any:
		c := make(map[string]any, len(x))
		for k, e := range x {
			c[k] = deepCopy(e)
		}
		return c
	case []any:
		c := make([]any, len(x))
		for i, e := range x {
			c[i] = deepCopy(e)
		}
		return c
	}
	return v
}

// parentAt follows path (map keys and list indexes) to the container of its last step.
func parentAt(root map[string]any, path []any) any {
	var cur any = root
	for _, step := range path[:len(path)-1] {
		switch s := step.(type) {
		case string:
			cur = cur.(map[string]any)[s]
		case int:
			cur = cur.([]any)[s]
		}
	}
	return cur
}

func setAt(root map[string]any, path []any, v any) {
	parentAt(root, path).(map[string]any)[path[len(path)-1].(string)] = v
}

func deleteAt(root map[string]any, path []any) {
	delete(parentAt(root, path).(map[string]any), path[len(path)-1].(string))
}
