package runner

import (
	"github.com/egharness/egharness/harness/catalog"
	"github.com/egharness/egharness/harness/scenario"
)

// Coverage is which behavior IDs the scenario set covers, and how. An ID is covered by
// assertion when some scenario has an expectation tied to it (scenario.Assertions); an ID
// that scenarios only name in covers is covered by goldens only (a covering scenario has
// golden files, which `make golden` rewrites from the code under test) or by labels only.
type Coverage struct {
	Total int
	ByID  map[string][]string // ID → scenarios naming it in covers, in set order
	// Asserted is ID → scenarios with an expectation tied to it, in set order.
	Asserted map[string][]string
	// Uncovered: no scenario names the ID; GoldenOnly and LabelOnly: scenarios name it but
	// none asserts it, with or without goldens. All in catalog order.
	Uncovered  []string
	GoldenOnly []string
	LabelOnly  []string
}

// Covered is the number of IDs covered by assertion.
func (c Coverage) Covered() int {
	return c.Total - len(c.Uncovered) - len(c.GoldenOnly) - len(c.LabelOnly)
}

// Labelled is the number of IDs that some scenario names in covers.
func (c Coverage) Labelled() int { return c.Total - len(c.Uncovered) }

// CoverageOf computes coverage of the catalog by the scenarios. hasGolden reports whether a
// scenario has golden files (nil: none has).
func CoverageOf(cat *catalog.Catalog, set []*scenario.Scenario, hasGolden func(*scenario.Scenario) bool) Coverage {
	c := Coverage{Total: len(cat.Behaviors), ByID: map[string][]string{}, Asserted: map[string][]string{}}
	golden := map[string]bool{}
	for _, s := range set {
		asserted := s.Assertions()
		g := hasGolden != nil && hasGolden(s)
		for _, id := range s.Covers {
			c.ByID[id] = append(c.ByID[id], s.Name)
			if asserted[id] > 0 {
				c.Asserted[id] = append(c.Asserted[id], s.Name)
			}
			if g {
				golden[id] = true
			}
		}
	}
	for _, id := range cat.IDs() {
		switch {
		case len(c.ByID[id]) == 0:
			c.Uncovered = append(c.Uncovered, id)
		case len(c.Asserted[id]) > 0:
		case golden[id]:
			c.GoldenOnly = append(c.GoldenOnly, id)
		default:
			c.LabelOnly = append(c.LabelOnly, id)
		}
	}
	return c
}
