// Package patch is the last stage of the reference translator: it applies EnvoyPatchPolicies
// (type JSONPatch) to the xDS the earlier stages produced, the way EG v1.9 does, and records
// what every operation did. EG applies a patch to the protojson form of one generated
// resource, found by type URL and name, and reads the result back into the proto; a patch
// that fails is a user error that leaves the rest of the snapshot alone (EPP-04). EG's own
// status says little about which operation missed and why; the records here say it for each
// operation, which is what a user needs before an upgrade renames what their patch addresses
// (EPP-05).
package patch

import (
	"sort"

	egv1a1 "github.com/envoyproxy/gateway/api/v1alpha1"

	"github.com/egharness/egharness/translator/resource"
	"github.com/egharness/egharness/translator/result"
)

// Stage applies the patches under one EG configuration.
type Stage struct {
	// Enabled is extensionApis.enableEnvoyPatchPolicy (EPP-01): off by default.
	Enabled bool
	// MergeGateways: policies then target the GatewayClass instead of a Gateway (EPP-02).
	MergeGateways bool
	// NameSchemeV2 says which xDS name scheme the snapshot uses, so that a miss on a name can
	// say so (EPP-05).
	NameSchemeV2 bool
}

// Output is what the stage adds to a result: the policies' statuses and one record per
// operation of every EnvoyPatchPolicy, in the order EG considers them.
type Output struct {
	Statuses []result.ObjectStatus
	Patches  []result.PatchOutcome
	Warnings []string
}

// Apply patches x in place. objs are the admitted objects; statuses are what the earlier
// stages said about them (they tell which Gateways and GatewayClasses EG translates).
func (s Stage) Apply(objs []resource.Object, statuses []result.ObjectStatus, x *result.XDS) Output {
	policies := Sorted(objs)
	if len(policies) == 0 {
		return Output{}
	}
	targets := targetsOf(objs, statuses)
	snap := newSnapshot(x, s.NameSchemeV2)
	var out Output
	for _, p := range policies {
		decision := s.decide(p, targets)
		ref := resource.Ref{Kind: egv1a1.KindEnvoyPatchPolicy, Namespace: p.Namespace, Name: p.Name}
		if !decision.accepted {
			for i := range p.Spec.JSONPatches {
				out.Patches = append(out.Patches, miss(ref, i, ReasonNotApplied+": "+decision.why))
			}
			if decision.ancestor != nil {
				out.Statuses = append(out.Statuses, policyStatus(ref, *decision.ancestor, decision.conditions))
			}
			continue
		}
		var errs []string
		var notFound []string
		for i, op := range p.Spec.JSONPatches {
			rec, st := snap.apply(op)
			rec.Policy, rec.Operation = ref, i
			out.Patches = append(out.Patches, rec)
			switch {
			case st.notFound != "":
				notFound = append(notFound, st.notFound)
			case st.err != "":
				errs = append(errs, st.err)
			}
		}
		out.Statuses = append(out.Statuses,
			policyStatus(ref, *decision.ancestor, programmed(decision.conditions, errs, notFound)))
	}
	out.Warnings = snap.finish()
	return out
}

// Sorted returns the EnvoyPatchPolicies among objs in the order EG applies them: ascending
// priority (int32 min first), then older first, then namespace and name (EPP-03).
func Sorted(objs []resource.Object) []*egv1a1.EnvoyPatchPolicy {
	var out []*egv1a1.EnvoyPatchPolicy
	for _, o := range objs {
		if p, ok := o.Obj.(*egv1a1.EnvoyPatchPolicy); ok {
			out = append(out, p)
		}
	}
	sort.SliceStable(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if a.Spec.Priority != b.Spec.Priority {
			return a.Spec.Priority < b.Spec.Priority
		}
		if !a.CreationTimestamp.Equal(&b.CreationTimestamp) {
			return a.CreationTimestamp.Before(&b.CreationTimestamp)
		}
		if a.Namespace != b.Namespace {
			return a.Namespace < b.Namespace
		}
		return a.Name < b.Name
	})
	return out
}

func miss(ref resource.Ref, i int, reason string) result.PatchOutcome {
	return result.PatchOutcome{Policy: ref, Operation: i, Reason: reason}
}
