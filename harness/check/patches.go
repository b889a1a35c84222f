package check

import (
	"fmt"
	"strings"

	"github.com/egharness/egharness/harness/scenario"
	"github.com/egharness/egharness/translator/resource"
	"github.com/egharness/egharness/translator/result"
)

// patches checks EnvoyPatchPolicy operation outcomes. A miss is where a written patch
// silently does nothing, so the failure shows the whole record the implementation gave.
func (c *collector) patches(exp []scenario.PatchExpect, res *result.Result, section string) {
	c.section = section
	for i, pe := range exp {
		where := fmt.Sprintf("patches[%d]", i)
		ref, _ := resource.ParseRef(pe.Policy) // validated at load
		what := fmt.Sprintf("%s operation %d", pe.Policy, pe.Operation)
		var got *result.PatchOutcome
		var ops []int
		for j := range res.Patches {
			if res.Patches[j].Policy != ref {
				continue
			}
			ops = append(ops, res.Patches[j].Operation)
			if res.Patches[j].Operation == pe.Operation {
				got = &res.Patches[j]
				break
			}
		}
		if got == nil {
			c.failf("patches", where, "%s: no record of it (operations recorded for the policy: %s)", what, opList(ops))
			continue
		}
		gotOutcome := scenario.OutcomeMiss
		if got.Hit {
			gotOutcome = scenario.OutcomeHit
		}
		if gotOutcome != pe.Outcome {
			detail := ""
			if got.Reason != "" {
				detail = ": " + got.Reason
			}
			c.failf("patches", where, "%s: expected a %s, got a %s%s", what, pe.Outcome, gotOutcome, detail)
			continue
		}
		if pe.Reason != "" && !strings.Contains(got.Reason, pe.Reason) {
			c.failf("patches", where, "%s: reason %q does not contain %q", what, got.Reason, pe.Reason)
		}
	}
}

func opList(ops []int) string {
	if len(ops) == 0 {
		return "none"
	}
	s := make([]string, len(ops))
	for i, o := range ops {
		s[i] = fmt.Sprint(o)
	}
	return strings.Join(s, ", ")
}
