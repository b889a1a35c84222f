// Package e2e replays the scenarios against real proxies (label kind; `make e2e`).
//
// Kind mode (default): a kind cluster is created through kind's Go API, Envoy and echo
// backend images are loaded into it, Envoy runs on the node's network with a bootstrap that
// points at an xDS server this suite runs (harness/xdsserver), and each scenario's
// translation is served in turn, with its endpoints moved onto echo stand-ins. Every traffic
// expectation is sent as a real HTTP, gRPC, TLS or TCP request and the answer is compared
// with the offline route checker's.
//
// EG mode (--kubeconfig FILE): the scenario objects are applied to a cluster that runs a
// real Envoy Gateway, the statuses EG writes are checked against the scenario, and the
// requests Envoy answers itself (404s, redirects, direct responses) are sent to the
// Gateway's address.
//
// Without a container runtime (kind mode) the suite skips with one line saying so; it also
// skips unless the kind label is selected, so `go test ./...` never creates a cluster.
package e2e

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"google.golang.org/grpc"

	"github.com/egharness/egharness/harness/catalog"
	"github.com/egharness/egharness/harness/live"
	"github.com/egharness/egharness/harness/scenario"
	"github.com/egharness/egharness/harness/xdsserver"
	"sigs.k8s.io/kind/pkg/cluster"
)

const scenarioRoot = "../../scenarios"

var (
	kubeconfig = flag.String("kubeconfig", "",
		"EG mode: a cluster running Envoy Gateway v1.9 to apply scenarios to (kind mode when empty)")
	clusterName = flag.String("kind-cluster", "egharness-e2e",
		"kind mode: the cluster to create (an existing one of that name is reused)")
	keepCluster = flag.Bool("keep-cluster", false, "kind mode: keep the cluster after the run")
	nodeImage   = flag.String("node-image", "", "kind mode: kind node image (kind's default when empty)")
	envoyImage  = flag.String("envoy-image", live.DefaultEnvoyImage, "kind mode: Envoy image")
	echoImage   = flag.String("echo-image", live.DefaultEchoImage, "kind mode: echo backend image")
	xdsPort     = flag.Int("xds-port", 18000, "kind mode: port of the suite's xDS server on this machine")
	profileName = flag.String("profile", "v1.9",
		"the profile scenarios run under (EG mode: the EG version in the cluster)")
	artifacts = flag.String("artifacts", "../../_artifacts/e2e", "where state dumps and timings are written")
)

const (
	nodeID    = "envoy-e2e"
	adminPort = 19000
)

func TestE2E(t *testing.T) {
	// Say why nothing runs in one line, before ginkgo prints a tree of skipped specs.
	// A dry run (-ginkgo.dry-run) lists the specs without a cluster.
	cfg, _ := GinkgoConfiguration()
	if !selected() {
		t.Skip("e2e: not selected; run `make e2e` (the kind label)")
	}
	if *kubeconfig == "" && !cfg.DryRun {
		if _, _, err := live.Runtime(); err != nil {
			t.Skip("kind suite skipped: " + err.Error())
		}
	}
	RegisterFailHandler(Fail)
	RunSpecs(t, "E2E (kind)")
}

// env is what BeforeSuite set up.
type env struct {
	kind   *live.Kind
	srv    *xdsserver.Server
	client live.Client
	// echoes maps an echo Deployment to the backend it stands in for; addrs a backend to
	// its echo Service's address.
	echoes map[string]string
	addrs  map[string]string
	eg     *live.EG
	active bool
}

var e2e env

// selected: the suite only acts when its label is asked for (make e2e), never under a
// plain go test ./...
func selected() bool { return strings.Contains(GinkgoLabelFilter(), "kind") }

func load() ([]*scenario.Scenario, error) {
	cat, err := catalog.Load()
	if err != nil {
		return nil, err
	}
	set, err := scenario.Loader{Catalog: cat, Root: scenarioRoot}.LoadPaths(scenarioRoot)
	if err != nil {
		return nil, err
	}
	if len(set.Errors) > 0 {
		return nil, set.Errors[0]
	}
	return set.Scenarios, nil
}

// runsUnder reports whether the scenario runs under the suite's profile.
func runsUnder(sc *scenario.Scenario) bool {
	for _, p := range sc.ProfilesOrDefault() {
		if p == *profileName {
			return true
		}
	}
	return false
}

var _ = BeforeSuite(func(ctx SpecContext) {
	if !selected() {
		Skip("e2e: not selected; run `make e2e` (ginkgo --label-filter=kind)")
	}
	if *kubeconfig != "" {
		eg, err := live.ConnectEG(*kubeconfig)
		Expect(err).NotTo(HaveOccurred())
		e2e.eg, e2e.active = eg, true
		return
	}
	opt, runtimeName, err := live.Runtime()
	if err != nil {
		Skip("kind suite skipped: " + err.Error())
	}
	e2e.active = true
	scs, err := load()
	Expect(err).NotTo(HaveOccurred())

	// Delete the cluster however the suite ends (a failure, Ctrl-C): the cleanup is in
	// place before the cluster exists. State is dumped first.
	provider := cluster.NewProvider(opt)
	DeferCleanup(func() {
		if e2e.kind != nil {
			if err := e2e.kind.Dump(filepath.Join(*artifacts, "cluster"), adminPort); err != nil {
				GinkgoWriter.Printf("dump: %v\n", err)
			}
		}
		dumpServer(filepath.Join(*artifacts, "xds"))
		if !*keepCluster {
			GinkgoWriter.Printf("deleting kind cluster %s\n", *clusterName)
			_ = provider.Delete(*clusterName, "")
		}
	})
	start := time.Now()
	k, err := live.CreateKind(*clusterName, runtimeName, opt, *nodeImage, 5*time.Minute)
	Expect(err).NotTo(HaveOccurred())
	e2e.kind = k
	AddReportEntry("cluster ready", time.Since(start).Round(time.Millisecond).String())
	for _, img := range []string{*envoyImage, *echoImage} {
		Expect(k.LoadImage(img)).To(Succeed())
	}

	// The xDS server, on every address of this machine: the node reaches it through the
	// runtime network's gateway.
	e2e.srv = xdsserver.New(context.Background(), xdsserver.Options{})
	lis, err := net.Listen("tcp", fmt.Sprintf(":%d", *xdsPort))
	Expect(err).NotTo(HaveOccurred())
	g := grpc.NewServer()
	e2e.srv.Register(g)
	go func() { _ = g.Serve(lis) }()
	DeferCleanup(g.Stop)

	hostIP, err := k.HostIP()
	Expect(err).NotTo(HaveOccurred())
	nodeIP, err := k.NodeIP()
	Expect(err).NotTo(HaveOccurred())
	boot, err := live.Bootstrap(
		live.BootstrapOptions{XDSAddress: net.JoinHostPort(hostIP, fmt.Sprint(*xdsPort)), NodeID: nodeID,
			NodeCluster: "egharness-e2e", AdminPort: adminPort})
	Expect(err).NotTo(HaveOccurred())
	bootYAML, err := live.BootstrapYAML(boot)
	Expect(err).NotTo(HaveOccurred())

	// One echo stand-in per backend any scenario uses.
	var backends []string
	for _, sc := range scs {
		if !runsUnder(sc) {
			continue
		}
		l, err := xdsserver.Translate(sc, *profileName)
		Expect(err).NotTo(HaveOccurred())
		backends = append(backends, live.Backends(l.Result.IR)...)
	}
	echo := live.EchoBackends(backends)
	manifests, err := live.EncodeManifests(
		live.Manifests(live.ManifestOptions{EnvoyImage: *envoyImage, EchoImage: *echoImage, Bootstrap: bootYAML, Echo: echo}))
	Expect(err).NotTo(HaveOccurred())
	Expect(os.MkdirAll(*artifacts, 0o755)).To(Succeed())
	Expect(os.WriteFile(filepath.Join(*artifacts, "manifests.yaml"), manifests, 0o644)).To(Succeed())
	_, err = k.Kubectl(manifests, "apply", "-f", "-")
	Expect(err).NotTo(HaveOccurred())
	_, err = k.Kubectl(nil, "wait", "--for=condition=Available", "deployment", "--all", "-n", live.Namespace,
		"--timeout=300s")
	Expect(err).NotTo(HaveOccurred())

	out, err := k.Kubectl(nil, "get", "services", "-n", live.Namespace, "-o",
		`jsonpath={range .items[*]}{.metadata.name}={.spec.clusterIP}{"\n"}{end}`)
	Expect(err).NotTo(HaveOccurred())
	ips := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		if name, ip, ok := strings.Cut(line, "="); ok {
			ips[name] = ip
		}
	}
	e2e.echoes, e2e.addrs = map[string]string{}, map[string]string{}
	for _, e := range echo {
		Expect(ips).To(HaveKey(e.Name))
		e2e.echoes[e.Name] = e.Backend
		e2e.addrs[e.Backend] = net.JoinHostPort(ips[e.Name], fmt.Sprint(live.EchoPort))
	}
	e2e.client = live.Client{Addr: func(port uint32) string { return net.JoinHostPort(nodeIP, fmt.Sprint(port)) }}
	AddReportEntry("environment ready", time.Since(start).Round(time.Millisecond).String())
})

// dumpServer writes what the xDS server serves and what Envoy said about it.
func dumpServer(dir string) {
	if e2e.srv == nil {
		return
	}
	_ = os.MkdirAll(dir, 0o755)
	if v, err := e2e.srv.View(); err == nil && v != nil {
		if b, err := json.MarshalIndent(v, "", "  "); err == nil {
			_ = os.WriteFile(filepath.Join(dir, "snapshots.json"), b, 0o644)
		}
	}
	if b, err := json.MarshalIndent(e2e.srv.Events(), "", "  "); err == nil {
		_ = os.WriteFile(filepath.Join(dir, "events.json"), b, 0o644)
	}
}

// Per-spec timing, written next to the dumps (ginkgo's own report has it too).
var _ = ReportAfterSuite("timings", func(r Report) {
	if !e2e.active {
		return
	}
	type timing struct {
		Spec     string  `json:"spec"`
		State    string  `json:"state"`
		Seconds  float64 `json:"seconds"`
		Failure  string  `json:"failure,omitempty"`
		Requests int     `json:"requests,omitempty"`
	}
	var out []timing
	for _, s := range r.SpecReports {
		t := timing{Spec: s.FullText(), State: s.State.String(), Seconds: s.RunTime.Seconds(), Failure: s.FailureMessage()}
		for _, e := range s.ReportEntries {
			if e.Name == "requests" {
				fmt.Sscan(e.StringRepresentation(), &t.Requests)
			}
		}
		if t.Spec == "" {
			t.Spec = s.LeafNodeType.String()
		}
		out = append(out, t)
	}
	b, _ := json.MarshalIndent(out, "", "  ")
	_ = os.MkdirAll(*artifacts, 0o755)
	_ = os.WriteFile(filepath.Join(*artifacts, "timings.json"), b, 0o644)
})
