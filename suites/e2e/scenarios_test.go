package e2e

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	resourcev3 "github.com/envoyproxy/go-control-plane/pkg/resource/v3"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/egharness/egharness/harness/check"
	"github.com/egharness/egharness/harness/live"
	"github.com/egharness/egharness/harness/routecheck"
	"github.com/egharness/egharness/harness/scenario"
	"github.com/egharness/egharness/harness/xdsserver"
	"github.com/egharness/egharness/translator/result"
)

// One spec per scenario with traffic (kind and EG modes) or statuses (EG mode).
var _ = Describe("Scenarios", Label("kind"), func() {
	scs, err := load()
	if err != nil {
		It("loads the scenarios", func() { Fail(err.Error()) })
		return
	}
	for _, sc := range scs {
		sc := sc
		if !runsUnder(sc) {
			continue
		}
		e := sc.ExpectFor(*profileName)
		if len(e.Traffic) == 0 && len(e.Statuses) == 0 {
			continue
		}
		It(sc.Name, Label(sc.Area), func(ctx SpecContext) {
			if e2e.eg != nil {
				runEG(ctx, sc)
				return
			}
			if len(e.Traffic) == 0 {
				Skip("no traffic expectations (statuses are checked in EG mode)")
			}
			runKind(ctx, sc)
		})
	}
})

// dumpOnFailure keeps what the server served and Envoy's view of it for a failed spec.
var _ = AfterEach(func() {
	if !CurrentSpecReport().Failed() || e2e.kind == nil {
		return
	}
	dir := filepath.Join(*artifacts, "failed", strings.ReplaceAll(CurrentSpecReport().LeafNodeText, "/", "_"))
	dumpServer(dir)
	if err := e2e.kind.Dump(dir, adminPort); err != nil {
		GinkgoWriter.Printf("dump: %v\n", err)
	}
})

// serve puts the scenario's translation, endpoints moved onto the echo stand-ins, on the
// xDS server and waits until Envoy has ACKed its clusters and listeners (a NACK fails).
func serve(ctx context.Context, l *xdsserver.Loaded) {
	x, err := live.RewriteEndpoints(&l.Result.XDS, l.Result.IR, e2e.addrs)
	Expect(err).NotTo(HaveOccurred())
	res := *l.Result
	res.XDS = *x
	served := *l
	served.Result = &res
	start := time.Now()
	version, _, err := e2e.srv.Update(ctx, &served)
	Expect(err).NotTo(HaveOccurred())
	wctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	var nack *xdsserver.Nack
	err = e2e.srv.WaitFor(wctx, func(nodes []xdsserver.NodeStatus) bool {
		for _, n := range nodes {
			for _, nk := range n.Nacked {
				if n.ID == nodeID && nk.Version == version {
					nack = nk
					return true
				}
			}
		}
		return xdsserver.AckedAll(nodes, nodeID, version, resourcev3.ClusterType, resourcev3.ListenerType)
	})
	Expect(nack).To(BeNil(), "Envoy refused version %s: %v", version, nack)
	Expect(err).NotTo(HaveOccurred(), "Envoy did not ACK version %s within 60s; nodes %+v", version, e2e.srv.Nodes())
	AddReportEntry("xDS applied", time.Since(start).Round(time.Millisecond).String())
}

func runKind(ctx context.Context, sc *scenario.Scenario) {
	l, err := xdsserver.Translate(sc, *profileName)
	Expect(err).NotTo(HaveOccurred())
	if c := xdsserver.PortConflicts(&l.Result.XDS); len(c) > 0 {
		Skip("one Envoy cannot serve this scenario: " + strings.Join(c, "; "))
	}
	serve(ctx, l)
	table, err := routecheck.New(l.Result.XDS.Listeners, l.Result.XDS.Routes)
	Expect(err).NotTo(HaveOccurred())
	table.UseSecrets(l.Result.XDS.Secrets) // injected credentials, as check.Run reads them
	sent := 0
	for i, te := range sc.ExpectFor(*profileName).Traffic {
		exp := live.Expect(table, l.Result, te.Request)
		if exp.Skip != "" {
			AddReportEntry(fmt.Sprintf("traffic[%d] not replayed", i), exp.Skip)
			continue
		}
		port := live.EnvoyPort(&l.Result.XDS, te.Request.Port)
		var obs live.Observation
		// Envoy warms listeners and routes after its ACK; a few retries cover that, and a
		// weighted split gets more than one draw.
		Eventually(func(g Gomega) {
			obs = e2e.client.Do(ctx, te.Request, port, exp.TLS)
			if live.IsNotReplayable(obs) {
				return
			}
			g.Expect(live.Compare(exp, te.Request, te.Expect, obs, e2e.echoes)).To(BeEmpty(), "traffic[%d] %+v", i, te.Request)
		}).WithContext(ctx).WithTimeout(20 * time.Second).WithPolling(500 * time.Millisecond).Should(Succeed())
		if live.IsNotReplayable(obs) {
			AddReportEntry(fmt.Sprintf("traffic[%d] not replayed", i), obs.Err.Error())
			continue
		}
		sent++
	}
	AddReportEntry("requests", sent)
}

// runEG applies the scenario to a cluster running EG, checks the statuses EG writes, and
// sends the requests Envoy answers itself to the Gateway's address. Requests that reach a
// backend are not sent: scenario Services and EndpointSlices name no running pods.
func runEG(ctx context.Context, sc *scenario.Scenario) {
	applied, err := e2e.eg.Apply(ctx, sc.Objects)
	DeferCleanup(func(ctx SpecContext) { Expect(e2e.eg.Delete(ctx, applied)).To(Succeed()) })
	Expect(err).NotTo(HaveOccurred())
	e := sc.ExpectFor(*profileName)

	// Statuses: the same checks as the reference translator's, on what EG wrote.
	only := *sc
	only.Expect, only.ExpectByProfile = scenario.Expect{Statuses: e.Statuses}, nil
	Eventually(func(g Gomega) {
		res := &result.Result{}
		for _, o := range sc.Objects {
			if !named(e.Statuses, o.Ref().String()) {
				continue
			}
			st, err := e2e.eg.Status(ctx, o)
			g.Expect(err).NotTo(HaveOccurred())
			res.Statuses = append(res.Statuses, st)
		}
		res.Normalize()
		g.Expect(check.Run(&only, *profileName, res)).To(BeEmpty())
	}).WithContext(ctx).WithTimeout(90 * time.Second).WithPolling(2 * time.Second).Should(Succeed())

	if len(e.Traffic) == 0 {
		return
	}
	l, err := xdsserver.Translate(sc, *profileName)
	Expect(err).NotTo(HaveOccurred())
	table, err := routecheck.New(l.Result.XDS.Listeners, l.Result.XDS.Routes)
	Expect(err).NotTo(HaveOccurred())
	sent := 0
	for i, te := range e.Traffic {
		exp := live.Expect(table, l.Result, te.Request)
		if exp.Err != nil || (exp.Answer.Cluster != "" && exp.Answer.Status == 200) || exp.Weighted() {
			AddReportEntry(fmt.Sprintf("traffic[%d] not replayed", i),
				"reaches a backend (or a split): scenario backends are not running pods")
			continue
		}
		ns, name := gatewayOf(exp.Answer.Listener, sc)
		var addr string
		Eventually(func() string {
			addr, _ = e2e.eg.GatewayAddress(ctx, ns, name)
			return addr
		}).WithContext(ctx).WithTimeout(120*time.Second).WithPolling(2*time.Second).ShouldNot(BeEmpty(),
			"Gateway %s/%s has no address", ns, name)
		port := live.GatewayPort(l.Result.IR, live.EnvoyPort(&l.Result.XDS, te.Request.Port))
		client := live.Client{Addr: func(uint32) string { return fmt.Sprintf("%s:%d", addr, port) }}
		Eventually(func(g Gomega) {
			obs := client.Do(ctx, te.Request, port, exp.TLS)
			g.Expect(live.Compare(exp, te.Request, te.Expect, obs, nil)).To(BeEmpty(), "traffic[%d] %+v", i, te.Request)
		}).WithContext(ctx).WithTimeout(60 * time.Second).WithPolling(time.Second).Should(Succeed())
		sent++
	}
	AddReportEntry("requests", sent)
}

func named(exp []scenario.StatusExpect, ref string) bool {
	for _, s := range exp {
		if s.Object == ref {
			return true
		}
	}
	return false
}

// gatewayOf is the Gateway behind an xDS listener name (<namespace>/<gateway>/<listener>),
// or the scenario's first Gateway when the name does not say (XDSNameSchemeV2 names).
func gatewayOf(listener string, sc *scenario.Scenario) (string, string) {
	parts := strings.Split(listener, "/")
	for _, o := range sc.Objects {
		if o.Kind == "Gateway" && len(parts) >= 2 && o.Obj.GetNamespace() == parts[0] && o.Obj.GetName() == parts[1] {
			return parts[0], parts[1]
		}
	}
	for _, o := range sc.Objects {
		if o.Kind == "Gateway" {
			return o.Obj.GetNamespace(), o.Obj.GetName()
		}
	}
	return "", ""
}
