package policy

import (
	"sort"

	"github.com/egharness/egharness/translator/conditions"
	"github.com/egharness/egharness/translator/result"
)

// controllerName is EG's controller; every ancestor entry it writes carries it.
const controllerName = "gateway.envoyproxy.io/gatewayclass-controller"

// maxAncestors is the Gateway API CRD's limit on status.ancestors (POL-05).
const maxAncestors = 16

// softCap keeps one entry more than the limit while ancestors are added, so that the final
// truncation still sees that there were too many and writes Aggregated; bounding the list
// as it grows keeps each update O(1) for a policy with thousands of ancestors.
const softCap = maxAncestors + 1

const msgAggregated = "Ancestors have been truncated because the number of policy ancestors exceeds 16."

// Condition types and reasons of policy ancestors.
const (
	condAccepted   = "Accepted"
	condOverridden = "Overridden"
	condMerged     = "Merged"
	condAggregated = "Aggregated"
	condWarning    = "Warning"

	reasonAccepted       = "Accepted"
	reasonConflicted     = "Conflicted"
	reasonTargetNotFound = "TargetNotFound"
	reasonInvalid        = "Invalid"
	reasonOverridden     = "Overridden"
	reasonMerged         = "Merged"
	reasonAggregated     = "Aggregated"
	reasonDeprecated     = "DeprecatedField"

	msgPolicyAccepted = "Policy has been accepted."
)

// ancestors is one policy's status.ancestors while it is built.
type ancestors struct {
	list []result.ParentStatus
}

// set sets a condition on the ancestor, adding the ancestor when it is new; a condition of
// the same type is replaced in place.
func (a *ancestors) set(ref result.ParentRef, c result.Condition) {
	for i := range a.list {
		if a.list[i].Ref == ref {
			a.list[i].Conditions = conditions.Set(a.list[i].Conditions, c)
			return
		}
	}
	a.list = append(a.list,
		result.ParentStatus{Ref: ref, ControllerName: controllerName, Conditions: []result.Condition{c}})
	if len(a.list) > softCap {
		worst := 0
		for i := 1; i < len(a.list); i++ {
			if lessAncestor(&a.list[worst], &a.list[i]) {
				worst = i
			}
		}
		a.list = append(a.list[:worst], a.list[worst+1:]...)
	}
}

// unset removes the ancestor's condition of the type, if it has one.
func (a *ancestors) unset(ref result.ParentRef, typ string) {
	for i := range a.list {
		if a.list[i].Ref != ref {
			continue
		}
		a.list[i].Conditions = conditions.Remove(a.list[i].Conditions, typ)
		return
	}
}

// has reports whether the ancestor already carries a condition of the type.
func (a *ancestors) has(ref result.ParentRef, typ string) bool {
	for i := range a.list {
		if a.list[i].Ref == ref && conditions.Has(a.list[i].Conditions, typ) {
			return true
		}
	}
	return false
}

func (a *ancestors) accept(ref result.ParentRef) {
	if !a.has(ref, condAccepted) {
		a.set(ref, conditions.New(condAccepted, "True", reasonAccepted, msgPolicyAccepted))
	}
}

func (a *ancestors) reject(ref result.ParentRef, reason, msg string) {
	a.set(ref, conditions.New(condAccepted, "False", reason, msg))
}

// warn adds a Warning, joining messages when the ancestor already has one.
func (a *ancestors) warn(ref result.ParentRef, reason, msg string) {
	if msg == "" {
		return
	}
	for i := range a.list {
		if a.list[i].Ref != ref {
			continue
		}
		for _, c := range a.list[i].Conditions {
			if c.Type != condWarning {
				continue
			}
			if c.Message != msg {
				msg = c.Message + "; " + msg
			}
			if c.Reason != reason {
				reason = "Warnings"
			}
		}
	}
	a.set(ref, conditions.New(condWarning, "True", reason, msg))
}

// truncate cuts the list to the CRD limit, keeping the ancestors a user most needs to see
// (not accepted first, then overridden, then the rest, each by namespace and name), and
// marks the last one Aggregated (POL-05).
func (a *ancestors) truncate() {
	if len(a.list) <= maxAncestors {
		return
	}
	sort.SliceStable(a.list, func(i, j int) bool { return lessAncestor(&a.list[i], &a.list[j]) })
	a.list = a.list[:maxAncestors]
	last := &a.list[maxAncestors-1]
	last.Conditions = conditions.Set(last.Conditions,
		conditions.New(condAggregated, "True", reasonAggregated, msgAggregated))
}

func rank(p *result.ParentStatus) int {
	for _, c := range p.Conditions {
		if c.Type == condAccepted && c.Status == "False" {
			return 0
		}
	}
	for _, c := range p.Conditions {
		if c.Type == condOverridden && c.Status == "True" {
			return 1
		}
	}
	return 2
}

func lessAncestor(a, b *result.ParentStatus) bool {
	ra, rb := rank(a), rank(b)
	if ra != rb {
		return ra < rb
	}
	if a.Ref.Namespace != b.Ref.Namespace {
		return a.Ref.Namespace < b.Ref.Namespace
	}
	return a.Ref.Name < b.Ref.Name
}
