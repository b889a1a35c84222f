package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/egharness/egharness/harness/catalog"
	"github.com/egharness/egharness/harness/runner"
	"github.com/egharness/egharness/harness/scenario"
	"github.com/egharness/egharness/translator/resource"
)

// The folders of a project, below its root: scenarios (a scenario's area is its first folder
// below it) and the golden files.
const (
	scenariosDir = "scenarios"
	goldenDir    = "golden"
)

// rootFlag is the global --root: the project root, when it is not found from the paths.
var rootFlag string

// project is where a run's scenarios and goldens live. Paths are relative to the current
// directory when inside it (so `make run` prints scenarios/...), else absolute.
type project struct {
	root, scenarios, golden string
}

// findProject resolves the project root: --root, else from the scenario paths given (the
// folder above the nearest enclosing folder named scenarios, else the nearest folder above
// the path that holds a scenarios folder), else from the current directory upwards, as git
// finds .git. It never assumes the current directory is the root: run from another folder,
// golden/ is the project's, not a stray one there.
func findProject(paths []string) (project, error) {
	var root string
	switch {
	case rootFlag != "":
		info, err := os.Stat(rootFlag)
		if err != nil {
			return project{}, badInput("--root: %v", err)
		}
		if !info.IsDir() {
			return project{}, badInput("--root %s: not a folder", rootFlag)
		}
		root = abs(rootFlag)
	case len(paths) > 0:
		for _, p := range paths {
			r, err := rootOf(p)
			if err != nil {
				return project{}, err
			}
			if root != "" && r != root {
				return project{},
					badInput("%s and %s belong to two projects (%s and %s); run them apart or set --root", paths[0], p, display(root),
						display(r))
			}
			root = r
		}
	default:
		wd, err := os.Getwd()
		if err != nil {
			return project{}, err
		}
		root = upTo(wd, func(d string) bool { return isDir(filepath.Join(d, scenariosDir)) })
		if root == "" {
			return project{},
				badInput(
					"no %s/ folder in %s or above it: run from inside an egharness project, name scenario "+
						"files or folders, or set --root",
					scenariosDir, wd)
		}
	}
	return project{root: display(root), scenarios: display(filepath.Join(root, scenariosDir)),
		golden: display(filepath.Join(root, goldenDir))}, nil
}

// rootOf finds the project root of one scenario path.
func rootOf(p string) (string, error) {
	if _, err := os.Stat(p); err != nil {
		return "", badInput("%v", err)
	}
	a := abs(p)
	if d := upTo(a, func(d string) bool { return filepath.Base(d) == scenariosDir }); d != "" {
		return filepath.Dir(d), nil
	}
	if d := upTo(a, func(d string) bool { return isDir(filepath.Join(d, scenariosDir)) }); d != "" {
		return d, nil
	}
	return "", badInput("%s: no project root above it (a folder holding %s/); set --root", p, scenariosDir)
}

// upTo returns the first of p and its parents for which ok holds, or "".
func upTo(p string, ok func(string) bool) string {
	for d := p; ; {
		if ok(d) {
			return d
		}
		parent := filepath.Dir(d)
		if parent == d {
			return ""
		}
		d = parent
	}
}

func isDir(p string) bool {
	info, err := os.Stat(p)
	return err == nil && info.IsDir()
}

func abs(p string) string {
	if a, err := filepath.Abs(p); err == nil {
		return a
	}
	return filepath.Clean(p)
}

// display is p relative to the current directory when it is inside it, else absolute.
func display(p string) string {
	wd, err := os.Getwd()
	if err != nil {
		return p
	}
	rel, err := filepath.Rel(wd, p)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return p
	}
	return rel
}

// loadScenarios loads the scenarios under paths (default: the project's scenarios/), each
// file within limits. Paths that hold no scenario file at all are an error: a run of
// nothing must not read as a pass.
func loadScenarios(paths []string, limits resource.Limits) (*catalog.Catalog, *scenario.Set, project, error) {
	proj, err := findProject(paths)
	if err != nil {
		return nil, nil, proj, err
	}
	cat, err := catalog.Load()
	if err != nil {
		return nil, nil, proj, err
	}
	load := paths
	if len(load) == 0 {
		load = []string{proj.scenarios}
	}
	set, err := scenario.Loader{Catalog: cat, Root: proj.scenarios, Limits: limits}.LoadPaths(load...)
	if err != nil {
		return nil, nil, proj, badInput("%v", err)
	}
	if len(set.Scenarios) == 0 && len(set.Errors) == 0 {
		return nil, nil, proj,
			badInput("no scenario files in %s (a scenario is a .yaml file; folders named %s are skipped unless named)",
				strings.Join(load, ", "), scenario.InvalidDir)
	}
	return cat, set, proj, nil
}

// selectJobs is runner.Select that refuses a --focus ID the catalog does not have, and an
// empty selection, saying which filter (or combination) matched nothing.
func selectJobs(cat *catalog.Catalog, set *scenario.Set, ro runner.Options) ([]runner.Job, error) {
	for _, id := range ro.Focus {
		if cat.Get(id) == nil {
			return nil, badInput("--focus %s: no such behavior ID", id)
		}
	}
	jobs := runner.Select(set.Scenarios, ro)
	if len(jobs) > 0 {
		return jobs, nil
	}
	if len(set.Scenarios) == 0 {
		// Every file failed to load: that is reported (and exits 2) as load errors.
		return nil, nil
	}
	type filter struct {
		flag string
		vals []string
		opts runner.Options
	}
	var filters []filter
	if len(ro.Labels) > 0 {
		filters = append(filters, filter{"--label", ro.Labels, runner.Options{Labels: ro.Labels}})
	}
	if len(ro.Focus) > 0 {
		filters = append(filters, filter{"--focus", ro.Focus, runner.Options{Focus: ro.Focus}})
	}
	if len(ro.Profiles) > 0 {
		filters = append(filters, filter{"--profile", ro.Profiles, runner.Options{Profiles: ro.Profiles}})
	}
	var none, all []string
	for _, f := range filters {
		s := f.flag + " " + strings.Join(f.vals, ",")
		all = append(all, s)
		if len(runner.Select(set.Scenarios, f.opts)) == 0 {
			none = append(none, s)
		}
	}
	n := fmt.Sprintf("%d scenario(s) loaded", len(set.Scenarios))
	switch {
	case len(none) > 0:
		return nil, badInput("nothing to run: %s matches none of the %s", strings.Join(none, " and "), n)
	case len(all) > 0:
		return nil, badInput("nothing to run: %s match no scenario together (each matches some of the %s)",
			strings.Join(all, " and "), n)
	}
	return nil, badInput("nothing to run: the %s have no profile to run", n)
}

// ran is the scenarios of the outcomes, in order, once each.
func ran(outcomes []*runner.Outcome) []*scenario.Scenario {
	var out []*scenario.Scenario
	seen := map[*scenario.Scenario]bool{}
	for _, o := range outcomes {
		if !seen[o.Scenario] {
			seen[o.Scenario] = true
			out = append(out, o.Scenario)
		}
	}
	return out
}

func printLoadErrors(w io.Writer, set *scenario.Set) {
	if len(set.Errors) == 0 {
		return
	}
	fmt.Fprintf(w, "\nScenarios that could not be loaded (%d):\n", len(set.Errors))
	for _, e := range set.Errors {
		for _, m := range e.Msgs {
			fmt.Fprintf(w, "  %s\n", m)
		}
	}
}
