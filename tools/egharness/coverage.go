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
			cat, set, _, err := loadScenarios(paths, resource.Limits{})
			if err != nil {
				return err
			}
			c := runner.CoverageOf(cat, set.Scenarios)
			w := cmd.OutOrStdout()
			tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
			fmt.Fprintln(tw, "ID\tAREA\tUPGRADE\tSCENARIOS")
			for _, b := range cat.Behaviors {
				names := c.ByID[b.ID]
				if uncoveredOnly && len(names) > 0 {
					continue
				}
				list := strings.Join(names, ", ")
				if list == "" {
					list = "-- not covered --"
				}
				up := ""
				if b.Upgrade {
					up = "yes"
				}
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", b.ID, b.Area, up, list)
			}
			tw.Flush()
			printLoadErrors(w, set)
			fmt.Fprintf(w, "\n%d of %d behavior IDs covered\n", c.Covered(), c.Total)
			if len(set.Errors) > 0 {
				return &exitError{code: exitBad, err: fmt.Errorf("%d scenario file(s) could not be loaded", len(set.Errors))}
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&uncoveredOnly, "uncovered", false, "list only the IDs nobody covers")
	return cmd
}
