package crds_test

import (
	"encoding/json"
	"fmt"
	"maps"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"

	envoygateway "github.com/envoyproxy/gateway"

	"github.com/egharness/egharness/harness/catalog"
	"github.com/egharness/egharness/harness/scenario"
	"github.com/egharness/egharness/translator/crds"
)

// The remembered schema answers (schemaMemo) change no verdict: every object of every
// scenario, and one-edit variants of them that the OpenAPI schema refuses (fields removed,
// values of the wrong type, strings too long or not matching their pattern or enum, numbers
// out of range, list items repeated so list-map keys and set items are duplicated, "type"
// set to each type the objects use and to one no enum has), get the same verdict, message
// (byte for byte) and stored object with both memos as with the validators run directly.
// The objects are admitted three times, forward, backward and interleaved (the even ones
// forward, then the odd ones backward), so that
// answers remembered from one object are offered to the parts of others, valid and
// broken ones side by side.
func TestSchemaMemoChangesNoVerdict(t *testing.T) {
	set := builtSet(t)
	docs := scenarioDocs(t)
	docs = append(docs, schemaVariants(t, docs, 7)...)
	orders := [][]int{make([]int, len(docs)), make([]int, len(docs)), nil}
	for i := range docs {
		orders[0][i] = i
		orders[1][i] = len(docs) - 1 - i
	}
	for i := 0; i < len(docs); i += 2 {
		orders[2] = append(orders[2], i)
	}
	for i := len(docs) - 1; i >= 0; i-- {
		if i%2 == 1 {
			orders[2] = append(orders[2], i)
		}
	}
	hits0 := crds.SchemaMemoHits()
	refused := 0
	for pass, order := range orders {
		for _, i := range order {
			js := docs[i]
			want, err := crds.AdmitWithoutMemo(set, js)
			if err != nil {
				t.Fatal(err)
			}
			got, err := set.Admit(js)
			if err != nil {
				t.Fatal(err)
			}
			if got.Allowed != want.Allowed || got.Message != want.Message || !reflect.DeepEqual(got.Object, want.Object) {
				t.Fatalf("pass %d: %s\nwith memory: %v %s\nwithout:     %v %s", pass, js, got.Allowed, got.Message,
					want.Allowed, want.Message)
			}
			// the schema memo alone, beside the CEL memo
			alone, err := crds.AdmitWithoutSchemaMemo(set, js)
			if err != nil {
				t.Fatal(err)
			}
			if alone.Allowed != got.Allowed || alone.Message != got.Message || !reflect.DeepEqual(alone.Object, got.Object) {
				t.Fatalf("pass %d: %s\nwith memory: %v %s\nwithout the schema memo: %v %s", pass, js, got.Allowed,
					got.Message, alone.Allowed, alone.Message)
			}
			if pass == 0 && !got.Allowed {
				refused++
			}
		}
	}
	hits := crds.SchemaMemoHits() - hits0
	if refused < 1000 || hits < 100000 {
		t.Fatalf("only %d refusals among %d objects, %d answers from memory: the test checks too little", refused,
			len(docs), hits)
	}
	t.Logf("%d objects, %d refused, %d schema answers from memory", len(docs), refused, hits)
}

// scenarioDocs are the JSON of every object of every scenario, which both memo tests admit.
func scenarioDocs(t *testing.T) [][]byte {
	t.Helper()
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
	return docs
}

// schemaVariants are every every-th object again with one part of its spec changed in
// a way the OpenAPI schema may refuse.
func schemaVariants(t *testing.T, docs [][]byte, every int) [][]byte {
	t.Helper()
	var out [][]byte
	add := func(o map[string]any) {
		js, err := json.Marshal(o)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, js)
	}
	long := strings.Repeat("a", 300)
	for i, js := range docs {
		if i%every != 0 {
			continue
		}
		var o map[string]any
		if err := json.Unmarshal(js, &o); err != nil {
			t.Fatal(err)
		}
		if _, ok := o["spec"].(map[string]any); !ok {
			continue
		}
		var edits []func(map[string]any)
		set := func(path []any, v any) {
			edits = append(edits, func(root map[string]any) { setAtPath(root, path, v) })
		}
		var walk func(v any, at []any)
		walk = func(v any, at []any) {
			switch x := v.(type) {
			case map[string]any:
				for _, k := range slices.Sorted(maps.Keys(x)) {
					path := append(slices.Clip(at), k)
					edits = append(edits, func(root map[string]any) { deleteAt(root, path) })
					if k == "type" {
						set(path, "NoSuchType")
					}
					walk(x[k], path)
				}
				if len(at) > 1 {
					set(at, "not an object")
				}
			case []any:
				if len(x) > 0 {
					// the first item twice: duplicate list-map keys, set items, too many items
					edits = append(edits, func(root map[string]any) {
						l := getAt(root, at).([]any)
						setAtPath(root, at, append(slices.Clip(l), deepCopy(l[0])))
					})
				}
				set(at, map[string]any{"not": "a list"})
				for j, e := range x {
					walk(e, append(slices.Clip(at), j))
				}
			case string:
				set(at, long)
				set(at, "Not Valid!*")
				set(at, int64(7))
			case float64:
				set(at, "7")
				set(at, -1.5)
				set(at, float64(1<<40))
			case bool:
				set(at, "true")
			}
		}
		walk(o["spec"], []any{"spec"})
		for _, edit := range edits {
			c := deepCopy(o).(map[string]any)
			edit(c)
			add(c)
		}
	}
	return out
}

func getAt(root map[string]any, path []any) any {
	switch p := parentAt(root, path).(type) {
	case map[string]any:
		return p[path[len(path)-1].(string)]
	case []any:
		return p[path[len(path)-1].(int)]
	}
	return nil
}

// setAtPath sets the value at path, in a map or a list.
func setAtPath(root map[string]any, path []any, v any) {
	switch p := parentAt(root, path).(type) {
	case map[string]any:
		p[path[len(path)-1].(string)] = v
	case []any:
		p[path[len(path)-1].(int)] = v
	}
}

// Admissions on several goroutines (translate admits on both cores) share the memos and
// still get the verdicts of the validators run directly. Run with -race to check the
// memos' locking.
func TestSchemaMemoConcurrent(t *testing.T) {
	set, err := crds.New("concurrent", envoygateway.GatewayCRDs) // memos of its own
	if err != nil {
		t.Fatal(err)
	}
	docs := scenarioDocs(t)
	want := make([]crds.Verdict, len(docs))
	for i, js := range docs {
		if want[i], err = crds.AdmitWithoutMemo(set, js); err != nil {
			t.Fatal(err)
		}
	}
	var wg sync.WaitGroup
	errs := make([]string, 4)
	for g := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for n := range len(docs) {
				i := (n*(2*g+1) + g*31) % len(docs) // a different order on each goroutine
				got, err := set.Admit(docs[i])
				if err != nil || got.Allowed != want[i].Allowed || got.Message != want[i].Message ||
					!reflect.DeepEqual(got.Object, want[i].Object) {
					errs[g] = fmt.Sprintf("%s\nwith memory: %v %s %v\nwithout:     %v %s", docs[i], got.Allowed,
						got.Message, err, want[i].Allowed, want[i].Message)
					return
				}
			}
		}()
	}
	wg.Wait()
	for _, e := range errs {
		if e != "" {
			t.Fatal(e)
		}
	}
}
