package main

import (
	"fmt"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/egharness/egharness/harness/runner"
	"github.com/egharness/egharness/translator/resource"
)

func newCoverageCmd() *cobra.Command {
	var uncoveredOnly bool
	cmd := &cobra.Command{
		Use:   "coverage [paths...]",
		Short: "List each behavior ID with the scenarios that cover it, and the IDs nobody covers",
		Example: `  egharness coverage
  egharness coverage --uncovered
  egharness coverage scenarios/policy`,
		RunE: func(cmd *cobra.Command, paths []string) error {
			cat, set, proj, err := loadScenarios(paths, resource.Limits{})
			if err != nil {
				return err
			}
			c := runner.CoverageOf(cat, set.Scenarios, goldenIn(proj.golden))
			w := cmd.OutOrStdout()
			tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
			fmt.Fprintln(tw, "ID\tAREA\tUPGRADE\tCOVERED BY\tSCENARIOS")
			how := map[string]string{}
			for _, id := range c.GoldenOnly {
				how[id] = "goldens only"
			}
			for _, id := range c.LabelOnly {
				how[id] = "labels only"
			}
			for _, id := range c.Uncovered {
				how[id] = "-- not covered --"
			}
			for _, b := range cat.Behaviors {
				h, weak := how[b.ID]
				if uncoveredOnly && !weak {
					continue
				}
				if !weak {
					h = "assertion"
				}
				// The scenarios that assert the ID, then those that only name it.
				var names []string
				asserted := map[string]bool{}
				for _, n := range c.Asserted[b.ID] {
					asserted[n] = true
					names = append(names, n)
				}
				for _, n := range c.ByID[b.ID] {
					if !asserted[n] {
						names = append(names, n+" (label)")
					}
				}
				up := ""
				if b.Upgrade {
					up = "yes"
				}
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", b.ID, b.Area, up, h, strings.Join(names, ", "))
			}
			tw.Flush()
			printLoadErrors(w, set)
			fmt.Fprintf(w,
				"\n%d of %d behavior IDs covered by assertion, %d only by goldens, %d only by labels, %d not at all\n", c.Covered(),
				c.Total, len(c.GoldenOnly), len(c.LabelOnly), len(c.Uncovered))
			if len(set.Errors) > 0 {
				return &exitError{code: exitBad, err: fmt.Errorf("%d scenario file(s) could not be loaded", len(set.Errors))}
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&uncoveredOnly, "uncovered", false, "list only the IDs no expectation asserts")
	return cmd
}
