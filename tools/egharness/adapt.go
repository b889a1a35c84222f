package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/egharness/egharness/harness/impl"
	"github.com/egharness/egharness/translator/config"
	"github.com/egharness/egharness/translator/profile"
	"github.com/egharness/egharness/translator/resource"
)

// newAdaptEgctlCmd is the egctl adapter as an exec command: the worked example of what a
// vendor writes to validate an implementation with `--impl exec:`.
func newAdaptEgctlCmd() *cobra.Command {
	var binary, version string
	cmd := &cobra.Command{
		Use:   "adapt-egctl --egctl PATH",
		Short: "Speak the exec protocol for a released egctl (the worked example of an adapter)",
		Long: `adapt-egctl reads a scenario's objects on stdin as the exec protocol gives them
(multi-document YAML, an EnvoyGateway document first when the scenario sets one; the
profile in EGHARNESS_PROFILE), runs egctl x translate --to gateway-api,xds on them and
prints the result in the translate -o json shape. A scenario egctl cannot express exits
with status 3 and the reason on stderr, which skips it.

It is the same code as --impl egctl@VERSION, behind the protocol any vendor can speak.`,
		Example: `  egharness run --impl "exec:bin/egharness adapt-egctl --egctl peers/egctl-v1.9.1/egctl" \
    --impl-capabilities no-admission,no-secrets,no-warnings`,
		RunE: func(cmd *cobra.Command, _ []string) error {
			data, err := resource.ReadAll("stdin", cmd.InOrStdin(), resource.Limits{})
			if err != nil {
				return badInput("%v", err)
			}
			dec, err := resource.Decode("stdin", data, resource.Options{SkipUnknownKinds: true})
			if err != nil {
				return badInput("%v", err)
			}
			name := os.Getenv("EGHARNESS_PROFILE")
			if name == "" {
				name = profile.Default
			}
			p, err := profile.Get(name)
			if err != nil {
				return badInput("EGHARNESS_PROFILE: %v", err)
			}
			if version == "" {
				// make peers installs release V as peers/egctl-V/egctl
				version = strings.TrimPrefix(filepath.Base(filepath.Dir(binary)), "egctl-")
			}
			e, err := impl.NewEgctl(binary, version)
			if err != nil {
				return badInput("%v (name it with --release)", err)
			}
			res, err := e.Translate(cmd.Context(), impl.Request{Scenario: os.Getenv("EGHARNESS_SCENARIO"), Objects: dec.Objects,
				Config: config.FromEnvoyGateway(dec.EnvoyGateway), Profile: p})
			if why := impl.Skipped(err); why != "" {
				fmt.Fprintln(cmd.ErrOrStderr(), why)
				return &exitError{code: impl.ExitCannotExpress}
			}
			if err != nil {
				return &exitError{code: exitFail, err: err}
			}
			js, err := json.Marshal(res)
			if err != nil {
				return &exitError{code: exitFail, err: err}
			}
			_, err = fmt.Fprintln(cmd.OutOrStdout(), string(js))
			return err
		},
	}
	cmd.Flags().StringVar(&binary, "egctl", "", "the egctl binary (peers/egctl-VERSION/egctl, as make peers installs it)")
	cmd.Flags().StringVar(&version, "release", "", "the egctl release (default: from the folder name egctl-VERSION)")
	_ = cmd.MarkFlagRequired("egctl")
	return cmd
}
