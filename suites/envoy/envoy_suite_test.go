// Package envoy is the real-Envoy tier as a ginkgo suite: every scenario under every profile
// it names is served over ADS to a real Envoy on loopback (harness/envoytier), which must
// ACK it, and every traffic expectation is sent through Envoy to local echo backends; the
// answers must agree with the scenario and with the offline route checker.
//
// Envoy comes from --envoy / $EGHARNESS_ENVOY or `make envoy`'s install. Without one the
// suite skips in one line, unless $EGHARNESS_REQUIRE_ENVOY=1 (CI), which makes it fail.
package envoy

import (
	"context"
	"fmt"
	"testing"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/egharness/egharness/harness/envoytier"
	"github.com/egharness/egharness/harness/runner"
	"github.com/egharness/egharness/suites/internal/specs"
)

const scenarioRoot = "../../scenarios"

var envoyBin string

func TestEnvoy(t *testing.T) {
	envoyBin = envoytier.FindForTest(t)
	RegisterFailHandler(Fail)
	RunSpecs(t, "Real Envoy")
}

var (
	tier *envoytier.Tier
	outs []*envoytier.Outcome
)

var _ = BeforeSuite(func(ctx SpecContext) {
	var err error
	tier, err = envoytier.Start(ctx, envoytier.Options{Envoy: envoyBin})
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(func() { Expect(tier.Close()).To(Succeed()) })
})

// jobs is how many specs the tree holds: the share check below runs only on a whole run.
var jobs int

// minReplayed is the share of traffic expectations that must go through Envoy on a whole
// run: a change that silently stops sending requests (a stand-in lost, a new skip) fails.
const minReplayed = 0.85

var _ = AfterSuite(func() {
	if tier == nil {
		return
	}
	s := envoytier.Summarize(tier.Version(), outs)
	fmt.Fprintln(GinkgoWriter, s.String())
	if len(outs) == jobs {
		share := float64(s.Replayed) / float64(s.Replayed+s.NotReplayed)
		Expect(share).To(BeNumerically(">=", minReplayed), "%s: only %.0f%% of the traffic expectations were sent", s,
			100*share)
	}
})

var _ = ReportAfterSuite("real Envoy summary", func(r Report) {
	if tier != nil {
		fmt.Println(envoytier.Summarize(tier.Version(), outs).String())
	}
})

var _ = Describe("Scenarios through real Envoy", Label("envoy"), func() {
	_, set := specs.Scenarios(scenarioRoot)
	if set == nil {
		return
	}
	for _, job := range runner.Select(set.Scenarios, runner.Options{}) {
		job := job
		jobs++
		s := job.Scenario
		It(fmt.Sprintf("%s/%s [%s]", s.Area, s.Name, job.Profile), Label(s.Area, job.Profile), func(ctx context.Context) {
			o := tier.Run(ctx, s, job.Profile, nil)
			outs = append(outs, o)
			AddReportEntry("real Envoy", o.Describe(true))
			Expect(o.Passed()).To(BeTrue(), "%s (%s)\n%s", s.Name, s.File, o.Describe(true))
		})
	}
})
