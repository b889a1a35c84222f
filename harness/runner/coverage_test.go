package runner

import (
	"reflect"
	"testing"

	"github.com/egharness/egharness/harness/catalog"
	"github.com/egharness/egharness/harness/scenario"
)

func TestCoverageByAssertion(t *testing.T) {
	cat := &catalog.Catalog{Behaviors: []catalog.Behavior{{ID: "A-01"}, {ID: "A-02"}, {ID: "A-03"}, {ID: "A-04"}}}
	asserted := &scenario.Scenario{Name: "asserted", Covers: []string{"A-01", "A-02"},
		Expect: scenario.Expect{XDS: []scenario.XDSExpect{{ID: "A-01", Kind: "Cluster", Name: "c"},
			{Kind: "Cluster", Name: "d"}}}}
	labelled := &scenario.Scenario{Name: "labelled", Covers: []string{"A-03"}}
	c := CoverageOf(cat, []*scenario.Scenario{asserted, labelled},
		func(s *scenario.Scenario) bool { return s.Name == "asserted" })
	if got, want := c.Asserted, map[string][]string{"A-01": {"asserted"}}; !reflect.DeepEqual(got, want) {
		t.Errorf("Asserted = %v, want %v", got, want)
	}
	if !reflect.DeepEqual(c.GoldenOnly, []string{"A-02"}) || !reflect.DeepEqual(c.LabelOnly, []string{"A-03"}) ||
		!reflect.DeepEqual(c.Uncovered, []string{"A-04"}) {
		t.Errorf("GoldenOnly %v, LabelOnly %v, Uncovered %v; want [A-02] [A-03] [A-04]", c.GoldenOnly, c.LabelOnly,
			c.Uncovered)
	}
	if c.Covered() != 1 || c.Labelled() != 3 {
		t.Errorf("Covered() = %d, Labelled() = %d; want 1 and 3", c.Covered(), c.Labelled())
	}
}
