package scenario_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/egharness/egharness/harness/scenario"
)

const (
	scenariosRoot = "../../scenarios"
	invalidRoot   = "../../scenarios/invalid"
)

// Every scenarios/invalid/<case>.yaml must fail to load with exactly the message in
// <case>.error, where FILE stands for the case's path. (<case>.resources.yaml files are
// raw object files: tools/egharness checks what translate says about them.)
func TestInvalidScenarios(t *testing.T) {
	entries, err := os.ReadDir(invalidRoot)
	if err != nil {
		t.Fatal(err)
	}
	cases := 0
	for _, e := range entries {
		name := e.Name()
		switch {
		case strings.HasSuffix(name, ".error"), strings.HasSuffix(name, ".refused"):
			if _, err := os.Stat(
				filepath.Join(invalidRoot,
					strings.TrimSuffix(strings.TrimSuffix(name, ".error"), ".refused")+".yaml")); err != nil {
				t.Errorf("%s has no input beside it: %v", name, err)
			}
			continue
		case strings.HasSuffix(name, ".resources.yaml"):
			continue
		case !strings.HasSuffix(name, ".yaml"):
			t.Errorf("%s: scenarios/invalid holds <case>.yaml with <case>.error (or .refused) files only", name)
			continue
		}
		cases++
		path := filepath.Join(invalidRoot, name)
		t.Run(strings.TrimSuffix(name, ".yaml"), func(t *testing.T) {
			want, err := os.ReadFile(strings.TrimSuffix(path, ".yaml") + ".error")
			if err != nil {
				t.Fatalf("every case needs its .error file: %v", err)
			}
			s, err := loader(t, scenariosRoot).LoadFile(path)
			if err == nil {
				t.Fatalf("loaded as scenario %q, want the error in its .error file", s.Name)
			}
			var se *scenario.Error
			if !errors.As(err, &se) || se.File != path {
				t.Fatalf("error %v (%T) is not a *scenario.Error about %s", err, err, path)
			}
			got := strings.ReplaceAll(err.Error(), path, "FILE")
			if w := strings.TrimRight(string(want), "\n"); got != w {
				t.Errorf("error\n%s\nwant\n%s", got, w)
			}
			for _, m := range se.Msgs {
				if !strings.HasPrefix(m, path+":") {
					t.Errorf("message %q does not start with the file", m)
				}
			}
		})
	}
	if cases < 10 {
		t.Errorf("only %d invalid cases under %s", cases, invalidRoot)
	}
}

// Walking the scenarios folder skips scenarios/invalid; naming it loads (and refuses) it.
func TestLoadPathsSkipsInvalid(t *testing.T) {
	set, err := loader(t, scenariosRoot).LoadPaths(scenariosRoot)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range set.Errors {
		t.Errorf("a scenario under %s does not load: %v", scenariosRoot, e)
	}
	for _, s := range set.Scenarios {
		if strings.Contains(filepath.ToSlash(s.File), "/invalid/") {
			t.Errorf("loaded %s", s.File)
		}
	}
	set, err = loader(t, scenariosRoot).LoadPaths(invalidRoot)
	if err != nil {
		t.Fatal(err)
	}
	if len(set.Scenarios) != 0 || len(set.Errors) < 10 {
		t.Errorf("loading %s itself: %d scenarios, %d errors; want none and every case", invalidRoot, len(set.Scenarios),
			len(set.Errors))
	}
	// A nested folder named invalid is skipped too.
	root := t.TempDir()
	write(t, root, "routing/demo.yaml", validScenario)
	write(t, root, "routing/invalid/broken.yaml", "name: [\n")
	set, err = loader(t, root).LoadPaths(root)
	if err != nil {
		t.Fatal(err)
	}
	if len(set.Scenarios) != 1 || len(set.Errors) != 0 {
		t.Errorf("%d scenarios, errors %v; want demo alone", len(set.Scenarios), set.Errors)
	}
}
