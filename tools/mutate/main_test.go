package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

// The mutations data file parses, every entry is complete, and every search string still
// occurs exactly once in its file (a stale mutation would make `make mutate` fail late).
func TestMutationsApply(t *testing.T) {
	root := filepath.Join("..", "..")
	b, err := os.ReadFile(filepath.Join(root, "mutations", "mutations.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var f file
	if err := yaml.UnmarshalStrict(b, &f); err != nil {
		t.Fatal(err)
	}
	if err := validate(f.Mutations); err != nil {
		t.Fatal(err)
	}
	for _, m := range f.Mutations {
		src, err := os.ReadFile(filepath.Join(root, m.File))
		if err != nil {
			t.Errorf("%s: %v", m.ID, err)
			continue
		}
		if n := strings.Count(string(src), m.Search); n != 1 {
			t.Errorf("%s: search string occurs %d times in %s", m.ID, n, m.File)
		}
	}
}

func TestValidate(t *testing.T) {
	ok := Mutation{ID: "a", File: "f.go", Search: "x", Replace: "y", Breaks: []string{"RT-01"}}
	for name, ms := range map[string][]Mutation{
		"no id":        {{File: "f.go", Search: "x", Replace: "y", Breaks: []string{"RT-01"}}},
		"twice":        {ok, ok},
		"no search":    {{ID: "a", File: "f.go", Breaks: []string{"RT-01"}}},
		"no change":    {{ID: "a", File: "f.go", Search: "x", Replace: "x", Breaks: []string{"RT-01"}}},
		"no behaviors": {{ID: "a", File: "f.go", Search: "x", Replace: "y"}},
	} {
		if validate(ms) == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	if err := validate([]Mutation{ok}); err != nil {
		t.Errorf("valid mutation refused: %v", err)
	}
}

func TestStaleMutation(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "f.go"), []byte("a a"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, search := range []string{"a", "b"} {
		r := mutate(dir, filepath.Join(dir, "bin"), Mutation{ID: "m", File: "f.go", Search: search, Replace: "c"})
		if r.verdict != "stale" {
			t.Errorf("search %q: verdict %s (%s), want stale", search, r.verdict, r.detail)
		}
	}
}

func TestFailedScenarios(t *testing.T) {
	out := "SCENARIO  AREA  PROFILE  RESULT  COVERS\nx  routing  v1.9  FAIL  RT-01\ny  tls  v1.8  pass  TLS-01\n"
	if got := failedScenarios([]byte(out)); got != "x[v1.9]" {
		t.Errorf("failedScenarios = %q", got)
	}
}
