package scenario_test

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/egharness/egharness/harness/scenario"
)

// Every scenario of the project is named after its file, so that a name in a run's table,
// a report or `serve --scenario` leads to scenarios/<area>/<name>.yaml and to its goldens,
// golden/<area>/<name>/<profile>/ (issue #22: names and file names had drifted apart).
func TestProjectScenarioNamesAreFileNames(t *testing.T) {
	set, err := loader(t, scenariosRoot).LoadPaths(scenariosRoot)
	if err != nil {
		t.Fatal(err)
	}
	if len(set.Errors) > 0 {
		t.Fatalf("scenarios that do not load: %v", set.Errors[0])
	}
	if len(set.Scenarios) < 100 {
		t.Fatalf("%d scenarios loaded from %s, want the whole project", len(set.Scenarios), scenariosRoot)
	}
	for _, s := range set.Scenarios {
		if want := scenario.FileName(s.File); s.Name != want {
			t.Errorf("%s:%d: name %q differs from the file name: name it %s (and move golden/%s with git mv)", s.File,
				s.Line("name"), s.Name, want, filepath.ToSlash(filepath.Join(s.Area, s.Name)))
		}
		rel, err := filepath.Rel(scenariosRoot, s.File)
		if err != nil {
			t.Fatal(err)
		}
		if want := strings.TrimSuffix(filepath.ToSlash(rel), ".yaml"); s.Path != want {
			t.Errorf("%s: Path %q, want %q", s.File, s.Path, want)
		}
	}
}

// Path, which places the goldens, is the file's path under Root, however deep; a file
// outside Root keeps <area>/<name>.
func TestScenarioPath(t *testing.T) {
	root := t.TempDir()
	deep := write(t, root, "routing/weights/demo.yaml", validScenario)
	s, err := loader(t, root).LoadFile(deep)
	if err != nil {
		t.Fatal(err)
	}
	if s.Path != "routing/weights/demo" || s.Area != "routing" {
		t.Errorf("Path %q, Area %q; want routing/weights/demo, routing", s.Path, s.Area)
	}
	outside := write(t, t.TempDir(), "naming/demo.yaml", validScenario)
	if s, err = loader(t, root).LoadFile(outside); err != nil {
		t.Fatal(err)
	}
	if s.Path != "naming/demo" {
		t.Errorf("Path %q outside Root, want naming/demo", s.Path)
	}
	if got := scenario.FileName("scenarios/tls/sni.yml"); got != "sni" {
		t.Errorf("FileName %q, want sni", got)
	}
}
