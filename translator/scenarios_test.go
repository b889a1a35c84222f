package translator_test

import (
	"testing"

	"github.com/egharness/egharness/harness/catalog"
	"github.com/egharness/egharness/harness/scenario"
)

// allScenarios loads every scenario of the repository; the tests of this package translate
// them as a corpus of realistic inputs.
func allScenarios(tb testing.TB) []*scenario.Scenario {
	tb.Helper()
	cat, err := catalog.Load()
	if err != nil {
		tb.Fatal(err)
	}
	set, err := scenario.Loader{Catalog: cat, Root: "../scenarios"}.LoadPaths("../scenarios")
	if err != nil {
		tb.Fatal(err)
	}
	for _, e := range set.Errors {
		tb.Errorf("scenario does not load: %v", e)
	}
	if len(set.Scenarios) == 0 {
		tb.Fatal("no scenarios under ../scenarios")
	}
	return set.Scenarios
}
