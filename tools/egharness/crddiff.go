package main

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/egharness/egharness/translator/crds"
	"github.com/egharness/egharness/translator/profile"
)

func newCRDDiffCmd() *cobra.Command {
	var from, to, output, kind string
	cmd := &cobra.Command{
		Use:   "crd-diff --from P --to P",
		Short: "List the CRD rules that differ between two EG releases (kinds, versions, fields, constraints, CEL rules)",
		Long: `crd-diff compares the CustomResourceDefinitions two EG releases install (EG's own and the
Gateway API ones each bundles): kinds and versions served, storage versions, fields added or
removed, and every constraint the API server applies (type, format, enum, pattern, bounds,
required fields, defaults, CEL rules). These are the rules admission applies for each
profile, so the list says which objects one release refuses and the other admits.

--from and --to take a profile (v1.8, v1.9, v1.10-preview: its release's CRDs) or an EG
release (v1.8.0, v1.9.1). Releases other than the compiled-in v1.9.1 are read from the Go
module cache (make crds) or $EGHARNESS_CRDS/<release>.`,
		Example: `  egharness crd-diff --from v1.8 --to v1.9
  egharness crd-diff --from v1.8.0 --to v1.9.1 --kind BackendTrafficPolicy -o json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if from == "" || to == "" {
				return badInput("crd-diff needs --from and --to")
			}
			if output != "text" && output != "json" {
				return badInput("-o must be text or json, not %q", output)
			}
			a, err := crdSetOf(from)
			if err != nil {
				return &exitError{code: exitBad, err: err}
			}
			b, err := crdSetOf(to)
			if err != nil {
				return &exitError{code: exitBad, err: err}
			}
			changes, err := crds.Diff(a, b)
			if err != nil {
				return err
			}
			if kind != "" {
				kept := changes[:0]
				for _, c := range changes {
					if strings.EqualFold(strings.SplitN(c.Kind, ".", 2)[0], kind) {
						kept = append(kept, c)
					}
				}
				changes = kept
			}
			w := cmd.OutOrStdout()
			if output == "json" {
				if changes == nil {
					changes = []crds.RuleChange{}
				}
				enc := json.NewEncoder(w)
				enc.SetIndent("", "  ")
				return enc.Encode(map[string]any{"from": a.Release, "to": b.Release, "changes": changes})
			}
			fmt.Fprintf(w, "CRD rules from %s to %s\n", a.Release, b.Release)
			last := ""
			for _, c := range changes {
				if c.Kind != last {
					fmt.Fprintf(w, "\n%s\n", c.Kind)
					last = c.Kind
				}
				fmt.Fprintf(w, "  %s\n", strings.TrimPrefix(c.String(), c.Kind+" "))
			}
			fmt.Fprintf(w, "\n%d change(s)\n", len(changes))
			return nil
		},
	}
	cmd.Flags().StringVar(&from, "from", "", "profile or EG release whose CRDs are the baseline")
	cmd.Flags().StringVar(&to, "to", "", "profile or EG release compared with it")
	cmd.Flags().StringVarP(&output, "output", "o", "text", "text or json")
	cmd.Flags().StringVar(&kind, "kind", "", "only this kind (HTTPRoute, BackendTrafficPolicy...)")
	return cmd
}

// crdSetOf reads a profile's release CRDs, or a release's.
func crdSetOf(name string) (*crds.Set, error) {
	release := name
	if p, err := profile.Get(name); err == nil {
		release = p.CRDRelease()
	} else if strings.Count(name, ".") != 2 {
		return nil, fmt.Errorf("%q is neither a profile (%s) nor an EG release such as v1.8.0", name,
			strings.Join(profile.Names(), ", "))
	}
	return crds.ForRelease(release)
}
