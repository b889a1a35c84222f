package runner

import (
	"github.com/egharness/egharness/harness/catalog"
	"github.com/egharness/egharness/harness/scenario"
)

// Coverage is which behavior IDs the scenario set covers.
type Coverage struct {
	Total     int
	ByID      map[string][]string // ID → scenario names, in set order
	Uncovered []string            // in catalog order
}

// Covered is the number of IDs with at least one scenario.
func (c Coverage) Covered() int { return c.Total - len(c.Uncovered) }

// CoverageOf computes coverage of the catalog by the scenarios.
func CoverageOf(cat *catalog.Catalog, set []*scenario.Scenario) Coverage {
	c := Coverage{Total: len(cat.Behaviors), ByID: map[string][]string{}}
	for _, s := range set {
		for _, id := range s.Covers {
			c.ByID[id] = append(c.ByID[id], s.Name)
		}
	}
	for _, id := range cat.IDs() {
		if len(c.ByID[id]) == 0 {
			c.Uncovered = append(c.Uncovered, id)
		}
	}
	return c
}
