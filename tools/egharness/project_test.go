package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A selection that matches nothing is an error naming the filter, not "0 passed".
func TestRunEmptySelection(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--label", "no-such-label"}, "nothing to run: --label no-such-label matches none of the "},
		{[]string{"--label", "lua", "--focus", "TLS-01"},
			"nothing to run: --label lua and --focus TLS-01 match no scenario together"},
		{[]string{"--focus", "NOPE-99"}, "--focus NOPE-99: no such behavior ID"},
		{[]string{emptyScenarios(t)}, "no scenario files in "},
		{[]string{t.TempDir()}, ": no project root above it (a folder holding scenarios/); set --root"},
	} {
		for _, cmd := range []string{"run", "report"} {
			args := append([]string{cmd}, tc.args...)
			if cmd == "report" {
				args = append(args, "--format", "junit")
			}
			code, out, msg := execute(t, "", args...)
			if code != exitBad || !strings.Contains(msg, tc.want) {
				t.Errorf("%v: exit %d, %q; want 2 and %q", args, code, msg, tc.want)
			}
			if strings.Contains(out, "passed") {
				t.Errorf("%v: printed a result for nothing:\n%s", args, out)
			}
		}
	}
}

// Coverage is that of the scenarios that ran, and says so.
func TestRunCoverageOfSelection(t *testing.T) {
	code, out, msg := execute(t, "", "run", "--focus", "RT-01", "--label", "routing")
	if code != 0 {
		t.Fatalf("exit %d: %s\n%s", code, msg, out)
	}
	if !strings.Contains(out, "Behavior coverage of the scenarios selected: ") || strings.Contains(out, "86 of 86") {
		t.Errorf("coverage line:\n%s", grepLine(out, "coverage"))
	}
}

// copyScenario puts a copy of the repository's scenario rel under root/scenarios/.
func copyScenario(t *testing.T, root, rel string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("../../scenarios", rel))
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(root, "scenarios", rel)
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// golden/ and scenarios/ are the project's, found from the scenario's own path, whatever the
// current folder: from elsewhere, goldens are found (not "missing") and golden --update
// writes into the project, not into the current folder.
func TestProjectRootFromScenarioPath(t *testing.T) {
	repo, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	proj := t.TempDir()
	scen := copyScenario(t, proj, "routing/backend-ref-errors.yaml")
	elsewhere := t.TempDir()
	t.Chdir(elsewhere)

	// The repository's own scenarios, named by path from another folder, meet their goldens.
	code, out, msg := execute(t, "", "run", filepath.Join(repo, "scenarios", "routing", "backend-ref-errors.yaml"))
	if code != 0 || strings.Contains(out, "missing") {
		t.Fatalf("run from another folder: exit %d %s\n%s", code, msg, out)
	}
	// A project of its own: --update writes proj/golden, and a check then passes. (CI
	// refuses --update for the repository's goldens; this writes a temporary project's.)
	t.Setenv("CI", "")
	if code, out, msg = execute(t, "", "golden", "--update", scen); code != 0 {
		t.Fatalf("golden --update: exit %d %s\n%s", code, msg, out)
	}
	if _, err := os.Stat(filepath.Join(elsewhere, "golden")); !os.IsNotExist(err) {
		t.Errorf("golden --update wrote a golden/ folder in the current directory (%v)", err)
	}
	if _, err := os.Stat(filepath.Join(proj, "golden", "routing", "backend-ref-errors")); err != nil {
		t.Errorf("no goldens in the project: %v\n%s", err, out)
	}
	if code, out, msg = execute(t, "", "golden", "--root", proj); code != 0 || !strings.Contains(out, "up to date") {
		t.Errorf("golden --root: exit %d %s\n%s", code, msg, out)
	}
	// With no paths and no project above the current folder, the message says what to do.
	if code, _, msg = execute(t, "", "run"); code != exitBad || !strings.Contains(msg, "no scenarios/ folder in ") {
		t.Errorf("run with no project: exit %d %q", code, msg)
	}
	// From a folder inside the project, the project is found upwards.
	t.Chdir(filepath.Join(proj, "scenarios", "routing"))
	if code, out, msg = execute(t, "", "run"); code != 0 || strings.Contains(out, "missing") {
		t.Errorf("run inside the project: exit %d %s\n%s", code, msg, out)
	}
}

func emptyScenarios(t *testing.T) string {
	dir := filepath.Join(t.TempDir(), "scenarios", "empty")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

// The golden folder follows the scenario's path, however deep (golden/<path>/<profile>), and
// golden --summary prints what its summary.txt holds.
func TestGoldenFolderFollowsPathAndSummary(t *testing.T) {
	proj := t.TempDir()
	scen := copyScenario(t, proj, "routing/weighted-canary.yaml")
	deep := filepath.Join(proj, "scenarios", "routing", "weights", "weighted-canary.yaml")
	if err := os.MkdirAll(filepath.Dir(deep), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(scen, deep); err != nil {
		t.Fatal(err)
	}
	t.Setenv("CI", "")
	if code, out, msg := execute(t, "", "golden", "--update", deep); code != 0 {
		t.Fatalf("golden --update: exit %d %s\n%s", code, msg, out)
	}
	dir := filepath.Join(proj, "golden", "routing", "weights", "weighted-canary", "v1.9")
	summary, err := os.ReadFile(filepath.Join(dir, "summary.txt"))
	if err != nil {
		t.Fatalf("no summary where the path leads: %v", err)
	}
	if !strings.Contains(string(summary),
		"prefix /, header env = \"canary\" -> cluster httproute/default/checkout/rule/1\n") {
		t.Errorf("summary.txt:\n%s", summary)
	}
	code, out, msg := execute(t, "", "golden", "--summary", deep)
	if want := filepath.Join(dir, "summary.txt") + ":\n" + string(summary); code != 0 || out != want {
		t.Errorf("golden --summary: exit %d %s\n%s\nwant\n%s", code, msg, out, want)
	}
	if code, _, msg = execute(t, "", "golden", "--update", "--summary", deep); code != exitBad {
		t.Errorf("--update --summary: exit %d %q, want %d", code, msg, exitBad)
	}
}
