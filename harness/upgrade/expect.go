package upgrade

import (
	"context"
	"fmt"
	"strings"

	"github.com/egharness/egharness/harness/impl"
	"github.com/egharness/egharness/harness/scenario"
	"github.com/egharness/egharness/translator/profile"
	"github.com/egharness/egharness/translator/resource"
)

// ScenarioPair is the two profiles a scenario's upgrade check runs between: its upgrade
// block's, else its first and last profile.
func ScenarioPair(s *scenario.Scenario) (from, to string) {
	if s.Upgrade != nil {
		return s.Upgrade.From, s.Upgrade.To
	}
	ps := s.ProfilesOrDefault()
	return ps[0], ps[len(ps)-1]
}

// CheckScenario runs the upgrade check of a scenario with the reference translator (or im)
// between from and to.
func CheckScenario(ctx context.Context, s *scenario.Scenario, im impl.Implementation, from, to string) (*Report,
	error) {
	if im == nil {
		im = impl.Reference{}
	}
	var sides [2]Side
	for i, name := range []string{from, to} {
		p, err := profile.Get(name)
		if err != nil {
			return nil, err
		}
		sides[i] = Side{Label: name, Impl: im, Profile: p}
	}
	return Check(ctx, Request{Objects: s.Objects, Config: s.Settings, From: sides[0], To: sides[1], Name: s.Name})
}

// Unmet compares a report with an upgrade block and words each difference: an expected
// finding missing (or present while marked absent), and a breaking or warning finding the
// block does not list. An expectation matches every finding with its ID, object and
// severity (and summary part, when set).
func Unmet(r *Report, exp *scenario.UpgradeExpect) []string {
	var out []string
	matches := func(e scenario.FindingExpect, f Finding) bool {
		if e.ID != f.ID || e.Object != f.Object.String() || e.Severity != string(f.Severity) ||
			(e.Summary != "" && !strings.Contains(f.Summary, e.Summary)) {
			return false
		}
		for _, a := range e.Affects {
			if !containsRefString(f.Context, a) {
				return false
			}
		}
		return true
	}
	for i, e := range exp.Findings {
		n := 0
		for _, f := range r.Findings {
			if matches(e, f) {
				n++
			}
		}
		switch {
		case e.Absent && n > 0:
			out = append(out,
				fmt.Sprintf("upgrade.findings[%d]: %s %s %s is found but must be absent", i, e.Severity, e.ID, e.Object))
		case !e.Absent && n == 0:
			out = append(out,
				fmt.Sprintf("upgrade.findings[%d]: no %s finding %s on %s%s; found:\n%s", i, e.Severity, e.ID, e.Object,
					summaryPart(e.Summary), listFindings(r)))
		}
	}
	for _, f := range r.Findings {
		if f.Severity == Info {
			continue
		}
		listed := false
		for _, e := range exp.Findings {
			if !e.Absent && matches(e, f) {
				listed = true
				break
			}
		}
		if !listed {
			out = append(out,
				fmt.Sprintf("unexpected %s finding %s on %s: %s (before: %s, after: %s)", f.Severity, f.ID, f.Object, f.Summary,
					f.Before, f.After))
		}
	}
	return out
}

func containsRefString(refs []resource.Ref, s string) bool {
	for _, r := range refs {
		if r.String() == s {
			return true
		}
	}
	return false
}

func summaryPart(s string) string {
	if s == "" {
		return ""
	}
	return fmt.Sprintf(" with summary containing %q", s)
}

func listFindings(r *Report) string {
	if len(r.Findings) == 0 {
		return "  (no findings)"
	}
	var b strings.Builder
	for _, f := range r.Findings {
		fmt.Fprintf(&b, "  - {id: %s, object: %s, severity: %s}  # %s\n", f.ID, f.Object, f.Severity, f.Summary)
	}
	return strings.TrimRight(b.String(), "\n")
}
