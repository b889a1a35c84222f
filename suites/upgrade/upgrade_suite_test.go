// Package upgrade runs every upgrade scenario through the upgrade-check machinery: a
// scenario with an `upgrade:` block, or one under scenarios/upgrade that runs under two or
// more profiles, is translated under both profiles of its pair and the findings are checked
// against the block. Specs are labelled with the scenario's area, behavior IDs and the pair.
package upgrade

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/egharness/egharness/harness/scenario"
	"github.com/egharness/egharness/harness/upgrade"
	"github.com/egharness/egharness/suites/internal/specs"
)

const scenarioRoot = "../../scenarios"

func TestUpgrade(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "Upgrade")
}

var _ = Describe("Upgrade scenarios", func() {
	cat, set := specs.Scenarios(scenarioRoot)
	if set == nil {
		return
	}
	var ups []*scenario.Scenario
	for _, s := range set.Scenarios {
		if s.IsUpgrade() {
			ups = append(ups, s)
		}
	}
	It("has upgrade scenarios", func() { Expect(ups).NotTo(BeEmpty()) })

	for _, s := range ups {
		from, to := upgrade.ScenarioPair(s)
		labels := append([]string{s.Area, "upgrade", from + "->" + to}, s.Covers...)
		name := fmt.Sprintf("%s/%s [%s → %s]", s.Area, s.Name, from, to)

		It(name, Label(labels...), func(ctx context.Context) {
			rep, err := upgrade.CheckScenario(ctx, s, nil, from, to)
			Expect(err).NotTo(HaveOccurred())
			if s.Upgrade != nil {
				Expect(upgrade.Unmet(rep, s.Upgrade)).To(BeEmpty(), "%s (%s)", name, s.File)
			} else {
				// Without an upgrade block (a scenario written before upgrade-check, or on
				// another branch) the findings are not listed, but the checks below hold.
				GinkgoWriter.Printf("%s has no upgrade: block; its findings:\n", s.File)
				for _, f := range rep.Findings {
					GinkgoWriter.Printf("  - {id: %s, object: %s, severity: %s}  # %s\n", f.ID, f.Object, f.Severity, f.Summary)
				}
			}
			for _, f := range rep.Findings {
				if f.Severity == upgrade.Info && s.Upgrade == nil {
					continue
				}
				Expect(f.ID).NotTo(Equal(upgrade.Unmapped),
					"every difference in an upgrade scenario (info ones too when it has an upgrade: block) is "+
						"explained by a rule: %s on %s",
					f.Summary, f.Object)
				Expect(cat.Get(f.ID)).NotTo(BeNil(), "finding ID %s is a behavior ID", f.ID)
			}
			// Each covered upgrade behavior shows up as a finding, not only as a profile
			// difference in the expectations.
			for _, id := range s.Covers {
				if b := cat.Get(id); b != nil && b.Upgrade {
					Expect(rep.Findings).To(ContainElement(HaveField("ID", id)), "%s covers %s: upgrade-check must report it", s.Name,
						id)
				}
			}
		})

		It(name+" renders every format deterministically", Label(labels...), func(ctx context.Context) {
			var first map[string]string
			for run := 0; run < 2; run++ {
				rep, err := upgrade.CheckScenario(ctx, s, nil, from, to)
				Expect(err).NotTo(HaveOccurred())
				out := map[string]string{}
				for _, format := range upgrade.Formats {
					var buf bytes.Buffer
					Expect(rep.Write(&buf, format)).To(Succeed())
					out[format] = buf.String()
				}
				if first == nil {
					first = out
					continue
				}
				Expect(out).To(Equal(first))
			}
			var doc struct {
				From     string `json:"from"`
				To       string `json:"to"`
				Findings []struct {
					ID     string `json:"id"`
					Object struct {
						Kind, Namespace, Name string
					} `json:"object"`
					Severity, Summary, Before, After string
					Context                          []struct {
						Kind, Namespace, Name string
					} `json:"context"`
				} `json:"findings"`
			}
			dec := json.NewDecoder(strings.NewReader(first["json"]))
			dec.DisallowUnknownFields()
			Expect(dec.Decode(&doc)).To(Succeed())
			Expect(doc.From).To(Equal(from))
			Expect(doc.To).To(Equal(to))
			Expect(first["html"]).NotTo(MatchRegexp(`(?i)<script|<link|src=|https?://`), "the page is self-contained")
		})

		It(name+" finds nothing between a profile and itself", Label(labels...), func(ctx context.Context) {
			for _, p := range []string{from, to} {
				rep, err := upgrade.CheckScenario(ctx, s, nil, p, p)
				Expect(err).NotTo(HaveOccurred())
				Expect(rep.Findings).To(BeEmpty(), "%s → %s", p, p)
			}
		})
	}
})
