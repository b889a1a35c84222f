// Package peer runs every scenario against a real peer — egctl of EG v1.9.1 by default —
// and compares its facts with the reference translator's (see harness/facts). Each
// disagreement must be recorded on its scenario as a known divergence with its reason;
// any other fails. Specs carry the label peer and run with `make peer-check` (which sets
// the label filter); without that filter, or without egctl installed (`make peers`), the
// suite skips with one line, so `make test` never needs egctl.
//
// EGHARNESS_PEER names another implementation (egctl@v1.8.0, exec:...); EGHARNESS_PEERS
// the folder egctl is installed in (default: peers/ at the repository root).
package peer

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/egharness/egharness/harness/impl"
	"github.com/egharness/egharness/harness/runner"
	"github.com/egharness/egharness/suites/internal/specs"
)

const (
	scenarioRoot = "../../scenarios"
	peersRoot    = "../../peers"
	defaultPeer  = "egctl@v1.9.1"
)

func TestPeer(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "Peer")
}

// peer opens the implementation under test, or says why the suite does not run.
func peer() (impl.Implementation, string) {
	if !strings.Contains(GinkgoLabelFilter(), "peer") {
		return nil, "the peer suite runs with `make peer-check` (label filter peer)"
	}
	name := os.Getenv("EGHARNESS_PEER")
	if name == "" {
		name = defaultPeer
	}
	dir := os.Getenv("EGHARNESS_PEERS")
	if dir == "" {
		dir = peersRoot
	}
	im, err := impl.Open(name, impl.Options{PeersDir: dir})
	var ni *impl.NotInstalledError
	if errors.As(err, &ni) {
		return nil, err.Error()
	}
	Expect(err).NotTo(HaveOccurred())
	return im, ""
}

var _ = Describe("Peer", Label("peer"), func() {
	im, why := peer()
	if im == nil {
		It("runs against a real peer", func() { Skip(why) })
		return
	}
	_, set := specs.Scenarios(scenarioRoot)
	if set == nil {
		return
	}
	for _, e := range set.Errors {
		It("loads "+strings.TrimPrefix(e.File, scenarioRoot+"/"), func() { Fail(e.Error()) })
	}
	opts := runner.Options{Impl: im}
	for _, job := range runner.Select(set.Scenarios, runner.Options{}) {
		s := job.Scenario
		labels := append([]string{s.Area, job.Profile}, s.Covers...)
		name := fmt.Sprintf("%s/%s [%s] agrees with the reference on %s", s.Area, s.Name, job.Profile, im.Name())
		It(name, Label(labels...), func(ctx context.Context) {
			o := runner.RunOne(ctx, job, opts)
			if o.Skipped != "" {
				Skip(o.Skipped)
			}
			for _, e := range o.Explained {
				AddReportEntry("known divergence",
					strings.TrimSpace(e.Divergence.Reason)+"\nexplains: "+strings.Join(e.Items, "; "))
			}
			Expect(o.Err).NotTo(HaveOccurred(), "%s on %s: not explained by a divergence recorded on the scenario", im.Name(),
				s.File)
			var msgs []string
			for _, f := range o.Failures {
				msgs = append(msgs, f.Check+": "+f.String())
			}
			Expect(msgs).To(BeEmpty(), "%s [%s] (%s): differences from the reference that no divergence explains", s.Name,
				job.Profile, s.File)
		})
	}
})
