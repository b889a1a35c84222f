package main

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"

	"github.com/egharness/egharness/harness/impl"
	"github.com/egharness/egharness/harness/upgrade"
	"github.com/egharness/egharness/internal/stagetime"
	"github.com/egharness/egharness/translator/config"
	"github.com/egharness/egharness/translator/profile"
	"github.com/egharness/egharness/translator/resource"
)

// EG's Helm chart keeps its configuration in this ConfigMap; a cluster dump holds it rather
// than a bare EnvoyGateway document.
const (
	egConfigMapName = "envoy-gateway-config"
	egConfigMapKey  = "envoy-gateway.yaml"
)

func newUpgradeCheckCmd() *cobra.Command {
	var from, to, fromImpl, toImpl, file, cfgFile, output, namespace, peersDir string
	var limits *resource.Limits
	var execTimeout time.Duration
	var timings bool
	cmd := &cobra.Command{
		Use: "upgrade-check --from P --to P -f FILE [--config EGCFG] [-o text|json|markdown|html]",
		Short: "What an Envoy Gateway upgrade changes for your own objects: refusals, inert " +
			"policies, renamed xDS, missed patches",
		Long: `upgrade-check reads your objects (a cluster dump: multi-document YAML, kind: List documents,
status and managedFields included), translates them as the version you run (--from) and as the
version you upgrade to (--to), and reports every difference as a finding:

  - objects the API server admitted before and refuses after (and the reverse), with its message;
  - objects no longer processed, policies that become inert or fail closed (Accepted flips);
  - status changes on routes, policies and Gateway listeners (e.g. a new RouteRulesOverlap);
  - xDS resources and keys renamed or moved, matched by what they are rather than by name
    (listeners by address:port, route configurations by the listener that uses them,
    clusters by their backends, SDS clusters by socket path, HTTP filters by type and config,
    JWT providers by config, Lua scripts by source, rate limits by descriptor, secrets by content);
  - every EnvoyPatchPolicy operation that hits before and misses after, with its path.

Each finding names a behavior ID (see docs/upgrade-check.md), the object to change (the
policy that defines a JWT provider, a rate limit or a Lua script, the patch, the route), the
routes and Gateways it affects, a severity (breaking, warning, info), a one-line summary and
the before/after values.

A side is a version profile (` + strings.Join(profile.Names(), ", ") + `), translated by the reference
translator, or by another implementation with --from-impl/--to-impl (e.g. exec:COMMAND, see
"run --impl"); NAME@VERSION (egctl@v1.9.1) selects a registered adapter for that release.

The EG configuration (extensionApis, runtimeFlags) comes from an EnvoyGateway document in the
file, else from the ConfigMap envoy-gateway-system/envoy-gateway-config it holds, else from
--config. Kinds egharness does not translate (Deployments, CRDs, Pods...) are skipped with a note.

Output (-o): text (default), json ({"from","to","findings":[{"id","object","severity",
"summary","before","after","context"}]}), markdown (for a pull-request comment), html (one
self-contained page: findings grouped by the object to change, side-by-side diffs of the
affected xDS).

The file may be YAML (documents separated by ---) or JSON values one after another, in
UTF-8 or UTF-16 with a byte-order mark (PowerShell's >); anything else is refused.

Exit codes: 0 no breaking finding, 1 at least one breaking finding, 2 bad usage, bad input,
a side that cannot translate the input (e.g. egctl with enableLua off), or a report that
cannot be written (a full disk, a closed pipe).`,
		Example: `  egharness upgrade-check --from v1.8 --to v1.9 -f cluster-dump.yaml
  kubectl get gateways,httproutes,securitypolicies,envoypatchpolicies -A -o yaml > dump.yaml
  egharness upgrade-check --from v1.9 --to v1.10-preview -f dump.yaml -o html > upgrade.html
  egharness upgrade-check --from v1.8 --to v1.9 -f dump.yaml -o markdown >> $GITHUB_STEP_SUMMARY`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if file == "" {
				return badInput("upgrade-check needs -f FILE (or -f - for standard input)")
			}
			if from == "" || to == "" {
				return badInput("upgrade-check needs --from and --to (profiles: %s)", strings.Join(profile.Names(), ", "))
			}
			if !validFormat(output) {
				return badInput("-o must be one of %s, not %q", strings.Join(upgrade.Formats, ", "), output)
			}
			sideOpts := impl.Options{Limits: *limits, PeersDir: peersDir, Timeout: execTimeout}
			fromSide, err := upgrade.ParseSide(from, fromImpl, sideOpts)
			if err != nil {
				return badInput("--from: %v", err)
			}
			toSide, err := upgrade.ParseSide(to, toImpl, sideOpts)
			if err != nil {
				return badInput("--to: %v", err)
			}
			var stages *stagetime.Recorder
			if timings {
				stages = stagetime.New()
				stages.Begin("read and decode")
				defer func() { _ = stages.Write(cmd.ErrOrStderr()) }()
			}
			name, dec, err := decodeInput(file, cmd.InOrStdin(), namespace, *limits)
			if err != nil {
				return badInput("%v", err)
			}
			if len(dec.Objects) == 0 {
				return badInput("%s: no objects egharness translates in the input (Gateways, routes, policies...)", name)
			}
			cfg, notes, err := dumpConfig(name, dec, cfgFile, *limits)
			if err != nil {
				return badInput("%v", err)
			}
			rep, err := upgrade.Check(cmd.Context(),
				upgrade.Request{Objects: dec.Objects, Config: cfg, From: fromSide, To: toSide, Name: name, Stages: stages})
			if err != nil {
				// No comparison was made (a side cannot translate or express the input):
				// that is not a breaking finding, so not exit 1.
				return &exitError{code: exitBad, err: err}
			}
			rep.Notes = append(append(notes, dec.Notes...), rep.Notes...)
			stages.Begin("write " + output)
			if err := rep.Write(cmd.OutOrStdout(), output); err != nil {
				// The report could not be written (a full disk, a closed pipe): no answer,
				// which is not "breaking" either.
				return &exitError{code: exitBad, err: err}
			}
			if rep.Breaking() {
				// The report says it all; exit 1 without another message.
				return &exitError{code: exitFail, err: errors.New("")}
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&from, "from", "",
		"the side you run: a profile ("+strings.Join(profile.Names(), ", ")+") or NAME@VERSION")
	cmd.Flags().StringVar(&to, "to", "", "the side you upgrade to")
	cmd.Flags().StringVar(&peersDir, "peers-dir", "",
		"the `DIR` make peers installed egctl into, for NAME@VERSION sides (default $EGHARNESS_PEERS, else peers/)")
	cmd.Flags().StringVar(&fromImpl, "from-impl", "",
		"implementation of the --from side (default: the reference translator; exec:COMMAND)")
	cmd.Flags().StringVar(&toImpl, "to-impl", "", "implementation of the --to side")
	cmd.Flags().DurationVar(&execTimeout, "exec-timeout", time.Minute,
		"how long one translation by an exec: or NAME@VERSION side may take")
	cmd.Flags().StringVarP(&file, "file", "f", "",
		"your objects: multi-document YAML or kubectl's kind: List (- for stdin)")
	cmd.Flags().StringVar(&cfgFile, "config", "", "a file with the EnvoyGateway configuration document")
	cmd.Flags().StringVarP(&output, "output", "o", "text", "output format: "+strings.Join(upgrade.Formats, ", "))
	cmd.Flags().StringVarP(&namespace, "namespace", "n", "default", "namespace of objects that name none")
	cmd.Flags().BoolVar(&timings, "timings", false,
		"print to standard error each step's wall time, CPU time and the peak memory so far (after the report)")
	limits = addLimitFlags(cmd.Flags())
	return cmd
}

func validFormat(f string) bool {
	for _, x := range upgrade.Formats {
		if f == x {
			return true
		}
	}
	return false
}

// dumpConfig finds the EG configuration of a dump: an EnvoyGateway document, else EG's
// ConfigMap, combined with --config (which may not repeat what the dump says).
func dumpConfig(name string, dec resource.Decoded, cfgFile string, limits resource.Limits) (config.Config, []string,
	error) {
	var notes []string
	eg := dec.EnvoyGateway
	if eg == nil {
		for _, o := range dec.Objects {
			cm, ok := o.Obj.(*corev1.ConfigMap)
			if !ok || cm.Name != egConfigMapName || cm.Data[egConfigMapKey] == "" {
				continue
			}
			cdec, err := resource.Decode(
				fmt.Sprintf("%s: ConfigMap %s/%s key %s", o.Where(), cm.Namespace, cm.Name, egConfigMapKey),
				[]byte(cm.Data[egConfigMapKey]), resource.Options{Limits: limits})
			if err != nil {
				return config.Config{}, nil, err
			}
			if cdec.EnvoyGateway == nil {
				return config.Config{}, nil,
					fmt.Errorf("%s: ConfigMap %s/%s: key %s holds no EnvoyGateway document", o.Where(), cm.Namespace, cm.Name,
						egConfigMapKey)
			}
			eg = cdec.EnvoyGateway
			notes = append(notes,
				fmt.Sprintf("%s: EG configuration read from ConfigMap %s/%s", o.Where(), cm.Namespace, cm.Name))
			break
		}
	}
	cfg := config.FromEnvoyGateway(eg)
	if cfgFile == "" {
		return cfg, notes, nil
	}
	cdata, err := resource.ReadFile(cfgFile, limits)
	if err != nil {
		return config.Config{}, nil, err
	}
	cdec, err := resource.Decode(cfgFile, cdata, resource.Options{Limits: limits})
	if err != nil {
		return config.Config{}, nil, err
	}
	if cdec.EnvoyGateway == nil {
		return config.Config{}, nil, fmt.Errorf("%s: no EnvoyGateway document", cfgFile)
	}
	out, err := config.Combine(config.FromEnvoyGateway(cdec.EnvoyGateway), cfg)
	if err != nil {
		return config.Config{}, nil, fmt.Errorf("%s and %s: %v", cfgFile, name, err)
	}
	return out, notes, nil
}
