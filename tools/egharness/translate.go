package main

import (
	"bytes"
	"io"

	"github.com/spf13/cobra"

	"github.com/egharness/egharness/internal/stagetime"
	"github.com/egharness/egharness/internal/yamlout"
	"github.com/egharness/egharness/translator"
	"github.com/egharness/egharness/translator/config"
	"github.com/egharness/egharness/translator/profile"
	"github.com/egharness/egharness/translator/resource"
)

func newTranslateCmd() *cobra.Command {
	var file, prof, cfgFile, output, namespace string
	var mergeGateways, timings bool
	var limits *resource.Limits
	cmd := &cobra.Command{
		Use:   "translate -f FILE [--profile P] [--config EGCFG] [-o yaml|json]",
		Short: "Translate Kubernetes objects to admission verdicts, statuses and xDS (like egctl x translate)",
		Long: `translate reads multi-document YAML (GatewayClass, Gateway, HTTPRoute, Service,
EndpointSlice, EG policies...) and prints what the reference translator makes of it:
admission verdicts, statuses, and xDS listeners, routes, clusters, endpoints and secrets.
An EnvoyGateway document among the objects, or --config, sets extensionApis and runtimeFlags.
Objects without a namespace go to envoy-gateway-system, as with egctl x translate (-n).
Kinds the translator does not read (Deployment, ServiceAccount...) are skipped with a warning.
"-f -" reads standard input. The --max-* flags bound the input (size, objects, nesting,
alias expansion); bad input exits 2 with the file and line.`,
		Example: `  egharness translate -f gateway.yaml
  egharness translate -f gateway.yaml --profile v1.8 -o json
  egharness translate -f gateways.yaml --merge-gateways
  kubectl get gateways,httproutes,services -A -o yaml | egharness translate -f - -n default`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if file == "" {
				return badInput("translate needs -f FILE (or -f - for standard input)")
			}
			if output != "yaml" && output != "json" {
				return badInput("-o must be yaml or json, not %q", output)
			}
			p, err := profile.Get(prof)
			if err != nil {
				return badInput("%v", err)
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
			if len(dec.Objects) == 0 && len(dec.Notes) == 0 && dec.EnvoyGateway == nil {
				return badInput("%s: no Kubernetes objects in the input (it is empty or holds only comments)", name)
			}
			cfg := config.FromEnvoyGateway(dec.EnvoyGateway)
			if cfgFile != "" {
				cdata, err := resource.ReadFile(cfgFile, *limits)
				if err != nil {
					return badInput("%v", err)
				}
				cdec, err := resource.Decode(cfgFile, cdata, resource.Options{Limits: *limits})
				if err != nil {
					return badInput("%v", err)
				}
				if cdec.EnvoyGateway == nil {
					return badInput("%s: no EnvoyGateway document", cfgFile)
				}
				if cfg, err = config.Combine(config.FromEnvoyGateway(cdec.EnvoyGateway), cfg); err != nil {
					return badInput("%v", err)
				}
			}
			if mergeGateways {
				cfg.MergeGateways = true
			}
			res, err := translator.Translate(translator.Input{Objects: dec.Objects, Config: cfg, Profile: p,
				Stages: stages})
			if err != nil {
				return &exitError{code: exitFail, err: err}
			}
			// Kinds the translator does not read (Deployments, ServiceAccounts...) are part
			// of real manifests: they are skipped and said so, as egctl skips them.
			res.Warnings = append(res.Warnings, dec.Notes...)
			// The IR is not printed: let it go before the output is built (10k routes).
			res.IR = nil
			switch output {
			case "json":
				stages.Begin("print json")
				if err = res.WriteJSON(cmd.OutOrStdout()); err == nil {
					_, err = io.WriteString(cmd.OutOrStdout(), "\n")
				}
			case "yaml":
				stages.Begin("print json (for yaml)")
				var js bytes.Buffer
				if err = res.WriteJSON(&js); err != nil {
					return &exitError{code: exitFail, err: err}
				}
				res = nil // only its JSON is needed from here on (10k routes)
				stages.Begin("print yaml")
				err = yamlout.Write(cmd.OutOrStdout(), js.Bytes())
			default:
				return badInput("-o must be yaml or json, not %q", output)
			}
			return err
		},
	}
	cmd.Flags().StringVarP(&file, "file", "f", "", "objects to translate (multi-document YAML; - for stdin)")
	cmd.Flags().StringVar(&prof, "profile", profile.Default, "version profile")
	cmd.Flags().BoolVar(&mergeGateways, "merge-gateways", false,
		"put every Gateway of a GatewayClass on one proxy, as an EnvoyProxy's spec.mergeGateways does (the exec "+
			"protocol's $EGHARNESS_MERGE_GATEWAYS)")
	cmd.Flags().StringVar(&cfgFile, "config", "", "a file with an EnvoyGateway configuration document")
	cmd.Flags().StringVarP(&output, "output", "o", "yaml", "output format: yaml or json")
	cmd.Flags().StringVarP(&namespace, "namespace", "n", "envoy-gateway-system",
		"namespace of objects that name none (egctl x translate's default)")
	cmd.Flags().BoolVar(&timings, "timings", false,
		"print to standard error each stage's wall time, CPU time and the peak memory so far (after the output)")
	limits = addLimitFlags(cmd.Flags())
	return cmd
}

// decodeInput reads and decodes a user's objects (file "-": stdin, named <stdin>) the way
// every command that takes -f does: namespace for objects that name none, unknown kinds
// skipped with a note, the input limits applied.
func decodeInput(file string, stdin io.Reader, namespace string, limits resource.Limits) (string, resource.Decoded,
	error) {
	name := file
	if file == "-" {
		name = "<stdin>"
	}
	data, err := readInput(file, stdin, limits)
	if err != nil {
		return name, resource.Decoded{}, err
	}
	dec, err := resource.Decode(name, data,
		resource.Options{DefaultNamespace: namespace, SkipUnknownKinds: true, Limits: limits})
	return name, dec, err
}

// readInput reads file ("-": stdin) up to the file size limit.
func readInput(file string, stdin io.Reader, limits resource.Limits) ([]byte, error) {
	if file == "-" {
		return resource.ReadAll("<stdin>", stdin, limits)
	}
	return resource.ReadFile(file, limits)
}
