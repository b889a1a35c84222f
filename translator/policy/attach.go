package policy

import (
	"fmt"
	"sort"
	"strings"

	egv1a1 "github.com/envoyproxy/gateway/api/v1alpha1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/egharness/egharness/translator/conditions"
	"github.com/egharness/egharness/translator/ir"
	"github.com/egharness/egharness/translator/result"
)

// kindInfo is what differs between SecurityPolicy, BackendTrafficPolicy and
// EnvoyExtensionPolicy, which attach by the same rules (SP-01, BTP-01, EEP-01).
type kindInfo[T any] struct {
	kind string
	// plural and routeOverride are the words EG's Merged/Overridden messages use.
	plural        string
	routeOverride string
	// slot is where the IR route keeps the policy of this kind.
	slot func(*ir.RoutePolicies) **ir.Applied[T]
	// deprecated maps deprecated spec fields the policy uses to their replacements.
	deprecated func(*T) map[string]string
	// validate, when set, is the feature translator's verdict on the effective spec for a
	// target of the given kind (Gateway, ListenerSet, or the xRoute kind): an error makes
	// the ancestor Accepted=False reason Invalid with the error as message, as EG's
	// translation errors do, and a failed merge is not recorded as Merged. It gets the
	// applied policy (a merge's spec and the owner of each field, for references that
	// resolve in the namespace of the policy that wrote them).
	validate func(a *ir.Applied[T], targetKind string) error
}

// pol is one policy object of a kind.
type pol[T any] struct {
	ref       ir.PolicyRef
	meta      metav1.Object
	refs      egv1a1.PolicyTargetReferences
	mergeType *egv1a1.MergeType
	spec      *T
	status    ancestors
	handled   bool
	// usesTargetRef: the deprecated singular targetRef is set.
	usesTargetRef bool
	// added are the values of fields a preview release's CRDs add beyond the Go types
	// (resource.Object.Added), by field path.
	added map[string]any
}

// attachState records which policy already took a target and its sections.
type attachState struct {
	attached bool
	sections map[string]bool
}

func (s *attachState) claimSection(name string) bool {
	if s.sections == nil {
		s.sections = map[string]bool{}
	}
	if s.sections[name] {
		return false
	}
	s.sections[name] = true
	return true
}

type sectionKey struct {
	namespacedName types.NamespacedName
	section        string
}

// resolveErr is why a policy cannot take a target: Accepted=False with this reason.
type resolveErr struct{ reason, msg string }

// engine attaches the policies of one kind, most specific scope first: route rules,
// routes, ListenerSet listeners, ListenerSets, Gateway listeners, Gateways. The first
// policy to reach an IR route keeps it (POL-02); policies are in age order, so the older
// one wins a tie (POL-03).
type engine[T any] struct {
	w          *world
	k          kindInfo[T]
	pols       []*pol[T]
	gwState    map[types.NamespacedName]*attachState
	lsState    map[types.NamespacedName]*attachState
	routeState map[routeKey]*attachState
	gwPolicy   map[sectionKey]*pol[T]
	lsPolicy   map[sectionKey]*pol[T]
	overrides  *scopeGraph
	merged     *scopeGraph
	// merges are the route policies merged into a parent scope's policy, and scoped the
	// Gateway and ListenerSet policies whose Merged and Overridden conditions list the
	// scopes below them: a merge whose features then fail is undone (unmerge).
	merges []mergeRecord
	scoped []scopedAncestor
	// merge combines a parent's and a route policy's specs (MRG-02..05).
	merge func(parent, child *pol[T]) (*ir.Applied[T], error)
}

func newEngine[T any](w *world, k kindInfo[T], pols []*pol[T]) *engine[T] {
	e := &engine[T]{
		w: w, k: k, pols: pols,
		gwState:    map[types.NamespacedName]*attachState{},
		lsState:    map[types.NamespacedName]*attachState{},
		routeState: map[routeKey]*attachState{},
		gwPolicy:   map[sectionKey]*pol[T]{},
		lsPolicy:   map[sectionKey]*pol[T]{},
		overrides:  newScopeGraph(),
		merged:     newScopeGraph(),
	}
	e.merge = mergePolicies[T]
	return e
}

func state[K comparable](m map[K]*attachState, k K) *attachState {
	s := m[k]
	if s == nil {
		s = &attachState{}
		m[k] = s
	}
	return s
}

func (e *engine[T]) run() {
	e.parentPolicies()
	isRoute := func(t target) bool { return t.kind != "Gateway" }
	isSet := func(t target) bool { return t.kind == "ListenerSet" }
	isGateway := func(t target) bool { return t.kind == "Gateway" }
	e.attach(isRoute, e.w.routeCands, e.forRoute)
	if len(e.w.sets) > 0 {
		e.attach(isSet, e.w.setCands, e.forListenerSet)
	}
	e.attach(isGateway, e.w.gatewayCands, e.forGateway)
	for _, p := range e.pols {
		p.status.truncate()
	}
}

// attach hands fn the targets of the kinds "of" accepts: first, for every policy, those
// its targetRefs name with a sectionName, then the whole objects its targetRefs and
// targetSelectors resolve to among cands.
func (e *engine[T]) attach(of func(target) bool, cands []candidate, fn func(*pol[T], target)) {
	for _, p := range e.pols {
		for _, t := range fromRefs(p.refs, p.meta.GetNamespace()) {
			if of(t) && t.section != nil {
				p.handled = true
				fn(p, t)
			}
		}
	}
	for _, p := range e.pols {
		for _, t := range e.w.resolve(e.k.kind, p.refs, p.meta.GetNamespace(), cands) {
			if of(t) && t.section == nil {
				p.handled = true
				fn(p, t)
			}
		}
	}
}

// parentPolicies finds, for each Gateway, Gateway listener, ListenerSet and ListenerSet
// listener, the oldest policy targeting it: the parent a route policy with mergeType
// merges with.
func (e *engine[T]) parentPolicies() {
	gatewayExists := func(namespacedName types.NamespacedName, section *string) bool {
		g := e.w.gateways[namespacedName]
		return g != nil && (section == nil || hasDirectListener(g, *section))
	}
	listenerSetExists := func(namespacedName types.NamespacedName, section *string) bool {
		listenerSet := e.w.sets[namespacedName]
		return listenerSet != nil && (section == nil || hasSetListener(listenerSet, *section))
	}
	for _, p := range e.pols {
		e.recordParent(p, "Gateway", e.w.gatewayCands, e.gwPolicy, gatewayExists)
		e.recordParent(p, "ListenerSet", e.w.setCands, e.lsPolicy, listenerSetExists)
	}
}

// recordParent makes p the parent policy of each target of kind it has among cands that
// exists (the object, and the section when it names one), unless an older policy already is.
func (e *engine[T]) recordParent(p *pol[T], kind string, cands []candidate, parents map[sectionKey]*pol[T],
	exists func(namespacedName types.NamespacedName, section *string) bool) {
	for _, t := range e.w.resolve(e.k.kind, p.refs, p.meta.GetNamespace(), cands) {
		if t.kind != kind {
			continue
		}
		namespacedName := types.NamespacedName{Namespace: t.namespace, Name: t.name}
		if !exists(namespacedName, t.section) {
			continue
		}
		k := sectionKey{namespacedName, t.sectionOr()}
		if _, ok := parents[k]; !ok {
			parents[k] = p
		}
	}
}

func (e *engine[T]) applied(p *pol[T]) *ir.Applied[T] {
	return &ir.Applied[T]{Policy: p.ref, Spec: p.spec}
}

// apply puts the policy on the IR routes that have none of this kind yet.
func (e *engine[T]) apply(rs []irRoute, a *ir.Applied[T], rule func(int) bool) {
	for _, r := range rs {
		if rule != nil && !rule(r.rule) {
			continue
		}
		if s := e.k.slot(r.policies); *s == nil {
			*s = a
		}
	}
}

func (e *engine[T]) conflict(what string) *resolveErr {
	return &resolveErr{reasonConflicted,
		fmt.Sprintf("Unable to target %s, another %s has already attached to it", what, e.k.kind)}
}

// check runs the kind's feature validation, if it has one.
func (e *engine[T]) check(a *ir.Applied[T], targetKind string) error {
	if e.k.validate == nil {
		return nil
	}
	return e.k.validate(a, targetKind)
}

// scopeConditions writes Merged and Overridden on a Gateway or ListenerSet policy's
// ancestor for the more specific scopes whose policies merged into it or replaced it, and
// removes them when no such scope is left (after unmerge).
func (e *engine[T]) scopeConditions(p *pol[T], anc result.ParentRef, own scope) {
	e.scoped = append(e.scoped, scopedAncestor{status: &p.status, anc: anc, own: own})
	e.writeScopeConditions(&p.status, anc, own)
}

func (e *engine[T]) writeScopeConditions(status *ancestors, anc result.ParentRef, own scope) {
	merged := e.merged.direct(own)
	overridden := e.overrides.withDescendants(own).minus(merged)
	if m := merged.describe(); m != "" {
		status.set(anc, conditions.New(condMerged, "True", reasonMerged,
			fmt.Sprintf("This policy is being merged by other %s for %s", e.k.plural, m)))
	} else {
		status.unset(anc, condMerged)
	}
	if m := overridden.describe(); m != "" {
		status.set(anc, conditions.New(condOverridden, "True", reasonOverridden,
			fmt.Sprintf("This policy is being overridden by other %s for %s", e.k.plural, m)))
	} else {
		status.unset(anc, condOverridden)
	}
}

// mergeRecord is one route policy merged into the policy of a parent scope.
type mergeRecord struct {
	child  ir.PolicyRef
	status *ancestors
	anc    result.ParentRef
	parent scope
	route  scope
}

// scopedAncestor is a Gateway or ListenerSet policy's ancestor that lists its scopes.
type scopedAncestor struct {
	status *ancestors
	anc    result.ParentRef
	own    scope
}

// unmerge undoes the merges of the route policies whose features could not be built: EG
// records a merge only once the merged policy is translated, so such a policy is not
// Merged, and the parent's policy counts its route as overridden, not merged.
func (e *engine[T]) unmerge(failed FeatureErrors) {
	changed := false
	for _, m := range e.merges {
		if _, ok := failed[m.child]; !ok {
			continue
		}
		e.merged.remove(m.parent, m.route)
		m.status.unset(m.anc, condMerged)
		changed = true
	}
	if !changed {
		return
	}
	for _, s := range e.scoped {
		e.writeScopeConditions(s.status, s.anc, s.own)
	}
}

func (e *engine[T]) warnDeprecated(p *pol[T], ancs ...result.ParentRef) {
	fields := map[string]string{}
	if p.usesTargetRef {
		fields["spec.targetRef"] = "spec.targetRefs"
	}
	if e.k.deprecated != nil {
		for k, v := range e.k.deprecated(p.spec) {
			fields[k] = v
		}
	}
	msg := deprecationMessage(fields)
	for _, a := range ancs {
		p.status.warn(a, reasonDeprecated, msg)
	}
}

func deprecationMessage(fields map[string]string) string {
	if len(fields) == 0 {
		return ""
	}
	keys := make([]string, 0, len(fields))
	for k := range fields {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, 0, len(keys))
	for _, k := range keys {
		parts = append(parts, k+" is deprecated, use "+fields[k]+" instead")
	}
	return strings.Join(parts, "; ")
}

// statuses lists the statuses of the policies EG handled: those with at least one target
// of a kind the policy can take.
func statuses[T any](pols []*pol[T], kind string) []result.ObjectStatus {
	var out []result.ObjectStatus
	for _, p := range pols {
		if !p.handled {
			continue
		}
		out = append(out, objectStatus(kind, p.meta, p.status.list))
	}
	return out
}
