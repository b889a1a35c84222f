package main

import (
	"context"
	"fmt"
	"io"
	"os"

	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/egharness/egharness/harness/check"
	"github.com/egharness/egharness/harness/envoytier"
	"github.com/egharness/egharness/harness/golden"
	"github.com/egharness/egharness/harness/impl"
	"github.com/egharness/egharness/harness/runner"
	"github.com/egharness/egharness/harness/scenario"
	"github.com/egharness/egharness/translator/profile"
	"github.com/egharness/egharness/translator/resource"
)

func newRunCmd() *cobra.Command {
	var opts struct {
		impl     string
		profiles []string
		labels   []string
		focus    []string
		parallel int
		verbose  bool
		noGolden bool
		peersDir string
		caps     []string
		envoy    string
		limits   *resource.Limits

		execTimeout time.Duration
	}
	cmd := &cobra.Command{
		Use:   "run [paths...]",
		Short: "Run scenarios and print results and behavior coverage",
		Long: `run loads every scenario under the given files or folders (default: scenarios/),
translates each under each of its profiles, checks admission, statuses, xDS facts, traffic
and (for the reference translator) golden files, then prints a result table, the failures,
and which behavior IDs are covered.

A scenario that cannot be loaded is reported with its file and line; the others still run.
Folders named invalid (scenarios/invalid: inputs that must fail to load) are skipped unless
named as a path. The --max-* flags bound every file read.

A selection (paths, --label, --focus, --profile) that matches no scenario exits 2 and says
which filter matched nothing; the coverage printed is that of the scenarios that ran.
golden/ and scenarios/ are the project's: --root, else found from the paths given (the
folder above their scenarios/ folder), else from the current folder upwards.

Ctrl-C or SIGTERM stops the run: no further scenario starts, the results of those that
finished are printed, and the exit status is 130 (SIGINT) or 143 (SIGTERM).`,
		Example: `  egharness run
  egharness run scenarios/routing --profile v1.9
  egharness run --focus RT-09 --label routing
  egharness run ~/src/egharness/scenarios/tls          # from any folder: that project's goldens
  egharness run --impl "exec:./my-adapter" --exec-timeout 10s
  egharness run --envoy peers/envoy/envoy/_bin/envoy -v`,
		RunE: func(cmd *cobra.Command, paths []string) error {
			im, err := openImpl(opts.impl, opts.caps, opts.profiles,
				impl.Options{Limits: *opts.limits, PeersDir: opts.peersDir, Timeout: opts.execTimeout})
			if err != nil {
				return err
			}
			cat, set, proj, err := loadScenarios(paths, *opts.limits)
			if err != nil {
				return err
			}
			ro := runner.Options{Impl: im, Profiles: opts.profiles, Labels: opts.labels, Focus: opts.focus,
				Parallel: opts.parallel}
			if !opts.noGolden {
				ro.GoldenRoot = proj.golden
			}
			jobs, err := selectJobs(cat, set, ro)
			if err != nil {
				return err
			}
			if opts.verbose {
				ro.Progress = func(done, total int, o *runner.Outcome) {
					fmt.Fprintf(cmd.ErrOrStderr(), "[%d/%d] %s %s %s\n", done, total, o.Scenario.Name, o.Profile, verdict(o))
				}
			}
			envoyBin, err := envoyFor(opts.envoy, im, proj.root)
			if err != nil {
				return err
			}
			ctx, interrupted := interruptible(cmd.Context())
			outcomes := runner.Run(ctx, jobs, ro)
			// The real Envoy tier follows the offline checks, under the same interruption.
			var envoySummary string
			var envoyErr error
			if envoyBin != "" && ctx.Err() == nil {
				envoySummary, envoyErr = runEnvoyTier(ctx, envoyBin, outcomes, opts.verbose, cmd.ErrOrStderr())
			}
			w := cmd.OutOrStdout()
			sig := interrupted()
			if sig != nil {
				fmt.Fprintf(w, "Interrupted by %s: %d of %d scenario runs finished; the results below are theirs.\n\n",
					signalName(sig), len(outcomes), len(jobs))
			} else if envoyErr != nil {
				return &exitError{code: exitFail, err: envoyErr}
			}
			failed := printOutcomes(w, outcomes)
			printLoadErrors(w, set)
			done := ran(outcomes)
			printCoverageSummary(w, runner.CoverageOf(cat, done, goldenIn(proj.golden)), len(paths) > 0 ||
				len(done) < len(set.Scenarios))
			if envoySummary != "" {
				fmt.Fprintf(w, "\n%s\n", envoySummary)
			}
			skipped := 0
			for _, o := range outcomes {
				if o.Skipped != "" {
					skipped++
				}
			}
			if skipped > 0 {
				fmt.Fprintf(w, "\n%d passed, %d failed, %d skipped\n", len(outcomes)-failed-skipped, failed+len(set.Errors),
					skipped)
			} else {
				fmt.Fprintf(w, "\n%d passed, %d failed\n", len(outcomes)-failed, failed+len(set.Errors))
			}
			switch {
			case sig != nil:
				return &exitError{code: signalExit(sig),
					err: fmt.Errorf("interrupted by %s after %d of %d scenario runs", signalName(sig), len(outcomes), len(jobs))}
			case len(set.Errors) > 0:
				return &exitError{code: exitBad, err: fmt.Errorf("%d scenario file(s) could not be loaded", len(set.Errors))}
			case failed > 0:
				return &exitError{code: exitFail, err: fmt.Errorf("%d of %d scenario runs failed", failed, len(outcomes))}
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&opts.impl, "impl", "reference", "implementation to test: reference, exec:COMMAND, egctl@VERSION")
	f.StringSliceVar(&opts.caps, "impl-capabilities", nil,
		"what an exec: implementation does not produce: no-admission, no-secrets, no-warnings")
	f.StringVar(&opts.peersDir, "peers-dir", "",
		"the `DIR` make peers installed egctl into (default $EGHARNESS_PEERS, else peers/)")
	f.StringSliceVar(&opts.profiles, "profile", nil, "only these profiles ("+strings.Join(profile.Names(), ", ")+")")
	f.StringSliceVar(&opts.labels, "label", nil, "only scenarios with one of these labels or areas")
	f.StringSliceVar(&opts.focus, "focus", nil, "only scenarios covering one of these behavior IDs")
	f.IntVar(&opts.parallel, "parallel", 0, "scenarios run at once (default: number of CPUs)")
	f.BoolVarP(&opts.verbose, "verbose", "v", false, "print each scenario as it finishes")
	f.BoolVar(&opts.noGolden, "no-golden", false, "skip golden file checks")
	f.DurationVar(&opts.execTimeout, "exec-timeout", time.Minute,
		"how long one translation by an exec: or egctl@ implementation may take")
	f.StringVar(&opts.envoy, "envoy", "",
		"after the offline checks, serve each scenario to the real Envoy binary at `PATH` and "+
			"replay its traffic (default $"+envoytier.EnvVar+" with --impl reference; make envoy installs one in peers/envoy)")
	opts.limits = addLimitFlags(f)
	return cmd
}

func verdict(o *runner.Outcome) string {
	switch {
	case o.Skipped != "":
		return "skip"
	case o.Err != nil:
		return "ERROR"
	case len(o.Failures) > 0:
		return "FAIL"
	case len(o.Explained) > 0:
		return "diverges"
	}
	return "pass"
}

// printOutcomes prints the table and the failures; it returns the number failed.
func printOutcomes(w io.Writer, outcomes []*runner.Outcome) int {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "SCENARIO\tAREA\tPROFILE\tRESULT\tCOVERS")
	failed := 0
	for _, o := range outcomes {
		if !o.Passed() {
			failed++
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", o.Scenario.Name, o.Scenario.Area, o.Profile, verdict(o),
			strings.Join(o.Scenario.Covers, ","))
	}
	tw.Flush()
	printSkipsAndDivergences(w, outcomes)
	if failed == 0 {
		return 0
	}
	fmt.Fprintf(w, "\nFailures:\n")
	for _, o := range outcomes {
		if o.Passed() {
			continue
		}
		fmt.Fprintf(w, "\n%s [%s] (%s)\n", o.Scenario.Name, o.Profile, o.Scenario.File)
		if o.Err != nil {
			fmt.Fprintf(w, "  error: %s\n", indent(o.Err.Error()))
		}
		for _, f := range o.Failures {
			fmt.Fprintf(w, "  %s: %s\n", f.Check, indent(f.String()))
		}
	}
	return failed
}

// printSkipsAndDivergences says why each skipped scenario was skipped and which recorded
// divergences explained differences, so no disagreement is silent.
func printSkipsAndDivergences(w io.Writer, outcomes []*runner.Outcome) {
	var skipped, diverged []*runner.Outcome
	for _, o := range outcomes {
		if o.Skipped != "" {
			skipped = append(skipped, o)
		}
		if len(o.Explained) > 0 {
			diverged = append(diverged, o)
		}
	}
	if len(skipped) > 0 {
		fmt.Fprintf(w, "\nSkipped (%d):\n", len(skipped))
		for _, o := range skipped {
			fmt.Fprintf(w, "  %s [%s]: %s\n", o.Scenario.Name, o.Profile, o.Skipped)
		}
	}
	if len(diverged) > 0 {
		fmt.Fprintf(w, "\nKnown divergences (%d):\n", len(diverged))
		for _, o := range diverged {
			for _, e := range o.Explained {
				fmt.Fprintf(w, "  %s [%s]: %s\n", o.Scenario.Name, o.Profile, indent(strings.TrimSpace(e.Divergence.Reason)))
				fmt.Fprintf(w, "    explains %d difference(s): %s\n", len(e.Items), indent(strings.Join(e.Items, "; ")))
			}
		}
	}
}

func indent(s string) string { return strings.ReplaceAll(s, "\n", "\n    ") }

// printCoverageSummary prints the coverage of the scenarios that ran, by assertion; partial
// says they are a selection (--label, --focus, --profile, paths) rather than every loaded
// scenario.
func printCoverageSummary(w io.Writer, c runner.Coverage, partial bool) {
	of := ""
	if partial {
		of = " of the scenarios selected"
	}
	fmt.Fprintf(w, "\nBehavior coverage%s: %d of %d IDs covered by assertion (%d named in covers)\n", of, c.Covered(),
		c.Total, c.Labelled())
	if len(c.GoldenOnly) > 0 {
		fmt.Fprintf(w, "Covered only by goldens (%d): %s\n", len(c.GoldenOnly), strings.Join(c.GoldenOnly, " "))
	}
	if len(c.LabelOnly) > 0 {
		fmt.Fprintf(w, "Covered only by labels (%d): %s\n", len(c.LabelOnly), strings.Join(c.LabelOnly, " "))
	}
	if len(c.Uncovered) > 0 {
		fmt.Fprintf(w, "Not covered (%d): %s\n", len(c.Uncovered), strings.Join(c.Uncovered, " "))
	}
}

// goldenIn reports whether the reference's golden files exist under root for a scenario (any
// profile): an ID asserted only there is covered by goldens alone.
func goldenIn(root string) func(*scenario.Scenario) bool {
	return func(s *scenario.Scenario) bool {
		for _, p := range s.ProfilesOrDefault() {
			if _, err := os.Stat(golden.Dir(root, s.Path, p)); err == nil {
				return true
			}
		}
		return false
	}
}

// envoyFor is the Envoy binary a run sends its traffic through: --envoy, else
// $EGHARNESS_ENVOY, else none (""). It serves the reference's translation, so --envoy takes
// only the reference implementation, and the variable, set for every run of a shell, is
// left unused by the runs of other implementations rather than refusing them.
func envoyFor(flag string, im impl.Implementation, root string) (string, error) {
	bin := flag
	if bin == "" {
		if !impl.CapabilitiesOf(im).Golden {
			return "", nil
		}
		bin = os.Getenv(envoytier.EnvVar)
	}
	if bin == "" {
		return "", nil
	}
	if !impl.CapabilitiesOf(im).Golden {
		return "", badInput("--envoy serves the reference translation: it runs with --impl reference only")
	}
	found, err := envoytier.Find(bin, root)
	if err != nil {
		return "", badInput("%v", err)
	}
	return found, nil
}

// runEnvoyTier serves every translated outcome to one real Envoy, one after another, and
// replays its traffic (package envoytier). A scenario Envoy refuses, or whose live answers
// disagree, gets an "envoy" failure, so the table and the totals count it. It returns the
// summary line; an error means the tier could not start at all.
func runEnvoyTier(ctx context.Context, bin string, outcomes []*runner.Outcome, verbose bool,
	progress io.Writer) (string, error) {
	tier, err := envoytier.Start(ctx, envoytier.Options{Envoy: bin})
	if err != nil {
		return "", fmt.Errorf("real Envoy tier: %w", err)
	}
	defer tier.Close()
	var outs []*envoytier.Outcome
	for i, o := range outcomes {
		if o.Result == nil || o.Err != nil || o.Skipped != "" {
			continue
		}
		eo := tier.Run(ctx, o.Scenario, o.Profile, o.Result)
		outs = append(outs, eo)
		o.Envoy = eo.Describe(true)
		if verbose {
			fmt.Fprintf(progress, "[envoy %d/%d %s] %s\n", i+1, len(outcomes), eo.Duration.Round(time.Millisecond),
				eo.Describe(true))
		}
		if !eo.Passed() {
			o.Failures = append(o.Failures, check.Failure{Check: "envoy", Msg: eo.Describe(false)})
		}
	}
	line := envoytier.Summarize(tier.Version(), outs).String()
	if n := tier.Restarts(); n > 0 {
		line += fmt.Sprintf("\nreal Envoy was started again %d time(s): it exited or hung (see the envoy failures)", n)
	}
	return line, nil
}

// openImpl opens the implementation of --impl with the capabilities of
// --impl-capabilities, after checking that each --profile is one: what run and report do
// before loading scenarios. Its errors are bad input (exit 2).
func openImpl(name string, caps, profiles []string, o impl.Options) (impl.Implementation, error) {
	c, err := impl.ParseCapabilities(caps)
	if err != nil {
		return nil, badInput("--impl-capabilities: %v", err)
	}
	o.Caps = c
	im, err := impl.Open(name, o)
	if err != nil {
		return nil, badInput("%v", err)
	}
	for _, p := range profiles {
		if _, err := profile.Get(p); err != nil {
			return nil, badInput("%v", err)
		}
	}
	return im, nil
}
