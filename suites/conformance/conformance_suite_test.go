// Package conformance runs every scenario under every profile it names against the
// reference translator: one ginkgo spec per scenario and profile, labelled with the
// scenario's area, labels, behavior IDs and profile so that
// `ginkgo --label-filter='RT-09 && v1.9'` picks them out.
package conformance

import (
	"context"
	"fmt"
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
	goldenRoot   = "../../golden"
)

func TestConformance(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "Conformance")
}

// The tree is built from the scenario files when the suite starts.
var _ = Describe("Scenarios", func() {
	_, set := specs.Scenarios(scenarioRoot)
	if set == nil {
		return
	}
	for _, e := range set.Errors {
		e := e
		It("loads "+strings.TrimPrefix(e.File, scenarioRoot+"/"), Label("load"), func() {
			Fail(e.Error())
		})
	}
	It("has scenarios", func() { Expect(set.Scenarios).NotTo(BeEmpty()) })

	opts := runner.Options{Impl: impl.Reference{}, GoldenRoot: goldenRoot}
	for _, job := range runner.Select(set.Scenarios, runner.Options{}) {
		job := job
		s := job.Scenario
		labels := append([]string{s.Area, job.Profile}, s.Covers...)
		labels = append(labels, s.Labels...)
		It(fmt.Sprintf("%s/%s [%s]", s.Area, s.Name, job.Profile), Label(labels...), func(ctx context.Context) {
			o := runner.RunOne(ctx, job, opts)
			Expect(o.Err).NotTo(HaveOccurred(), "translation of %s", s.File)
			var msgs []string
			for _, f := range o.Failures {
				msgs = append(msgs, f.Check+": "+f.String())
			}
			Expect(msgs).To(BeEmpty(), "%s [%s] (%s)", s.Name, job.Profile, s.File)
		})
	}
})
