package main

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/egharness/egharness/harness/golden"
	"github.com/egharness/egharness/harness/impl"
	"github.com/egharness/egharness/harness/runner"
	"github.com/egharness/egharness/translator/resource"
)

func newGoldenCmd() *cobra.Command {
	var update, summary bool
	cmd := &cobra.Command{
		Use:   "golden [--update | --summary] [paths...]",
		Short: "Check golden xDS and status files, or rewrite them",
		Long: `golden renders every scenario under every profile with the reference translator and
compares the result with golden/<path>/<profile>/, <path> the scenario file's path under
scenarios/ without .yaml: summary.txt (the readable view: listeners, routes as match -> action,
clusters and endpoints, secrets) and the byte-exact protojson and statuses. It also lists
golden files no scenario renders any more (stale).

--summary prints the summaries of the scenarios given (what summary.txt holds) and checks
nothing.

--update rewrites the files and removes stale ones. Read the diff (git diff golden/) before you
commit: a golden is a claim about EG's behavior. --update is refused when CI is set.`,
		Example: `  egharness golden
  egharness golden --update scenarios/routing/request-mirror.yaml && git diff golden/
  egharness golden --summary scenarios/routing/weighted-canary.yaml
  egharness golden --root ~/src/my-scenarios`,
		RunE: func(cmd *cobra.Command, paths []string) error {
			if update && os.Getenv("CI") != "" {
				return badInput("golden --update is refused when CI is set: goldens are updated by a person who reads the diff")
			}
			if update && summary {
				return badInput("golden: --update and --summary do not go together")
			}
			_, set, proj, err := loadScenarios(paths, resource.Limits{})
			if err != nil {
				return err
			}
			w := cmd.OutOrStdout()
			ro := runner.Options{Impl: impl.Reference{}}
			jobs := runner.Select(set.Scenarios, ro)
			outcomes := runner.Run(cmd.Context(), jobs, ro)
			want := map[string]bool{}
			problems, changed := 0, 0
			for _, o := range outcomes {
				dir := golden.Dir(proj.golden, o.Scenario.Path, o.Profile)
				want[filepath.Clean(dir)] = true
				if o.Err != nil {
					fmt.Fprintf(w, "%s [%s]: cannot translate: %v\n", o.Scenario.Name, o.Profile, o.Err)
					problems++
					continue
				}
				files, err := golden.Render(o.Result)
				if err != nil {
					return err
				}
				if summary {
					fmt.Fprintf(w, "%s:\n%s", filepath.Join(dir, golden.SummaryFile), files[golden.SummaryFile])
					continue
				}
				if update {
					ch, err := golden.Write(dir, files)
					if err != nil {
						return err
					}
					if ch {
						changed++
						fmt.Fprintf(w, "updated %s\n", dir)
					}
					continue
				}
				for _, d := range golden.Compare(dir, files) {
					fmt.Fprintf(w, "%s: %s\n", d.File, d.Msg)
					problems++
				}
			}
			// Stale files are only judged over the whole set: a partial run would call
			// everything else stale.
			if len(paths) == 0 && !summary {
				stale, err := golden.Stale(proj.golden, want)
				if err != nil {
					return err
				}
				for _, s := range stale {
					if update {
						if err := os.Remove(s); err != nil {
							return err
						}
						fmt.Fprintf(w, "removed stale %s\n", s)
						continue
					}
					fmt.Fprintf(w, "%s: stale (no scenario renders it; golden --update removes it)\n", s)
					problems++
				}
			}
			printLoadErrors(w, set)
			switch {
			case summary: // the summaries are the output
			case update:
				fmt.Fprintf(w, "%d golden folder(s) changed; review them with: git diff %s\n", changed, proj.golden)
			case problems == 0:
				fmt.Fprintf(w, "%d golden folder(s) up to date\n", len(outcomes))
			}
			if len(set.Errors) > 0 {
				return &exitError{code: exitBad, err: fmt.Errorf("%d scenario file(s) could not be loaded", len(set.Errors))}
			}
			if problems > 0 {
				return &exitError{code: exitFail, err: fmt.Errorf("%d golden problem(s)", problems)}
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&update, "update", false, "rewrite the golden files")
	cmd.Flags().BoolVar(&summary, "summary", false,
		"print the summaries (summary.txt) of the scenarios given instead of checking")
	return cmd
}
