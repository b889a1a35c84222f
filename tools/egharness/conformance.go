package main

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"sigs.k8s.io/gateway-api/conformance/utils/flags"
	"sigs.k8s.io/gateway-api/conformance/utils/suite"

	"github.com/egharness/egharness/harness/envoytier"
	"github.com/egharness/egharness/harness/gwconformance"
	"github.com/egharness/egharness/harness/impl"
	"github.com/egharness/egharness/translator/config"
	"github.com/egharness/egharness/translator/profile"
	"github.com/egharness/egharness/translator/resource"
)

// echoBasicPath is where `make echo-basic` builds the suite's backend, relative to the
// repository root.
const echoBasicPath = "peers/echo-basic/echo-basic"

type conformanceOpts struct {
	impl, peersDir, envoy, echoBasic, profiles, features, exempt string
	runTest, skipTests, report, junit, prof                      string
	noEnvoy, verbose                                             bool
}

func newConformanceCmd() *cobra.Command {
	var o conformanceOpts
	cmd := &cobra.Command{
		Use:   "conformance [flags] [-- SUITE-FLAGS]",
		Short: "Run Gateway API's own conformance suite (v1.6.1, unmodified) against an implementation, with no cluster",
		Long: `conformance runs sigs.k8s.io/gateway-api/conformance, the version go.mod requires, with its own
tests, manifests and report, against the reference translator (or --impl) with no cluster:
the suite's clients talk to an in-process API server (the real CRDs validate and default
every object), a kubelet stand-in runs the suite's echo-basic backends, one per Pod, each on
a loopback address of its own, and a real Envoy fed by the translation binds each Gateway's
address (127.B.0.N, written into its status) on its spec ports.

The report is the suite's ConformanceReport with mode "` + gwconformance.Mode + `": a development
signal, not a report to submit upstream (docs/conformance.md says how it differs).
Binding ports below 1024 takes root or CAP_NET_BIND_SERVICE. Without Envoy (--no-envoy) the
offline route checker answers the suite's plain HTTP requests from the translation: the tests
that check statuses and plain routing pass, those that need TLS, response headers, timeouts,
retries, mirrors, gRPC, WebSocket, TCP or UDP cannot.

The supported features default to those EG v1.9 declares in its own conformance run (every
feature but the mesh ones, GatewayHTTPSListenerDetectMisdirectedRequests and
GatewayInfrastructurePropagation), limited to the profiles run: the suite runs every test
whose features are supported, whatever the profile.

Flags after -- are the suite's own (-conformance-profiles, -supported-features, -skip-tests,
-organization, -project, -url, -version, -contact, -debug, -conformance-options-file...) and
-test.* flags of Go's testing package (-test.v); the flags above take precedence.`,
		Example: `  egharness conformance                                  # GATEWAY-HTTP against the reference and Envoy
  egharness conformance --run-test HTTPRouteSimpleSameNamespace -v
  egharness conformance --profile GATEWAY-HTTP,GATEWAY-GRPC --report report.yaml --junit junit.xml
  egharness conformance --impl "exec:./my-translator" -- -organization acme -project acme-gw -version v2`,
		RunE: func(cmd *cobra.Command, args []string) error { return runConformance(o, args) },
	}
	f := cmd.Flags()
	f.StringVar(&o.impl, "impl", "reference", "the implementation: reference, exec:COMMAND or egctl@VERSION")
	f.StringVar(&o.peersDir, "peers-dir", "",
		"the `DIR` make peers installed egctl into (default $EGHARNESS_PEERS, else peers/)")
	f.StringVar(&o.envoy, "envoy", "", "the Envoy `BINARY` (default $EGHARNESS_ENVOY, else make envoy's install)")
	f.StringVar(&o.echoBasic, "echo-basic", "",
		"the suite's echo-basic `BINARY` every Pod runs (default make echo-basic's build, "+echoBasicPath+")")
	f.BoolVar(&o.noEnvoy, "no-envoy", false,
		"no Envoy: the route checker answers plain HTTP requests (statuses and plain routing only)")
	f.StringVar(&o.profiles, "profile", string(suite.GatewayHTTPConformanceProfileName),
		"the conformance `PROFILES` to run and report, comma-separated (GATEWAY-HTTP, GATEWAY-TLS, GATEWAY-GRPC...)")
	f.StringVar(&o.features, "supported-features", "",
		"the features the implementation supports, comma-separated (default: those EG v1.9 declares)")
	f.StringVar(&o.exempt, "exempt-features", "", "features left out of the supported ones, comma-separated")
	f.StringVar(&o.runTest, "run-test", "", "run only the test of this short `NAME` (HTTPRouteSimpleSameNamespace...)")
	f.StringVar(&o.skipTests, "skip-tests", "", "tests to skip, comma-separated short names")
	f.StringVar(&o.report, "report", "conformance-report.yaml", "write the suite's ConformanceReport to `FILE`")
	f.StringVar(&o.junit, "junit", "", "also write a JUnit `FILE` of the tests run")
	f.StringVar(&o.prof, "profile-version", "v1.9", "the version profile the reference translates with")
	f.BoolVarP(&o.verbose, "verbose", "v", false, "print every test's log as it runs (go test -v)")
	return cmd
}

func runConformance(o conformanceOpts, suiteArgs []string) error {
	prof, err := profile.Get(o.prof)
	if err != nil {
		return badInput("--profile-version: %v", err)
	}
	im, err := impl.Open(o.impl, impl.Options{PeersDir: o.peersDir, Limits: resource.Limits{}})
	if err != nil {
		return badInput("--impl: %v", err)
	}
	wd, _ := os.Getwd()
	var envoy, backend string
	if !o.noEnvoy {
		if envoy, err = envoytier.Find(o.envoy, wd); err != nil {
			return badInput("%v (or --no-envoy for the status-only tests)", err)
		}
		if backend, err = findEchoBasic(o.echoBasic, wd); err != nil {
			return badInput("%v", err)
		}
		if err := gwconformance.CanBindPrivileged(); err != nil {
			return badInput("%v", err)
		}
	}

	// The suite's own flags (registered by its flags package) and Go's testing flags.
	testing.Init()
	if err := flag.CommandLine.Parse(suiteArgs); err != nil {
		return badInput("suite flags: %v", err)
	}
	so := suite.ConfigurableOptions{}
	flags.ApplyAll(&so)
	so.ConformanceProfiles = suite.ParseConformanceProfilesSlice(o.profiles)
	switch {
	case o.features != "":
		so.SupportedFeatures = suite.ParseSupportedFeaturesSlice(o.features)
	case len(so.SupportedFeatures) == 0 && !so.EnableAllSupportedFeatures:
		if so.SupportedFeatures, err = gwconformance.ProfileFeatures(so.ConformanceProfiles); err != nil {
			return badInput("--profile: %v", err)
		}
	}
	if o.exempt != "" {
		so.ExemptFeatures = suite.ParseSupportedFeaturesSlice(o.exempt)
	}
	if o.runTest != "" {
		so.RunTest = o.runTest
	}
	if o.skipTests != "" {
		so.SkipTests = suite.ParseSkipTests(o.skipTests)
	}
	so.CleanupTestResources = true
	if so.Implementation.Organization == "" {
		so.Implementation.Organization = "egharness"
		so.Implementation.Project = strings.NewReplacer(":", "-", "@", "-", " ", "-", "/", "-").Replace(im.Name())
		so.Implementation.URL = "https://github.com/egharness/egharness"
		so.Implementation.Version = version
		so.Implementation.Contact = []string{"egharness maintainers"}
	}
	if o.verbose {
		_ = flag.CommandLine.Set("test.v", "true")
	}

	var outcome *gwconformance.Outcome
	body := func(t *testing.T) {
		outcome = gwconformance.Run(t, gwconformance.Options{
			Impl: im, Profile: prof, Config: config.Config{}, Envoy: envoy, Backend: backend,
			Suite: so, JUnitPath: o.junit, Log: os.Stderr,
		})
		if o.report != "" {
			if err := gwconformance.WriteReport(o.report, outcome.Report); err != nil {
				t.Errorf("writing the report: %v", err)
			}
		}
		if o.junit != "" {
			if err := gwconformance.WriteJUnit(o.junit, outcome.Results); err != nil {
				t.Errorf("writing the JUnit file: %v", err)
			}
		}
		fmt.Print(outcome.Summary())
		if o.report != "" {
			fmt.Printf("report (mode %s): %s\n", gwconformance.Mode, o.report)
		}
	}
	// testing.Main gives the suite the *testing.T it is written for; it exits the
	// process with the test result (1 when a test failed).
	testing.Main(func(pat, str string) (bool, error) { return true, nil },
		[]testing.InternalTest{{Name: "GatewayAPIConformance", F: body}}, nil, nil)
	return errors.New("unreachable: testing.Main exits")
}

// findEchoBasic picks the echo-basic binary: explicit when set, else make echo-basic's
// build found from dir upwards.
func findEchoBasic(explicit, dir string) (string, error) {
	if explicit != "" {
		if st, err := os.Stat(explicit); err != nil || st.IsDir() {
			return "", fmt.Errorf("--echo-basic %s: not a file", explicit)
		}
		return explicit, nil
	}
	for d := dir; ; d = filepath.Dir(d) {
		if _, err := os.Stat(filepath.Join(d, "go.mod")); err == nil {
			p := filepath.Join(d, echoBasicPath)
			if _, err := os.Stat(p); err == nil {
				return p, nil
			}
			return "", fmt.Errorf("no echo-basic backend: %s is not built (run `make echo-basic`) and --echo-basic is not set",
				p)
		}
		if filepath.Dir(d) == d {
			return "", fmt.Errorf(
				"no echo-basic backend: --echo-basic is not set and no repository root (go.mod) above %s holds %s", dir,
				echoBasicPath)
		}
	}
}
