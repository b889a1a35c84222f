// Package check compares one translation result with a scenario's expectations and says,
// for each expectation that does not hold, what was expected and what came out.
package check

import (
	"fmt"

	"strings"

	"github.com/egharness/egharness/harness/scenario"
	"github.com/egharness/egharness/translator/resource"
	"github.com/egharness/egharness/translator/result"
)

// Failure is one expectation that did not hold.
type Failure struct {
	Check string // admission, statuses, xds, traffic, warnings, patches, golden
	Where string // the expectation's path in the scenario file, e.g. expect.statuses[2]
	Line  int
	Msg   string
}

func (f Failure) String() string {
	if f.Line > 0 {
		return fmt.Sprintf("%s (line %d): %s", f.Where, f.Line, f.Msg)
	}
	if f.Where != "" {
		return fmt.Sprintf("%s: %s", f.Where, f.Msg)
	}
	return f.Msg
}

type collector struct {
	s        *scenario.Scenario
	section  string
	failures []Failure
}

func (c *collector) failf(check, where, format string, args ...any) {
	path := c.section + "." + where
	c.failures = append(c.failures,
		Failure{Check: check, Where: path, Line: c.s.Line(path), Msg: fmt.Sprintf(format, args...)})
}

// Run checks res against the scenario's expectations under profile p.
func Run(s *scenario.Scenario, p string, res *result.Result) []Failure {
	section := "expect"
	if _, ok := s.ExpectByProfile[p]; ok {
		section = "expectByProfile." + p
	}
	c := &collector{s: s, section: section}
	e := s.ExpectFor(p)
	// A section not overridden keeps the base's path for line numbers.
	c.admission(e.Admission, res, sectionOf(s, p, "admission"))
	c.statuses(e.Statuses, res, sectionOf(s, p, "statuses"))
	c.xds(e.XDS, res, sectionOf(s, p, "xds"))
	c.traffic(e.Traffic, res, sectionOf(s, p, "traffic"))
	c.warnings(e.Warnings, res, sectionOf(s, p, "warnings"))
	c.patches(e.Patches, res, sectionOf(s, p, "patches"))
	c.snapshot(e.Snapshot, res, sectionOf(s, p, "snapshot"))
	return c.failures
}

// sectionOf is the path of the section that holds field's expectations under profile p:
// expectByProfile.p when that override sets the field, else the base expect.
func sectionOf(s *scenario.Scenario, p, field string) string {
	o, ok := s.ExpectByProfile[p]
	if !ok {
		return "expect"
	}
	overridden := map[string]bool{
		"admission": o.Admission != nil,
		"statuses":  o.Statuses != nil,
		"xds":       o.XDS != nil,
		"traffic":   o.Traffic != nil,
		"warnings":  o.Warnings != nil,
		"patches":   o.Patches != nil,
		"snapshot":  o.Snapshot != nil,
	}
	if overridden[field] {
		return "expectByProfile." + p
	}
	return "expect"
}

func (c *collector) admission(exp []scenario.AdmissionExpect, res *result.Result, section string) {
	c.section = section
	listed := map[resource.Ref]bool{}
	for i, a := range exp {
		ref, _ := resource.ParseRef(a.Object) // validated at load
		listed[ref] = true
		where := fmt.Sprintf("admission[%d]", i)
		got := res.AdmissionOf(ref)
		if got == nil {
			c.failf("admission", where, "%s: the implementation gave no admission verdict for it", a.Object)
			continue
		}
		if got.Allowed != a.Allowed {
			c.failf("admission", where, "%s: expected allowed=%t, got allowed=%t (message %q)", a.Object, a.Allowed, got.Allowed,
				got.Message)
			continue
		}
		if a.Message != "" && !strings.Contains(got.Message, a.Message) {
			c.failf("admission", where, "%s: message %q does not contain %q", a.Object, got.Message, a.Message)
		}
	}
	// An object the scenario does not list must be admitted: an unexpected refusal is a
	// behavior change.
	for _, got := range res.Admission {
		if !got.Allowed && !listed[got.Object] {
			c.failf("admission", "admission", "%s was refused, and the scenario does not expect it: %s", got.Object, got.Message)
		}
	}
}

func (c *collector) statuses(exp []scenario.StatusExpect, res *result.Result, section string) {
	c.section = section
	for i, st := range exp {
		where := fmt.Sprintf("statuses[%d]", i)
		ref, _ := resource.ParseRef(st.Object)
		os := res.Status(ref)
		if st.Absent && st.Parent == "" && st.Listener == "" {
			if os != nil {
				c.failf("statuses", where, "%s: expected no status, got %s", st.Object, describe(os.Conditions))
			}
			continue
		}
		if os == nil {
			// A parent or listener expected absent is absent when the object has no status
			// at all (egctl prints none for a policy without ancestors).
			if !st.Absent {
				c.failf("statuses", where, "%s: no status in the result", st.Object)
			}
			continue
		}
		var conds []result.Condition
		var what string
		switch {
		case st.Listener != "":
			what = fmt.Sprintf("%s listener %s", st.Object, st.Listener)
			ls := findListener(os, st.Listener)
			if ls == nil {
				c.failf("statuses", where, "%s: no such listener in the status (listeners: %s)", what, listenerNames(os))
				continue
			}
			if st.AttachedRoutes != nil && ls.AttachedRoutes != *st.AttachedRoutes {
				c.failf("statuses", where, "%s: attachedRoutes is %d, expected %d", what, ls.AttachedRoutes, *st.AttachedRoutes)
			}
			conds = ls.Conditions
		case st.Parent != "":
			what = fmt.Sprintf("%s parent %s", st.Object, st.Parent)
			pp, _ := scenario.ParseParent(st.Parent)
			ps := findParent(os, pp)
			if st.Absent {
				if ps != nil {
					c.failf("statuses", where, "%s: expected no entry, got %s", what, describe(ps.Conditions))
				}
				continue
			}
			if ps == nil {
				c.failf("statuses", where, "%s: no such parent in the status (parents: %s)", what, parentNames(os))
				continue
			}
			conds = ps.Conditions
		default:
			what = st.Object
			conds = os.Conditions
		}
		for j, ce := range st.Conditions {
			if msg := conditionMismatch(ce, conds); msg != "" {
				c.failf("statuses", fmt.Sprintf("%s.conditions[%d]", where, j), "%s: %s", what, msg)
			}
		}
		if st.Only {
			if extra := unlistedConditions(st.Conditions, conds); len(extra) > 0 {
				c.failf("statuses", where, "%s: conditions not listed (only: true): %s", what, describe(extra))
			}
		}
	}
}

// unlistedConditions are the conditions whose type no present (not absent) expectation names.
func unlistedConditions(exp []scenario.ConditionExpect, conds []result.Condition) []result.Condition {
	listed := map[string]bool{}
	for _, ce := range exp {
		if !ce.Absent {
			listed[ce.Type] = true
		}
	}
	var out []result.Condition
	for _, c := range conds {
		if !listed[c.Type] {
			out = append(out, c)
		}
	}
	return out
}

func conditionMismatch(ce scenario.ConditionExpect, conds []result.Condition) string {
	var got *result.Condition
	for i := range conds {
		if conds[i].Type == ce.Type {
			got = &conds[i]
			break
		}
	}
	if ce.Absent {
		if got != nil {
			return fmt.Sprintf("expected no %s condition, got %s", ce.Type, describe([]result.Condition{*got}))
		}
		return ""
	}
	if got == nil {
		return fmt.Sprintf("no %s condition (conditions: %s)", ce.Type, describe(conds))
	}
	var diffs []string
	if ce.Status != "" && ce.Status != got.Status {
		diffs = append(diffs, fmt.Sprintf("status %q, expected %q", got.Status, ce.Status))
	}
	if ce.Reason != "" && ce.Reason != got.Reason {
		diffs = append(diffs, fmt.Sprintf("reason %q, expected %q", got.Reason, ce.Reason))
	}
	if ce.Message != "" && !strings.Contains(got.Message, ce.Message) {
		diffs = append(diffs, fmt.Sprintf("message %q does not contain %q", got.Message, ce.Message))
	}
	if len(diffs) == 0 {
		return ""
	}
	return ce.Type + ": " + strings.Join(diffs, "; ")
}

func findListener(os *result.ObjectStatus, name string) *result.ListenerStatus {
	for i := range os.Listeners {
		if os.Listeners[i].Name == name {
			return &os.Listeners[i]
		}
	}
	return nil
}

func findParent(os *result.ObjectStatus, pp scenario.ParentParsed) *result.ParentStatus {
	for i := range os.Parents {
		r := os.Parents[i].Ref
		if r.Kind == pp.Kind && r.Namespace == pp.Namespace && r.Name == pp.Name && r.SectionName == pp.SectionName &&
			r.Port == pp.Port {
			return &os.Parents[i]
		}
	}
	return nil
}

func listenerNames(os *result.ObjectStatus) string {
	var n []string
	for _, l := range os.Listeners {
		n = append(n, l.Name)
	}
	return orNone(n)
}

func parentNames(os *result.ObjectStatus) string {
	var n []string
	for _, p := range os.Parents {
		n = append(n, p.Ref.String())
	}
	return orNone(n)
}

func orNone(list []string) string {
	if len(list) == 0 {
		return "none"
	}
	return strings.Join(list, ", ")
}

func describe(conds []result.Condition) string {
	if len(conds) == 0 {
		return "no conditions"
	}
	parts := make([]string, 0, len(conds))
	for _, c := range conds {
		parts = append(parts, fmt.Sprintf("%s=%s (%s: %q)", c.Type, c.Status, c.Reason, c.Message))
	}
	return strings.Join(parts, ", ")
}

func (c *collector) warnings(exp []string, res *result.Result, section string) {
	c.section = section
	for i, w := range exp {
		found := false
		for _, got := range res.Warnings {
			if strings.Contains(got, w) {
				found = true
				break
			}
		}
		if !found {
			c.failf("warnings", fmt.Sprintf("warnings[%d]", i), "no warning contains %q (warnings: %s)", w, orNone(res.Warnings))
		}
	}
}
