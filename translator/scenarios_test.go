package translator_test

import (
	"testing"

	"github.com/egharness/egharness/harness/scenario"
	"github.com/egharness/egharness/harness/scenario/scenariotest"
)

// allScenarios loads every scenario of the repository; the tests of this package translate
// them as a corpus of realistic inputs.
func allScenarios(tb testing.TB) []*scenario.Scenario {
	tb.Helper()
	set := scenariotest.Load(tb, "../scenarios")
	for _, e := range set.Errors {
		tb.Errorf("scenario does not load: %v", e)
	}
	if len(set.Scenarios) == 0 {
		tb.Fatal("no scenarios under ../scenarios")
	}
	return set.Scenarios
}
