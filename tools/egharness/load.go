package main

import (
	"fmt"
	"io"

	"github.com/egharness/egharness/harness/catalog"
	"github.com/egharness/egharness/harness/scenario"
	"github.com/egharness/egharness/translator/resource"
)

// Where scenarios and goldens live, relative to the repository root (the working directory
// of `make run` and `go run ./tools/egharness`).
const (
	defaultScenarios = "scenarios"
	defaultGolden    = "golden"
)

// loadScenarios loads the scenarios under paths (default: scenarios/), each file within
// limits.
func loadScenarios(paths []string, limits resource.Limits) (*catalog.Catalog, *scenario.Set, error) {
	cat, err := catalog.Load()
	if err != nil {
		return nil, nil, err
	}
	if len(paths) == 0 {
		paths = []string{defaultScenarios}
	}
	set, err := scenario.Loader{Catalog: cat, Root: defaultScenarios, Limits: limits}.LoadPaths(paths...)
	if err != nil {
		return nil, nil, badInput("%v", err)
	}
	return cat, set, nil
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
