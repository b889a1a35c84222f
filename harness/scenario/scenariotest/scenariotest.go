// Package scenariotest loads scenarios for tests: the behavior catalog and the scenario
// files, failing the test when either cannot be read.
package scenariotest

import (
	"testing"

	"github.com/egharness/egharness/harness/catalog"
	"github.com/egharness/egharness/harness/scenario"
)

// Loader is a scenario.Loader with the behavior catalog, for scenarios under root.
func Loader(tb testing.TB, root string) scenario.Loader {
	tb.Helper()
	cat, err := catalog.Load()
	if err != nil {
		tb.Fatal(err)
	}
	return scenario.Loader{Catalog: cat, Root: root}
}

// Load loads the scenarios at paths (root itself when none is given) of the tree at root.
// Files that do not load are in the set's Errors; a path that cannot be read fails tb.
func Load(tb testing.TB, root string, paths ...string) *scenario.Set {
	tb.Helper()
	if len(paths) == 0 {
		paths = []string{root}
	}
	set, err := Loader(tb, root).LoadPaths(paths...)
	if err != nil {
		tb.Fatal(err)
	}
	return set
}
