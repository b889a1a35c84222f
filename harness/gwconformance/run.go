package gwconformance

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"net"
	"os"
	"slices"
	"sort"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/sets"
	clientset "k8s.io/client-go/kubernetes"
	crlog "sigs.k8s.io/controller-runtime/pkg/log"
	gwapiv1 "sigs.k8s.io/gateway-api/apis/v1"
	"sigs.k8s.io/gateway-api/conformance"
	confv1 "sigs.k8s.io/gateway-api/conformance/apis/v1"
	"sigs.k8s.io/gateway-api/conformance/tests"
	"sigs.k8s.io/gateway-api/conformance/utils/config"
	"sigs.k8s.io/gateway-api/conformance/utils/suite"
	"sigs.k8s.io/gateway-api/pkg/features"
	"sigs.k8s.io/yaml"

	"github.com/go-logr/logr"

	"github.com/egharness/egharness/harness/envoytier"
	"github.com/egharness/egharness/harness/gwconformance/kubeapi"
	"github.com/egharness/egharness/harness/gwconformance/kubelet"
	"github.com/egharness/egharness/harness/impl"
	translatorconfig "github.com/egharness/egharness/translator/config"
	"github.com/egharness/egharness/translator/crds"
	"github.com/egharness/egharness/translator/profile"
)

// Mode is the report's mode: nobody should mistake an offline report for one a vendor
// submits from a cluster.
const Mode = "offline-egharness"

// GatewayClassName is the class the run creates for the implementation.
const GatewayClassName = "egharness"

// Options configure a run.
type Options struct {
	Impl    impl.Implementation
	Profile profile.Profile
	Config  translatorconfig.Config
	// Envoy is the Envoy binary of the data plane; Backend the echo-basic binary every
	// Pod runs. Without Envoy the route checker answers the suite's plain HTTP requests
	// (RouteCheckPlane); the tests that need more fail.
	Envoy, Backend string
	// Suite holds the suite's own options (profiles, features, run-test, skip-tests,
	// implementation, report path...); the run fills in the clients, the GatewayClass,
	// the mode and, where unset, the timeouts.
	Suite suite.ConfigurableOptions
	// JUnitPath, when set, receives a JUnit file of the tests run.
	JUnitPath string
	// Log receives the harness's own progress (Envoy, kubelet and controller problems).
	Log io.Writer
}

// EGFeatures are the features EG v1.9 declares in its own conformance run (its
// test/conformance suite): every Gateway API feature but the mesh ones,
// GatewayHTTPSListenerDetectMisdirectedRequests and GatewayInfrastructurePropagation.
func EGFeatures() []features.FeatureName {
	skipped := sets.New(features.GatewayHTTPSListenerDetectMisdirectedRequestsFeature.Name,
		features.GatewayInfrastructurePropagationFeature.Name)
	mesh := features.SetsToNamesSet(features.MeshCoreFeatures, features.MeshExtendedFeatures)
	var out []features.FeatureName
	for _, f := range features.AllFeatures.UnsortedList() {
		if !skipped.Has(f.Name) && !mesh.Has(f.Name) {
			out = append(out, f.Name)
		}
	}
	slices.Sort(out)
	return out
}

// OfflineTimeouts are the suite's timeouts for an in-process world: every wait for a
// condition seconds, not minutes (a status here is written within milliseconds of the
// change), so that a failing test costs seconds.
func OfflineTimeouts() config.TimeoutConfig {
	t := config.DefaultTimeoutConfig()
	for _, d := range []*time.Duration{
		&t.GatewayMustHaveAddress, &t.GatewayMustHaveCondition, &t.GatewayStatusMustHaveListeners,
		&t.GatewayListenersMustHaveConditions, &t.ListenerSetMustHaveCondition,
		&t.ListenerSetListenersMustHaveConditions, &t.GWCMustBeAccepted, &t.HTTPRouteMustNotHaveParents,
		&t.HTTPRouteMustHaveCondition, &t.TLSRouteMustHaveCondition, &t.TCPRouteMustHaveCondition,
		&t.UDPRouteMustHaveCondition, &t.RouteMustHaveParents, &t.LatestObservedGenerationSet,
		&t.CreateTimeout,
	} {
		*d = 10 * time.Second
	}
	t.MaxTimeToConsistency = 15 * time.Second
	t.NamespacesMustBeReady = 60 * time.Second
	t.RequestTimeout = 5 * time.Second
	t.DefaultTestTimeout = 60 * time.Second
	t.DeleteTimeout = 5 * time.Second
	t.GetTimeout = 5 * time.Second
	return t
}

// TestResult is one test's outcome, for the JUnit file and the summary.
type TestResult struct {
	Name     string
	Outcome  string // passed, failed, skipped
	Duration time.Duration
}

// Outcome is what a run produced.
type Outcome struct {
	Report  *confv1.ConformanceReport
	Results []TestResult
	// Notes are the harness's own problems (a Pod that did not start, a translation that
	// failed, an Envoy NACK), for the summary.
	Notes []string
}

// Run runs the suite inside t: the in-process API with the real CRDs, the kubelet
// stand-in, the controller over the implementation and, when Envoy is given, the data
// plane. It returns the suite's own report.
func Run(t *testing.T, o Options) *Outcome {
	logw := o.Log
	if logw == nil {
		logw = io.Discard
	}
	log := slog.New(slog.NewTextHandler(logw, &slog.HandlerOptions{Level: slog.LevelWarn}))
	crlog.SetLogger(logr.Discard())
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)

	set, err := crds.ForRelease(o.Profile.CRDRelease())
	if err != nil {
		t.Fatalf("the CRDs of %s: %v", o.Profile.CRDRelease(), err)
	}
	srv, err := kubeapi.NewServer(set)
	if err != nil {
		t.Fatalf("in-process API: %v", err)
	}
	block, err := claimLoopback()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = block.Close() })

	kl := kubelet.New(srv.Store,
		kubelet.Options{Backend: o.Backend, PodIP: block.next(1), ServiceIP: block.next(3), Dir: t.TempDir(), Log: log})
	srv.Facade.Logs = kl.Logs
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { defer wg.Done(); kl.Run(ctx) }()

	ctrl := &Controller{Store: srv.Store, Impl: o.Impl, Config: o.Config, Profile: o.Profile, GatewayIP: block.next(0),
		Log: log}
	var checker *RouteCheckPlane
	if o.Envoy == "" {
		checker = &RouteCheckPlane{Store: srv.Store}
		ctrl.Plane = checker
	} else {
		if err := CanBindPrivileged(); err != nil {
			t.Fatal(err)
		}
		bare, err := envoytier.StartBare(ctx, envoytier.BareOptions{Envoy: o.Envoy, EnvoyLog: envoyLog()})
		if err != nil {
			t.Fatalf("starting Envoy: %v", err)
		}
		t.Cleanup(bare.Close)
		ctrl.Plane = &EnvoyPlane{Envoy: bare}
	}
	wg.Add(1)
	go func() { defer wg.Done(); ctrl.Run(ctx) }()
	t.Cleanup(func() { cancel(); wg.Wait() })

	cl, err := srv.Client()
	if err != nil {
		t.Fatalf("client: %v", err)
	}
	rc := srv.Facade.RestConfig()
	cs, err := clientset.NewForConfig(rc)
	if err != nil {
		t.Fatalf("clientset: %v", err)
	}
	gc := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "gateway.networking.k8s.io/v1", "kind": "GatewayClass",
		"metadata": map[string]any{"name": GatewayClassName},
		"spec":     map[string]any{"controllerName": ControllerName},
	}}
	if _, err := srv.Create(gc); err != nil {
		t.Fatalf("GatewayClass: %v", err)
	}

	so := o.Suite
	so.GatewayClassName = GatewayClassName
	// GatewayStaticAddresses asks for an address the implementation can use and one it
	// cannot: a loopback address of the run's block, and a Hostname (EG assigns no
	// hostname addresses: Programmed False, AddressNotUsable).
	if len(so.UsableNetworkAddresses) == 0 {
		so.UsableNetworkAddresses = []gwapiv1.GatewaySpecAddress{{Type: new(gwapiv1.IPAddressType), Value: block.next(2)()}}
	}
	if len(so.UnusableNetworkAddresses) == 0 {
		so.UnusableNetworkAddresses = []gwapiv1.GatewaySpecAddress{{Type: new(gwapiv1.HostnameAddressType),
			Value: "unusable.egharness.invalid"}}
	}
	so.Mode = Mode
	if so.TimeoutConfig == (config.TimeoutConfig{}) {
		so.TimeoutConfig = OfflineTimeouts()
	}
	opts := suite.ConformanceOptions{
		ConfigurableOptions: so,
		Client:              cl,
		ClientOptions:       srv.ClientOptions(),
		Clientset:           cs,
		RestConfig:          rc,
		ManifestFS:          []fs.FS{&conformance.Manifests},
	}
	if checker != nil {
		opts.RoundTripper = checker
	}
	cSuite, err := suite.NewConformanceTestSuite(opts)
	if err != nil {
		t.Fatalf("the conformance suite: %v", err)
	}
	out := &Outcome{}
	var mu sync.Mutex
	run := make([]suite.ConformanceTest, len(tests.ConformanceTests))
	for i, ct := range tests.ConformanceTests {
		// v1.6.1 counts a failing Parallel test as passed (t.Run returns before a
		// parallel subtest ends; gateway-api#5142, fixed in v1.7.0): run each one in
		// turn, so that its result is its own.
		ct.Parallel = false
		inner := ct.Test
		name := ct.ShortName
		ct.Test = func(t *testing.T, s *suite.ConformanceTestSuite) {
			start := time.Now()
			t.Cleanup(func() {
				r := TestResult{Name: name, Outcome: "passed", Duration: time.Since(start)}
				switch {
				case t.Failed():
					r.Outcome = "failed"
				case t.Skipped():
					r.Outcome = "skipped"
				}
				mu.Lock()
				out.Results = append(out.Results, r)
				mu.Unlock()
			})
			inner(t, s)
		}
		run[i] = ct
	}
	cSuite.Setup(t, run)
	if err := cSuite.Run(t, run); err != nil {
		t.Fatalf("running the suite: %v", err)
	}
	if out.Report, err = cSuite.Report(); err != nil {
		t.Fatalf("the report: %v", err)
	}
	out.Notes = append(out.Notes, kl.Errors()...)
	out.Notes = append(out.Notes, ctrl.Errors()...)
	out.Notes = append(out.Notes, ctrl.Describe())
	sort.SliceStable(out.Results, func(i, j int) bool { return out.Results[i].Name < out.Results[j].Name })
	return out
}

func envoyLog() io.Writer {
	if p := os.Getenv(envoytier.LogEnvVar); p != "" {
		if f, err := os.Create(p); err == nil {
			return f
		}
	}
	return nil
}

// WriteReport writes the suite's report as YAML, as the suite itself writes it.
func WriteReport(path string, r *confv1.ConformanceReport) error {
	b, err := yaml.Marshal(r)
	if err != nil {
		return err
	}
	return os.WriteFile(path, b, 0o644)
}

// loopbackBlock owns one 127.B.0.0/16 for the run: Gateways get 127.B.0.N, Pods 127.B.1.N,
// static Gateway addresses 127.B.2.N, Services 127.B.3.N.
// A marker socket on 127.B.255.254 keeps a concurrent run off the block.
type loopbackBlock struct {
	net.Listener
	b    byte
	mu   sync.Mutex
	used [4]int
}

func claimLoopback() (*loopbackBlock, error) {
	var last error
	for b := 30; b < 250; b += 7 {
		l, err := net.Listen("tcp", fmt.Sprintf("127.%d.255.254:65012", b))
		if err != nil {
			last = err
			continue
		}
		return &loopbackBlock{Listener: l, b: byte(b)}, nil
	}
	return nil, fmt.Errorf("no free loopback block for the run: %w", last)
}

// next hands out addresses of subnet 0 (Gateways), 1 (Pods), 2 (static addresses) or 3
// (Services).
func (l *loopbackBlock) next(subnet int) func() string {
	return func() string {
		l.mu.Lock()
		defer l.mu.Unlock()
		l.used[subnet]++
		n := l.used[subnet]
		return fmt.Sprintf("127.%d.%d.%d", l.b, subnet+n/250*4, n%250+1)
	}
}

// Summary is the run's result in a few lines: per profile, and the tests that failed.
func (o *Outcome) Summary() string {
	var b strings.Builder
	counts := map[string]int{}
	var failed []string
	for _, r := range o.Results {
		counts[r.Outcome]++
		if r.Outcome == "failed" {
			failed = append(failed, r.Name)
		}
	}
	fmt.Fprintf(&b, "tests run: %d passed, %d failed, %d skipped\n", counts["passed"], counts["failed"], counts["skipped"])
	if o.Report != nil {
		for _, p := range o.Report.ProfileReports {
			fmt.Fprintf(&b, "%s core: %s (%d passed, %d failed, %d skipped)", p.Name, p.Core.Result, p.Core.Statistics.Passed,
				p.Core.Statistics.Failed, p.Core.Statistics.Skipped)
			if p.Extended != nil {
				fmt.Fprintf(&b, "; extended: %s (%d passed, %d failed, %d skipped)", p.Extended.Result,
					p.Extended.Statistics.Passed, p.Extended.Statistics.Failed, p.Extended.Statistics.Skipped)
			}
			b.WriteString("\n")
		}
	}
	if len(failed) > 0 {
		fmt.Fprintf(&b, "failed: %s\n", strings.Join(failed, ", "))
	}
	for _, n := range o.Notes {
		fmt.Fprintf(&b, "note: %s\n", strings.SplitN(n, "\n", 2)[0])
	}
	return b.String()
}

// profiles are the suite's Gateway profiles by name (its own map is not exported).
var profiles = map[suite.ConformanceProfileName]suite.ConformanceProfile{
	suite.GatewayHTTPConformanceProfileName: suite.GatewayHTTPConformanceProfile,
	suite.GatewayTLSConformanceProfileName:  suite.GatewayTLSConformanceProfile,
	suite.GatewayTCPConformanceProfileName:  suite.GatewayTCPConformanceProfile,
	suite.GatewayUDPConformanceProfileName:  suite.GatewayUDPConformanceProfile,
	suite.GatewayGRPCConformanceProfileName: suite.GatewayGRPCConformanceProfile,
}

// ProfileFeatures are the features EG declares (EGFeatures) that the named profiles
// test, core or extended: the suite runs every test whose features are all supported, so
// declaring only these keeps a GATEWAY-HTTP run to the tests its report counts. An
// unknown profile is an error naming the known ones.
func ProfileFeatures(names []suite.ConformanceProfileName) ([]features.FeatureName, error) {
	want := sets.New[features.FeatureName]()
	for _, n := range names {
		p, ok := profiles[n]
		if !ok {
			known := make([]string, 0, len(profiles))
			for k := range profiles {
				known = append(known, string(k))
			}
			slices.Sort(known)
			return nil, fmt.Errorf("unknown conformance profile %q (known: %s)", n, strings.Join(known, ", "))
		}
		want = want.Union(p.CoreFeatures).Union(p.ExtendedFeatures)
	}
	var out []features.FeatureName
	for _, f := range EGFeatures() {
		if want.Has(f) {
			out = append(out, f)
		}
	}
	return out, nil
}

// CanBindPrivileged says whether this process may bind ports below 1024 on loopback, as
// Envoy must for the suite's Gateways (80, 443): root, CAP_NET_BIND_SERVICE, or a lowered
// net.ipv4.ip_unprivileged_port_start.
func CanBindPrivileged() error {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	_ = l.Close()
	for _, port := range []int{80, 443, 81, 444} {
		l, err := net.Listen("tcp", fmt.Sprintf("127.0.0.%d:%d", 200, port))
		if err == nil {
			_ = l.Close()
			return nil
		}
		if !errors.Is(err, syscall.EACCES) {
			continue // taken: try another
		}
		return fmt.Errorf(
			"Envoy must bind the suite's Gateway ports (80, 443) on loopback, and this process may not (%v): run as root or "+
				"with CAP_NET_BIND_SERVICE, or without Envoy (--no-envoy)",
			err)
	}
	return nil
}
