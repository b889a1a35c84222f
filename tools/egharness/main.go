// Command egharness runs Envoy Gateway behavior scenarios against the reference translator
// (or another implementation) and reports what passed, what failed and which behaviors are
// covered.
package main

import (
	"errors"
	"fmt"
	"os"

	"github.com/spf13/cobra"
)

// Exit codes: 0 all good, 1 failures, 2 bad usage or bad input.
const (
	exitFail = 1
	exitBad  = 2
)

// exitError carries an exit code out of a command.
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string { return e.err.Error() }

func badInput(format string, args ...any) error {
	return &exitError{code: exitBad, err: fmt.Errorf(format, args...)}
}

func main() {
	tuneGC(os.Args[1:])
	stopProfile := startProfile()
	root := newRoot()
	err := root.Execute()
	stopProfile()
	if err == nil {
		return
	}
	var ee *exitError
	if errors.As(err, &ee) {
		if ee.err != nil && ee.err.Error() != "" {
			fmt.Fprintln(os.Stderr, "egharness:", ee.err)
		}
		os.Exit(ee.code)
	}
	// cobra's own errors are usage errors (unknown flag, wrong arguments)
	fmt.Fprintln(os.Stderr, "egharness:", err)
	os.Exit(exitBad)
}

func newRoot() *cobra.Command {
	root := &cobra.Command{
		Use:   "egharness",
		Short: "Conformance and regression harness for Envoy Gateway v1.9 behavior",
		Long: `egharness runs scenario files (Kubernetes objects plus the statuses, xDS and traffic
they must produce) against a reference translator that reproduces Envoy Gateway v1.9, and
reports failures and behavior coverage.

Exit codes: 0 all good, 1 a scenario or check failed, 2 bad usage or bad input, 130/143
interrupted by SIGINT/SIGTERM.`,
		Example: `  egharness run                      # every scenario against the reference translator
  egharness upgrade-check --from v1.8 --to v1.9 -f cluster-dump.yaml
  egharness --version`,
		SilenceUsage:  true,
		SilenceErrors: true,
		Version:       versionText(),
	}
	root.SetVersionTemplate("{{.Version}}")
	root.PersistentFlags().StringVar(&rootFlag, "root", "",
		"the project root: the `DIR` holding scenarios/ and golden/ (default: found from the scenario paths, else "+
			"from the current folder upwards)")
	root.AddCommand(newRunCmd(), newTranslateCmd(), newGoldenCmd(), newCoverageCmd())
	root.AddCommand(newReportCmd(), newAdaptEgctlCmd())
	root.AddCommand(newUpgradeCheckCmd(), newCRDDiffCmd())
	root.AddCommand(newServeCmd(), newCorpusCmd(), newConformanceCmd())
	return root
}
