// Command mutate is mutation testing of the reference translator with the goldens off: it
// copies the module to a temporary folder once, then applies each mutation listed in a
// data file (a file, a search string that must occur exactly once, its replacement) one at
// a time, builds egharness there and runs every scenario with --no-golden. A mutation is
// killed when the run fails, survives when it passes, is stale when its search string no
// longer occurs exactly once, and broken when the mutant does not build. Survivors that the
// data file explains (survives: why) are listed; unexplained survivors and stale mutations
// make the command exit 1, so the set stays true to the code.
//
//	go run ./tools/mutate [-f mutations/mutations.yaml] [-only id,id]
package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"sigs.k8s.io/yaml"
)

// Mutation is one entry of the data file.
type Mutation struct {
	ID   string `json:"id"`
	File string `json:"file"`
	// Search must occur exactly once in File; Replace takes its place.
	Search  string `json:"search"`
	Replace string `json:"replace"`
	// Breaks names the behavior IDs whose claim the mutation breaks.
	Breaks []string `json:"breaks"`
	// Survives, when set, explains why no offline expectation can catch the mutation.
	Survives string `json:"survives,omitempty"`
}

type file struct {
	Mutations []Mutation `json:"mutations"`
}

type result struct {
	m       Mutation
	verdict string // killed, SURVIVED, survives (explained), stale, broken
	detail  string
	took    time.Duration
}

func main() {
	data := flag.String("f", "mutations/mutations.yaml", "the mutations data file")
	only := flag.String("only", "", "comma-separated mutation IDs to run (default: all)")
	keep := flag.Bool("keep", false, "keep the temporary copy of the module")
	flag.Parse()
	if err := run(*data, *only, *keep, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "mutate:", err)
		os.Exit(1)
	}
}

func run(dataPath, only string, keep bool, w io.Writer) error {
	b, err := os.ReadFile(dataPath)
	if err != nil {
		return err
	}
	var f file
	if err := yaml.UnmarshalStrict(b, &f); err != nil {
		return fmt.Errorf("%s: %w", dataPath, err)
	}
	if err := validate(f.Mutations); err != nil {
		return fmt.Errorf("%s: %w", dataPath, err)
	}
	want := map[string]bool{}
	for _, id := range strings.Split(only, ",") {
		if id = strings.TrimSpace(id); id != "" {
			want[id] = true
		}
	}
	root, err := os.Getwd()
	if err != nil {
		return err
	}
	tmp, err := os.MkdirTemp("", "egharness-mutate-")
	if err != nil {
		return err
	}
	if keep {
		fmt.Fprintln(w, "copy:", tmp)
	} else {
		defer os.RemoveAll(tmp)
	}
	if err := copyTree(root, tmp); err != nil {
		return fmt.Errorf("copying the module: %w", err)
	}
	bin := filepath.Join(tmp, "bin", "egharness-mutant")
	// The unmutated tree must pass, or every mutation would look killed.
	if out, err := buildAndRun(tmp, bin); err != nil {
		return fmt.Errorf("the unmutated tree does not pass with goldens off: %v\n%s", err, tail(out, 20))
	}
	var results []result
	for _, m := range f.Mutations {
		if len(want) > 0 && !want[m.ID] {
			continue
		}
		start := time.Now()
		r := mutate(tmp, bin, m)
		r.took = time.Since(start).Round(time.Second)
		fmt.Fprintf(w, "%-34s %-9s %s\n", m.ID, r.verdict, r.detail)
		results = append(results, r)
	}
	return summarize(w, results)
}

func validate(ms []Mutation) error {
	seen := map[string]bool{}
	for i, m := range ms {
		switch {
		case m.ID == "":
			return fmt.Errorf("mutations[%d]: id is required", i)
		case seen[m.ID]:
			return fmt.Errorf("mutations[%d]: id %s is used twice", i, m.ID)
		case m.File == "" || m.Search == "":
			return fmt.Errorf("mutation %s: file and search are required", m.ID)
		case m.Search == m.Replace:
			return fmt.Errorf("mutation %s: replace equals search", m.ID)
		case len(m.Breaks) == 0:
			return fmt.Errorf("mutation %s: breaks names the behavior IDs it breaks", m.ID)
		}
		seen[m.ID] = true
	}
	return nil
}

// mutate applies m in the copy, builds, runs and restores the file.
func mutate(tmp, bin string, m Mutation) result {
	path := filepath.Join(tmp, m.File)
	orig, err := os.ReadFile(path)
	if err != nil {
		return result{m: m, verdict: "stale", detail: err.Error()}
	}
	if n := bytes.Count(orig, []byte(m.Search)); n != 1 {
		return result{m: m, verdict: "stale", detail: fmt.Sprintf("search string occurs %d times in %s", n, m.File)}
	}
	if err := os.WriteFile(path, bytes.Replace(orig, []byte(m.Search), []byte(m.Replace), 1), 0o644); err != nil {
		return result{m: m, verdict: "broken", detail: err.Error()}
	}
	defer os.WriteFile(path, orig, 0o644)
	out, err := buildAndRun(tmp, bin)
	var ee *exec.ExitError
	switch {
	case err == nil && m.Survives != "":
		return result{m: m, verdict: "survives", detail: "(explained) " + m.Survives}
	case err == nil:
		return result{m: m, verdict: "SURVIVED", detail: "no scenario failed with goldens off"}
	case errors.As(err, &ee) && ee.ExitCode() == 1:
		return result{m: m, verdict: "killed", detail: failedScenarios(out)}
	default:
		return result{m: m, verdict: "broken", detail: fmt.Sprintf("%v: %s", err, tail(out, 3))}
	}
}

// buildAndRun builds egharness in dir and runs every scenario without goldens.
func buildAndRun(dir, bin string) ([]byte, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	build := exec.CommandContext(ctx, "go", "build", "-buildvcs=false", "-o", bin, "./tools/egharness")
	build.Dir = dir
	if out, err := build.CombinedOutput(); err != nil {
		return out, fmt.Errorf("build: %w", err)
	}
	runCmd := exec.CommandContext(ctx, bin, "run", "--no-golden")
	runCmd.Dir = dir
	return runCmd.CombinedOutput()
}

// failedScenarios names the failed scenario runs of a run's output.
func failedScenarios(out []byte) string {
	var names []string
	for _, l := range strings.Split(string(out), "\n") {
		f := strings.Fields(l)
		if len(f) >= 4 && f[3] == "FAIL" {
			names = append(names, f[0]+"["+f[2]+"]")
		}
	}
	if len(names) == 0 {
		return "run failed: " + tail(out, 2)
	}
	if len(names) > 4 {
		return fmt.Sprintf("%s and %d more", strings.Join(names[:4], ", "), len(names)-4)
	}
	return strings.Join(names, ", ")
}

func summarize(w io.Writer, rs []result) error {
	count := map[string]int{}
	var bad []string
	for _, r := range rs {
		count[r.verdict]++
		if r.verdict == "SURVIVED" || r.verdict == "stale" || r.verdict == "broken" {
			bad = append(bad, r.m.ID+" ("+r.verdict+")")
		}
	}
	fmt.Fprintf(w, "\n%d mutations: %d killed, %d survived, %d explained survivors, %d stale, %d broken\n",
		len(rs), count["killed"], count["SURVIVED"], count["survives"], count["stale"], count["broken"])
	if len(bad) > 0 {
		return fmt.Errorf("%s", strings.Join(bad, ", "))
	}
	return nil
}

// copyTree copies the module's source (no .git, goldens, binaries or peers) into dst.
func copyTree(src, dst string) error {
	skip := map[string]bool{".git": true, "golden": true, "bin": true, "peers": true, "_artifacts": true}
	return filepath.WalkDir(src, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, path)
		if skip[rel] && !d.IsDir() {
			return nil // a worktree's .git is a file
		}
		if d.IsDir() {
			if skip[rel] {
				return filepath.SkipDir
			}
			return os.MkdirAll(filepath.Join(dst, rel), 0o755)
		}
		if !d.Type().IsRegular() {
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dst, rel), b, 0o644)
	})
}

func tail(b []byte, n int) string {
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, " | ")
}
