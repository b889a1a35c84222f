package yamlout

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

// The fast path must print exactly what sigs.k8s.io/yaml prints for the same JSON: goldens
// and users' diffs of `translate` output depend on those bytes.
func TestSameBytesAsJSONToYAML(t *testing.T) {
	docs := []string{
		`{"b":1,"a":[1,-2,3.5,1e3,18446744073709551615,9223372036854775807,-9223372036854775808,0.1],"c":null,"d":{},"e":[]}`,
		`{"s":["true","1","","null","a: b","- x","multi\nline\n","  lead","long ` + string(
			bytes.Repeat([]byte("word "), 40)) + `"]}`,
		`{"a10":1,"a9":2,"A":3,"_":4,"1":5,"10":6,"2":7}`,
		`[{"x":{"y":[{"z":[]}]}},"é✓",false,true]`,
		`"plain"`,
		`{"yamlout-split-list-0":[{"a":[1,2,{"b":[3,4]}]},{"c":"yamlout-split-list-1"}],"d":[[1,2],[3,[4,5]]]}`,
		`7`,
		`{"a: b":{"c":[1]},"x\ny":{"z":{}},"k10":{"v":1},"k9":{"v":[{"w":"` + string(
			bytes.Repeat([]byte("long "), 30)) + `"}]},"":{"e":1}}`,
	}
	// Every golden file is JSON the harness printed as YAML; convert it back and forth.
	files, _ := filepath.Glob("../../golden/*/*/*/*.yaml")
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		js, err := yaml.YAMLToJSON(data)
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		docs = append(docs, string(js))
	}
	if len(files) == 0 {
		t.Fatal("no golden files found")
	}
	for _, d := range docs {
		want, err := yaml.JSONToYAML([]byte(d))
		if err != nil {
			t.Fatal(err)
		}
		// Split every list (0) and none (huge), print every object member by member (0)
		// and none: the bytes must not depend on the pieces.
		for _, split := range []int{0, 1, 3, splitAbove, 1 << 30} {
			for _, lazy := range []int{0, 64, lazyAbove, 1 << 30} {
				var buf bytes.Buffer
				if err := write(&buf, []byte(d), split, lazy); err != nil {
					t.Fatalf("%.80s: %v", d, err)
				}
				if got := buf.Bytes(); !bytes.Equal(got, want) {
					t.Errorf("split above %d, lazy above %d: %.80s:\n got %q\nwant %q", split, lazy, d, got, want)
				}
			}
		}
	}
}

func TestBadJSON(t *testing.T) {
	for _, d := range []string{`{`, `{"a":1} {"b":2}`, ``} {
		if _, err := FromJSON([]byte(d)); err == nil {
			t.Errorf("%q: no error", d)
		}
	}
}

func BenchmarkFromJSON(b *testing.B) {
	files, _ := filepath.Glob("../../golden/*/*/*/listeners.yaml")
	var all [][]byte
	for _, f := range files {
		data, _ := os.ReadFile(f)
		js, err := yaml.YAMLToJSON(data)
		if err == nil {
			all = append(all, js)
		}
	}
	b.ResetTimer()
	for b.Loop() {
		for _, js := range all {
			if _, err := FromJSON(js); err != nil {
				b.Fatal(err)
			}
		}
	}
}

// Objects are printed member by member in keyLess order (numbers within keys by value), not
// byte order.
func TestObjectMembers(t *testing.T) {
	keys, members, ok := objectMembers([]byte(` {"k10":1,"k9":[2],"a: b":{"c":3},"":4}`))
	if !ok {
		t.Fatal("not split")
	}
	if want := []string{"", "a: b", "k9", "k10"}; !slices.Equal(keys, want) {
		t.Errorf("keys %q, want %q", keys, want)
	}
	if string(members["k9"]) != "[2]" {
		t.Errorf("k9 = %s", members["k9"])
	}
	for _, d := range []string{`[1,2]`, `{}`, `"s"`, `7`} {
		if _, _, ok := objectMembers([]byte(d)); ok {
			t.Errorf("%s: split", d)
		}
	}
}

// FuzzSameBytes holds the piecewise printer to JSONToYAML's bytes on any JSON document, with
// every list split and every object printed member by member.
func FuzzSameBytes(f *testing.F) {
	for _, s := range []string{`{"a":[1,{"b":"c"}],"d":{"e":null}}`, `[{"x":{"y":[{"z":[]}]}}]`, `{"k10":1,"k9":{"":2}}`,
		`"s"`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, doc string) {
		if !json.Valid([]byte(doc)) {
			return
		}
		want, err := yaml.JSONToYAML([]byte(doc))
		if err != nil {
			return // documents the reference printer refuses are not ours to print
		}
		var buf bytes.Buffer
		if err := write(&buf, []byte(doc), 0, 0); err != nil {
			t.Fatalf("%q: %v", doc, err)
		}
		// Where the emitter's own key order is not a total order (keys mixing letters and
		// digits), its bytes change from run to run and ours are the same lines in keyLess
		// order; everywhere else they are its bytes.
		if emitterOrderAgrees(t, doc) {
			if !bytes.Equal(buf.Bytes(), want) {
				t.Fatalf("%q:\n got %q\nwant %q", doc, buf.Bytes(), want)
			}
		}
		// either way, the same document as the reference printer's
		got, err := yaml.YAMLToJSON(buf.Bytes())
		if err != nil {
			t.Fatalf("%q: printed YAML does not parse: %v", doc, err)
		}
		ref, err := yaml.YAMLToJSON(want)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, ref) {
			t.Fatalf("%q: printed YAML reads back as %s, the reference's as %s", doc, got, ref)
		}
	})
}

// emitterOrderAgrees says whether, for every object of doc, the YAML emitter puts each pair
// of its keys in keyLess order: then any sort by the emitter's comparison gives keyLess order.
func emitterOrderAgrees(t *testing.T, doc string) bool {
	dec := json.NewDecoder(strings.NewReader(doc))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		t.Fatal(err)
	}
	agrees := true
	var walk func(any)
	walk = func(v any) {
		switch x := v.(type) {
		case map[string]any:
			for a, e := range x {
				walk(e)
				for b := range x {
					if a < b && emitterPair(t, a, b) != keyLess(a, b) {
						agrees = false
					}
				}
			}
		case []any:
			for _, e := range x {
				walk(e)
			}
		}
	}
	walk(v)
	return agrees
}

// emitterPair says whether the emitter prints key a before key b.
func emitterPair(t *testing.T, a, b string) bool {
	out, err := yaml.Marshal(map[string]int{a: 0, b: 1})
	if err != nil {
		t.Fatal(err)
	}
	return bytes.Index(out, []byte(": 0")) < bytes.Index(out, []byte(": 1"))
}

// The emitter alone prints keys that mix letters and digits (JWT providers issuer_<hex>) in
// an order that depends on Go's map order; ours is the same every time.
func TestMixedKeysDeterministic(t *testing.T) {
	doc := []byte(`{"a2":1,"a19":2,"a1b":3,"issuer_1b":4,"issuer_19":5,"issuer_2a":6,"x":{"k1b":[1],"k19":[2],"k2a":[3]}}`)
	first, err := FromJSON(doc)
	if err != nil {
		t.Fatal(err)
	}
	for range 50 {
		again, err := FromJSON(doc)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(again, first) {
			t.Fatalf("two runs differ:\n%s\n%s", first, again)
		}
	}
	want := "a1b: 3\na2: 1\na19: 2\nissuer_1b: 4\nissuer_2a: 6\nissuer_19: 5\nx:\n  k1b:\n  - 1\n  k2a:\n  - 3\n  k19:\n" +
		"  - 2\n"
	if string(first) != want {
		t.Errorf("got\n%s\nwant\n%s", first, want)
	}
}

// keyLess must be a strict total order, or the sort that uses it is not deterministic.
func TestKeyLessTotalOrder(t *testing.T) {
	alphabet := []string{"a", "b", "B", "_", "-", "0", "1", "2", "9", "é", "٣"}
	var keys []string
	var gen func(prefix string, n int)
	gen = func(prefix string, n int) {
		keys = append(keys, prefix)
		if n == 0 {
			return
		}
		for _, r := range alphabet {
			gen(prefix+r, n-1)
		}
	}
	gen("", 3)
	slices.SortFunc(keys, keyCompare)
	for i := range keys {
		if keyLess(keys[i], keys[i]) {
			t.Fatalf("%q < itself", keys[i])
		}
		for j := i + 1; j < len(keys); j += 7 {
			if !keyLess(keys[i], keys[j]) || keyLess(keys[j], keys[i]) {
				t.Fatalf("sorted %q before %q, but keyLess disagrees", keys[i], keys[j])
			}
		}
	}
}
