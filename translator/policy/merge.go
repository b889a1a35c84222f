package policy

import (
	"encoding/json"
	"fmt"

	egv1a1 "github.com/envoyproxy/gateway/api/v1alpha1"
	jsonpatch "github.com/evanphx/json-patch/v5"
	"k8s.io/apimachinery/pkg/util/strategicpatch"

	"github.com/egharness/egharness/translator/ir"
)

// mergePolicies merges a route policy (child) into its parent's spec with the child's
// mergeType (MRG-03): StrategicMerge is Kubernetes strategic merge patch over the spec's
// Go type (lists merge by key where the type declares one), JSONMerge is RFC 7396 (objects
// merge, arrays are replaced). The child's values win (MRG-04). Each top-level field
// remembers which policy declared it: references resolve in its namespace (MRG-05).
func mergePolicies[T any](parent, child *pol[T]) (*ir.Applied[T], error) {
	base, err := json.Marshal(parent.spec)
	if err != nil {
		return nil, err
	}
	patch, err := json.Marshal(child.spec)
	if err != nil {
		return nil, err
	}
	var merged []byte
	switch *child.mergeType {
	case egv1a1.StrategicMerge:
		var zero T
		merged, err = strategicpatch.StrategicMergePatch(base, patch, zero)
		if err != nil {
			return nil, fmt.Errorf("error merging policies: error during strategic merge: %w", err)
		}
	case egv1a1.JSONMerge:
		merged, err = jsonpatch.MergePatch(base, patch)
		if err != nil {
			return nil, fmt.Errorf("error merging policies: error during JSON merge: %w", err)
		}
	default:
		return nil, fmt.Errorf("error merging policies: unsupported merge type: %v", *child.mergeType)
	}
	out := new(T)
	if err := json.Unmarshal(merged, out); err != nil {
		return nil, fmt.Errorf("error merging policies: %w", err)
	}
	a := &ir.Applied[T]{Policy: child.ref, MergedWith: []ir.PolicyRef{parent.ref}, Spec: out}
	// Which policy each top-level field came from: the child's when it sets the field.
	var childFields, parentFields map[string]json.RawMessage
	_ = json.Unmarshal(patch, &childFields)
	_ = json.Unmarshal(base, &parentFields)
	for f := range parentFields {
		if _, mine := childFields[f]; mine || isTargeting(f) {
			continue
		}
		if a.FieldOwner == nil {
			a.FieldOwner = map[string]ir.PolicyRef{}
		}
		a.FieldOwner[f] = parent.ref
	}
	// Inside a field both declare, the parent still owns what only it sets: EG resolves
	// such nested references (extAuth's backendRefs, oidc's clientIDRef...) in the
	// namespace of the policy that wrote them.
	for f, pv := range parentFields {
		if cv, both := childFields[f]; both && !isTargeting(f) {
			nestedOwners(a, f, pv, cv, parent.ref)
		}
	}
	return a, nil
}

// nestedOwners records parent as the owner of each path under prefix that the parent's
// object sets and the child's does not, descending into objects both set.
func nestedOwners[T any](a *ir.Applied[T], prefix string, parentJSON, childJSON json.RawMessage, parent ir.PolicyRef) {
	var pm, cm map[string]json.RawMessage
	if json.Unmarshal(parentJSON, &pm) != nil || json.Unmarshal(childJSON, &cm) != nil {
		return // not both objects: the child's value replaced the parent's
	}
	for k, pv := range pm {
		path := prefix + "." + k
		cv, both := cm[k]
		if !both {
			if a.FieldOwner == nil {
				a.FieldOwner = map[string]ir.PolicyRef{}
			}
			a.FieldOwner[path] = parent
			continue
		}
		nestedOwners(a, path, pv, cv, parent)
	}
}

// isTargeting: fields that say where a policy attaches, not what it does.
func isTargeting(f string) bool {
	switch f {
	case "targetRef", "targetRefs", "targetSelectors", "mergeType":
		return true
	}
	return false
}
