package yamlout

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"sigs.k8s.io/yaml"
)

// The fast path must print exactly what sigs.k8s.io/yaml prints for the same JSON: goldens
// and users' diffs of `translate` output depend on those bytes.
func TestSameBytesAsJSONToYAML(t *testing.T) {
	docs := []string{
		`{"b":1,"a":[1,-2,3.5,1e3,18446744073709551615,9223372036854775807,-9223372036854775808,0.1],"c":null,"d":{},"e":[]}`,
		`{"s":["true","1","","null","a: b","- x","multi\nline\n","  lead","long ` + string(bytes.Repeat([]byte("word "), 40)) + `"]}`,
		`{"a10":1,"a9":2,"A":3,"_":4,"1":5,"10":6,"2":7}`,
		`[{"x":{"y":[{"z":[]}]}},"é✓",false,true]`,
		`"plain"`,
		`{"yamlout-split-list-0":[{"a":[1,2,{"b":[3,4]}]},{"c":"yamlout-split-list-1"}],"d":[[1,2],[3,[4,5]]]}`,
		`7`,
		`{"a: b":{"c":[1]},"x\ny":{"z":{}},"k10":{"v":1},"k9":{"v":[{"w":"` + string(bytes.Repeat([]byte("long "), 30)) + `"}]},"":{"e":1}}`,
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

// Objects are printed member by member only where the emitter's key order can be read back;
// the order is the emitter's (numbers within keys by value), not byte order.
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
	for _, s := range []string{`{"a":[1,{"b":"c"}],"d":{"e":null}}`, `[{"x":{"y":[{"z":[]}]}}]`, `{"k10":1,"k9":{"":2}}`, `"s"`} {
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
		if !bytes.Equal(buf.Bytes(), want) {
			t.Fatalf("%q:\n got %q\nwant %q", doc, buf.Bytes(), want)
		}
	})
}
