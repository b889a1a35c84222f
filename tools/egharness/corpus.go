package main

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/egharness/egharness/harness/corpus"
	"github.com/egharness/egharness/harness/golden"
	"github.com/egharness/egharness/harness/impl"
)

func newCorpusCmd() *cobra.Command {
	var opts struct {
		impl, testdata, known, output, peersDir string
		into                                    string
		prefixes, cases                         []string
		messages, verbose, quiet, printInput    bool
		every                                   int
		execTimeout                             time.Duration
	}
	cmd := &cobra.Command{
		Use:   "corpus [--prefix P] [--case NAME] [--impl I] [-o text|json]",
		Short: "Run Envoy Gateway's own translator test cases and compare statuses with EG's",
		Long: `corpus reads EG's translator testdata (internal/gatewayapi/testdata of the EG module
this program was built with, in the Go module cache; nothing of it is copied into this
repository), turns each NAME.in.yaml into objects as EG's TestTranslate does (its keys, the
fixtures it adds, its settings and per-case overrides, file order as processing order),
translates them, and compares the statuses with NAME.out.yaml: Gateway and listener
conditions, attachedRoutes, route parents and policy ancestors, each condition by type,
status and reason (messages are counted apart; --messages makes them decide too).

Each case gets a verdict: agree; disagree (fails); recorded (disagrees for the reason the
known-reasons file, corpus/known.yaml, records); refused (the real CRDs refuse an object
EG's unit test takes: not compared); error (the case cannot be read or translated; fails
unless recorded); stale (a reason is recorded but the case agrees or is refused: fails, so
the record stays true). A summary per prefix (httproute, securitypolicy...) and the total
follow.

--impl runs the inputs through another implementation (exec:COMMAND, egctl@VERSION): its
statuses are compared with EG's and its xDS, by facts, with the reference's; reasons are
recorded per implementation (impl: in the known-reasons file), scoped by facts: to the
differences they name. A case whose every difference is recorded as the implementation's
(it cannot represent the case faithfully) is not counted in the xDS figure, and the summary
says how many were left out.

Exit codes: 0 no failure, 1 a disagreement, error or stale record, 2 bad usage.`,
		Example: `  egharness corpus                                  # every case, the failures and the summary
  egharness corpus --prefix securitypolicy -v        # one group, every verdict and difference
  egharness corpus --case httproute-with-mirror -o json
  egharness corpus --case httproute-with-mirror --print-input | egharness translate -f -
  egharness corpus --impl egctl@v1.9.1 --every 5       # a fifth of the cases through egctl`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if opts.output != "text" && opts.output != "json" {
				return badInput("-o must be text or json, not %q", opts.output)
			}
			dir := opts.testdata
			if dir == "" {
				d, err := corpus.DefaultDir()
				if err != nil {
					return badInput("%v", err)
				}
				dir = d
			}
			all, err := corpus.Cases(dir)
			if err != nil {
				return badInput("%v", err)
			}
			knownFile := opts.known
			if knownFile == "" {
				proj, err := findProject(nil)
				if err != nil {
					return err
				}
				knownFile = filepath.Join(proj.root, filepath.FromSlash(corpus.KnownFile))
			}
			known, err := corpus.LoadKnown(knownFile)
			if err != nil {
				return badInput("%v", err)
			}
			names := make([]string, 0, len(all))
			for _, c := range all {
				names = append(names, c.Name)
			}
			var im impl.Implementation
			implName := "reference"
			if opts.impl != "" && opts.impl != "reference" {
				im, err = impl.Open(opts.impl, impl.Options{PeersDir: opts.peersDir, Timeout: opts.execTimeout})
				if err != nil {
					return badInput("%v", err)
				}
				implName = im.Name()
			}
			if unknown := known.Unknown(implName, names); len(unknown) > 0 {
				return badInput("%s records cases the corpus does not have: %s", knownFile, strings.Join(unknown, ", "))
			}
			cases, err := selectCases(all, opts.prefixes, opts.cases)
			if err != nil {
				return err
			}
			if opts.every < 1 {
				return badInput("--every must be 1 or more, not %d", opts.every)
			}
			if opts.every > 1 {
				// A deterministic sample for slow implementations (egctl runs a process
				// per case): every Nth case of the selection, by name.
				var sample []corpus.Case
				for i := 0; i < len(cases); i += opts.every {
					sample = append(sample, cases[i])
				}
				cases = sample
			}
			if opts.printInput {
				if len(cases) != 1 {
					return badInput("--print-input takes one case (--case NAME), not %d", len(cases))
				}
				base, err := corpus.BaseObjects(cases)
				if err != nil {
					return badInput("%v", err)
				}
				prep, err := corpus.Prepare(cases[0], base)
				if err != nil {
					return badInput("%v", err)
				}
				return corpus.WriteInput(cmd.OutOrStdout(), cases[0], prep)
			}
			ctx, interrupted := interruptible(cmd.Context())
			o := corpus.Options{Impl: im, Known: known, Messages: opts.messages}
			if !opts.quiet {
				o.Progress = cmd.ErrOrStderr()
			}
			results := corpus.Run(ctx, cases, o)
			sig := interrupted()
			sum := corpus.Summarize(implName, results)
			out := cmd.OutOrStdout()
			switch {
			case opts.into != "":
				// The summary (table and totals) between the corpus markers of a Markdown
				// file, as report --into writes the agreement table: figures that need a
				// slow peer are refreshed by a command, not typed.
				var b strings.Builder
				corpus.WriteText(&b, nil, sum, false)
				cmdline := "egharness corpus " + strings.Join(os.Args[2:], " ")
				block := fmt.Sprintf("Generated by `%s`:\n\n```text\n%s```\n", strings.TrimSpace(cmdline),
					strings.TrimLeft(b.String(), "\n"))
				if err := writeInto(opts.into, "corpus", corpusBegin, corpusEnd, block); err != nil {
					return err
				}
			case opts.output == "json":
				if err := corpus.WriteJSON(out, results, sum); err != nil {
					return err
				}
			default:
				corpus.WriteText(out, results, sum, opts.verbose)
			}
			if sig != nil {
				return &exitError{code: signalExit(sig),
					err: fmt.Errorf("interrupted by %s after %d of %d cases", signalName(sig), len(results), len(cases))}
			}
			if sum.Failed {
				return &exitError{code: exitFail}
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&opts.impl, "impl", "reference", "implementation: reference, exec:COMMAND, egctl@VERSION")
	f.StringSliceVar(&opts.prefixes, "prefix", nil,
		"only cases of these prefixes (the name up to its first '-': httproute, securitypolicy...)")
	f.StringSliceVar(&opts.cases, "case", nil, "only these cases (names without .in.yaml)")
	f.StringVar(&opts.testdata, "testdata", "",
		"the testdata `DIR` (default: EG's internal/gatewayapi/testdata in the Go module cache)")
	f.StringVar(&opts.known, "known", "", "the known-reasons `FILE` (default: corpus/known.yaml of the project)")
	f.StringVarP(&opts.output, "output", "o", "text", "output format: text or json")
	f.IntVar(&opts.every, "every", 1,
		"run every `N`th case of the selection (by name): a deterministic sample for slow implementations")
	f.BoolVar(&opts.printInput, "print-input", false,
		"print the one case's objects and settings as translate -f - reads them, instead of running it")
	f.StringVar(&opts.into, "into", "",
		"write the summary between the corpus markers of this Markdown `FILE` instead of printing (docs/corpus.md)")
	f.BoolVar(&opts.messages, "messages", false, "a condition whose message differs is a disagreement too")
	f.BoolVarP(&opts.verbose, "verbose", "v", false, "print every case's verdict, and message differences")
	f.BoolVarP(&opts.quiet, "quiet", "q", false, "no progress lines on stderr")
	f.StringVar(&opts.peersDir, "peers", "", "where egctl releases are installed (default $EGHARNESS_PEERS, else peers/)")
	f.DurationVar(&opts.execTimeout, "exec-timeout", time.Minute,
		"bound on each translation by an external implementation")
	return cmd
}

// Markers around a generated corpus summary in a Markdown file (--into).
const (
	corpusBegin = "<!-- corpus:begin (generated by egharness corpus --into; do not edit) -->"
	corpusEnd   = "<!-- corpus:end -->"
)

// writeInto replaces what lies between two marker lines of a file (--into of corpus and of
// report). what names the markers in the error when the file lacks them.
func writeInto(file, what, begin, end, data string) error {
	old, err := os.ReadFile(file)
	if err != nil {
		return badInput("--into: %v", err)
	}
	s := string(old)
	i, j := strings.Index(s, begin), strings.Index(s, end)
	if i < 0 || j < i {
		return badInput("--into %s: no %s markers (a line %q, then a line %q)", file, what, begin, end)
	}
	s = s[:i+len(begin)] + "\n" + data + s[j:]
	return golden.WriteFileAtomic(file, []byte(s))
}

// selectCases keeps the cases --prefix and --case name; a filter that matches nothing is
// bad usage.
func selectCases(all []corpus.Case, prefixes, names []string) ([]corpus.Case, error) {
	if len(prefixes) == 0 && len(names) == 0 {
		return all, nil
	}
	have := map[string]bool{}
	havePrefix := map[string]bool{}
	for _, c := range all {
		have[c.Name] = true
		havePrefix[c.Prefix] = true
	}
	for _, n := range names {
		if !have[n] {
			return nil, badInput("--case %s: no such case in the corpus", n)
		}
	}
	for _, p := range prefixes {
		if !havePrefix[p] {
			return nil, badInput("--prefix %s: no case has this prefix", p)
		}
	}
	var out []corpus.Case
	for _, c := range all {
		if slices.Contains(prefixes, c.Prefix) || slices.Contains(names, c.Name) {
			out = append(out, c)
		}
	}
	return out, nil
}
