package upgrade

import (
	"fmt"
	"regexp"
	"sort"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/egharness/egharness/harness/catalog"
	"github.com/egharness/egharness/translator/resource"
	"github.com/egharness/egharness/translator/result"
)

// differ holds both results, what is known about the input objects, and the findings so far.
type differ struct {
	cat           *catalog.Catalog
	before, after *result.Result
	objects       map[resource.Ref]resource.Object
	// byNsName finds objects by namespace/name whatever their kind (xDS names carry no kind).
	byKindLower map[string]string // "httproute" → "HTTPRoute"
	// targets: policies by the object they target.
	targets map[resource.Ref][]resource.Ref
	// refused: objects refused by admission on either side (their statuses are not compared).
	refused  map[resource.Ref]bool
	findings []Finding
	// renames: the old name (or key) of everything renamed or moved in xDS, with the ID of
	// that finding, for the patches that address it.
	renames map[string]string
	// movedKeys: per xDS resource name, the keys (rate_limits...) of things that moved
	// away from it, with the ID of that finding.
	movedKeys map[string][]keyID
	// resRenamed: type and old name of a top-level xDS resource → its new name.
	resRenamed map[string]string
	// gwRoutes: the routes attached to each Gateway (built on first use, see routesOn).
	gwRoutes map[resource.Ref][]resource.Ref
}

type keyID struct{ key, id string }

func newDiffer(cat *catalog.Catalog, before, after *result.Result, objects []resource.Object) *differ {
	d := &differ{cat: cat, before: before, after: after, objects: map[resource.Ref]resource.Object{},
		byKindLower: map[string]string{}, targets: map[resource.Ref][]resource.Ref{},
		refused: map[resource.Ref]bool{}, renames: map[string]string{}, movedKeys: map[string][]keyID{},
		resRenamed: map[string]string{}}
	for _, o := range objects {
		d.objects[o.Ref()] = o
		d.byKindLower[strings.ToLower(o.Kind)] = o.Kind
		for _, t := range policyTargets(o) {
			d.targets[t] = append(d.targets[t], o.Ref())
		}
	}
	for _, o := range objects {
		for _, t := range selectorTargets(o, objects) {
			if !containsRef(d.targets[t], o.Ref()) {
				d.targets[t] = append(d.targets[t], o.Ref())
			}
		}
	}
	return d
}

// add classifies and records a finding.
func (d *differ) add(change Change, obj resource.Ref, subjects []string, text, summary, before, after string, x *XDSRef,
	also ...string) {
	id, sev := classify(d.cat, change, subjects, text, also...)
	d.findings = append(d.findings, Finding{ID: id, Object: obj, Severity: sev, Summary: summary,
		Before: before, After: after, XDS: x, Change: change})
}

// policyTargets reads spec.targetRef and spec.targetRefs of any EG policy (all kinds share
// the shape), so a route's consequences can be traced to the policy that caused them.
func policyTargets(o resource.Object) []resource.Ref {
	if !strings.HasSuffix(o.Kind, "Policy") {
		return nil
	}
	type ref struct {
		Kind string `json:"kind"`
		Name string `json:"name"`
	}
	var spec struct {
		TargetRef  *ref  `json:"targetRef"`
		TargetRefs []ref `json:"targetRefs"`
	}
	if !readSpec(o, &spec) {
		return nil
	}
	refs := spec.TargetRefs
	if spec.TargetRef != nil {
		refs = append(refs, *spec.TargetRef)
	}
	var out []resource.Ref
	for _, r := range refs {
		out = append(out, resource.Ref{Kind: r.Kind, Namespace: o.Obj.GetNamespace(), Name: r.Name})
	}
	return out
}

// selectorTargets resolves spec.targetSelectors of an EG policy against the objects of its
// namespace (kind, matchLabels and matchExpressions; selectors reaching other namespaces are
// not followed), so a policy that selects its targets by label is found like one that names
// them.
func selectorTargets(o resource.Object, objects []resource.Object) []resource.Ref {
	if !strings.HasSuffix(o.Kind, "Policy") {
		return nil
	}
	var spec struct {
		TargetSelectors []struct {
			Kind             string                            `json:"kind"`
			MatchLabels      map[string]string                 `json:"matchLabels"`
			MatchExpressions []metav1.LabelSelectorRequirement `json:"matchExpressions"`
		} `json:"targetSelectors"`
	}
	if !readSpec(o, &spec) {
		return nil
	}
	var out []resource.Ref
	for _, ts := range spec.TargetSelectors {
		sel, err := metav1.LabelSelectorAsSelector(
			&metav1.LabelSelector{MatchLabels: ts.MatchLabels, MatchExpressions: ts.MatchExpressions})
		if err != nil {
			continue
		}
		for _, t := range objects {
			if t.Kind == ts.Kind && t.Obj.GetNamespace() == o.Obj.GetNamespace() && sel.Matches(labels.Set(t.Obj.GetLabels())) {
				out = append(out, t.Ref())
			}
		}
	}
	return out
}

func (d *differ) admission() {
	b := map[resource.Ref]result.Admission{}
	for _, a := range d.before.Admission {
		b[a.Object] = a
	}
	for _, a := range d.after.Admission {
		p, ok := b[a.Object]
		if !a.Allowed || (ok && !p.Allowed) {
			d.refused[a.Object] = true
		}
		if !ok || p.Allowed == a.Allowed {
			continue
		}
		kind := []string{a.Object.Kind}
		if p.Allowed {
			d.add(AdmissionRefused, a.Object, kind, a.Message, "the API server refuses the object on create and update",
				"admitted", "refused: "+a.Message, nil)
		} else {
			// What the object does once admitted is part of this finding, so that what it
			// brings (a listener's attached route) is traced to it.
			after := "admitted"
			for i := range d.after.Statuses {
				if d.after.Statuses[i].Object == a.Object {
					after += "; " + summarizeStatus(&d.after.Statuses[i])
				}
			}
			d.add(AdmissionAllowed, a.Object, kind, p.Message, "the API server now admits the object", "refused: "+p.Message,
				after, nil)
		}
	}
	for _, a := range d.before.Admission {
		if !a.Allowed {
			d.refused[a.Object] = true
		}
	}
}

func (d *differ) statuses() {
	after := map[resource.Ref]*result.ObjectStatus{}
	for i := range d.after.Statuses {
		after[d.after.Statuses[i].Object] = &d.after.Statuses[i]
	}
	before := map[resource.Ref]*result.ObjectStatus{}
	for i := range d.before.Statuses {
		before[d.before.Statuses[i].Object] = &d.before.Statuses[i]
	}
	for _, sb := range d.before.Statuses {
		ref := sb.Object
		if d.refused[ref] {
			continue
		}
		sa := after[ref]
		if sa == nil {
			d.add(ObjectUnseen, ref, []string{ref.Kind}, "", "no longer processed: the object gets no status and has no effect",
				summarizeStatus(&sb), "no status", nil, d.warningsAbout(ref)...)
			continue
		}
		d.conditions(ref, "", sb.Conditions, sa.Conditions)
		d.listeners(ref, sb.Listeners, sa.Listeners)
		d.parents(ref, sb.Parents, sa.Parents)
	}
	for _, sa := range d.after.Statuses {
		if before[sa.Object] == nil && !d.refused[sa.Object] {
			d.add(ObjectSeen, sa.Object, []string{sa.Object.Kind}, "",
				"newly processed: the object now gets a status and takes effect",
				"no status", summarizeStatus(&sa), nil, d.warningsAbout(sa.Object)...)
		}
	}
}

// warningsAbout is every warning, on either side, that names ref ("Kind ns/name: ...").
func (d *differ) warningsAbout(ref resource.Ref) []string {
	var out []string
	for _, r := range []*result.Result{d.before, d.after} {
		for _, w := range r.Warnings {
			if wr, ok := warningObject(w); ok && wr == ref {
				out = append(out, w)
			}
		}
	}
	return out
}

// warningObject reads the object a warning starts with: "Kind namespace/name: ..." or
// "Kind name: ...".
func warningObject(w string) (resource.Ref, bool) {
	head, _, ok := strings.Cut(w, ": ")
	if !ok {
		return resource.Ref{}, false
	}
	kind, nsName, ok := strings.Cut(head, " ")
	if !ok || kind == "" || strings.ContainsAny(nsName, " \t") || kind[0] < 'A' || kind[0] > 'Z' {
		return resource.Ref{}, false
	}
	if ns, name, ok := strings.Cut(nsName, "/"); ok {
		return resource.Ref{Kind: kind, Namespace: ns, Name: name}, true
	}
	return resource.Ref{Kind: kind, Name: nsName}, true
}

func summarizeStatus(s *result.ObjectStatus) string {
	var parts []string
	for _, c := range s.Conditions {
		parts = append(parts, c.Type+"="+c.Status)
	}
	for _, p := range s.Parents {
		for _, c := range p.Conditions {
			if c.Type == "Accepted" {
				parts = append(parts, p.Ref.String()+": Accepted="+c.Status)
			}
		}
	}
	if len(s.Listeners) > 0 {
		parts = append(parts, fmt.Sprintf("%d listeners", len(s.Listeners)))
	}
	if len(parts) == 0 {
		return "status present"
	}
	return strings.Join(parts, ", ")
}

// condKinds are the condition types whose False is a failure.
var condKinds = map[string]bool{"Accepted": true, "ResolvedRefs": true, "Programmed": true}

func condText(c *result.Condition) string {
	if c == nil {
		return "absent"
	}
	s := c.Type + "=" + c.Status
	if c.Reason != "" {
		s += " (" + c.Reason + ")"
	}
	if c.Message != "" {
		s += ": " + c.Message
	}
	return s
}

// conditions compares one condition list (of the object, of a parent, of a listener); where
// says which ("", "on Gateway/default/eg", "listener http").
func (d *differ) conditions(ref resource.Ref, where string, before, after []result.Condition) {
	b := map[string]*result.Condition{}
	var types []string
	for i := range before {
		b[before[i].Type] = &before[i]
		types = append(types, before[i].Type)
	}
	a := map[string]*result.Condition{}
	for i := range after {
		a[after[i].Type] = &after[i]
		if b[after[i].Type] == nil {
			types = append(types, after[i].Type)
		}
	}
	sort.Strings(types)
	at := ""
	if where != "" {
		at = " " + where
	}
	for _, t := range types {
		cb, ca := b[t], a[t]
		subjects := []string{ref.Kind, t}
		switch {
		case cb == nil:
			d.add(ConditionAdded, ref, subjects, ca.Message, fmt.Sprintf("new condition %s=%s%s", t, ca.Status, at), "absent",
				condText(ca), nil)
		case ca == nil:
			d.add(ConditionRemoved, ref, subjects, cb.Message, fmt.Sprintf("condition %s is no longer set%s", t, at),
				condText(cb), "absent", nil)
		case cb.Status != ca.Status:
			change := ConditionChanged
			summary := fmt.Sprintf("%s turns from %s to %s%s", t, cb.Status, ca.Status, at)
			if condKinds[t] && cb.Status == "True" && ca.Status == "False" {
				change = ConditionLost
				summary = fmt.Sprintf("%s turns False%s: %s", t, at, inertWhat(ref, t))
			} else if condKinds[t] && cb.Status == "False" && ca.Status == "True" {
				change = ConditionGained
			}
			text := ca.Message + " " + ca.Reason
			if change == ConditionGained {
				text += " " + cb.Message // what stopped it before says why it is gone
			}
			d.add(change, ref, subjects, text, summary, condText(cb), condText(ca), nil, cb.Message)
		case cb.Reason != ca.Reason || cb.Message != ca.Message:
			d.add(ConditionReworded, ref, subjects, ca.Message,
				fmt.Sprintf("condition %s keeps status %s with another reason or message%s", t, ca.Status, at), condText(cb),
				condText(ca), nil)
		}
	}
}

// inertWhat words what a lost condition means for the object.
func inertWhat(ref resource.Ref, t string) string {
	switch {
	case t == "Accepted" && strings.HasSuffix(ref.Kind, "Policy"):
		return "the policy is no longer in force"
	case t == "Accepted":
		return "no longer accepted"
	case t == "ResolvedRefs":
		return "some references no longer resolve"
	}
	return "no longer programmed"
}

func (d *differ) listeners(ref resource.Ref, before, after []result.ListenerStatus) {
	a := map[string]*result.ListenerStatus{}
	for i := range after {
		a[after[i].Name] = &after[i]
	}
	for _, lb := range before {
		la := a[lb.Name]
		if la == nil {
			continue
		}
		d.conditions(ref, "on listener "+lb.Name, lb.Conditions, la.Conditions)
		if lb.AttachedRoutes != la.AttachedRoutes {
			d.add(AttachedRoutes, ref, []string{ref.Kind}, "",
				fmt.Sprintf("listener %s: attached routes change from %d to %d", lb.Name, lb.AttachedRoutes, la.AttachedRoutes),
				fmt.Sprint(lb.AttachedRoutes), fmt.Sprint(la.AttachedRoutes), nil)
		}
	}
}

func (d *differ) parents(ref resource.Ref, before, after []result.ParentStatus) {
	a := map[string]*result.ParentStatus{}
	for i := range after {
		a[after[i].Ref.String()] = &after[i]
	}
	b := map[string]bool{}
	for _, pb := range before {
		key := pb.Ref.String()
		b[key] = true
		pa := a[key]
		if pa == nil {
			d.add(ParentLost, ref, []string{ref.Kind}, "", "no longer attached to "+key, key+": "+condsText(pb.Conditions),
				"absent", nil, d.warningsAbout(ref)...)
			continue
		}
		d.conditions(ref, "on "+key, pb.Conditions, pa.Conditions)
	}
	for _, pa := range after {
		if key := pa.Ref.String(); !b[key] {
			d.add(ParentGained, ref, []string{ref.Kind}, "", "newly attached to "+key, "absent",
				key+": "+condsText(pa.Conditions), nil, d.warningsAbout(ref)...)
		}
	}
}

func condsText(cs []result.Condition) string {
	var parts []string
	for i := range cs {
		parts = append(parts, cs[i].Type+"="+cs[i].Status)
	}
	return strings.Join(parts, ", ")
}

// egVersion is a version named in a warning ("EG v1.9 reads..."): a warning that differs
// only by the version is the same warning on both sides.
var egVersion = regexp.MustCompile(`EG v[0-9][0-9A-Za-z.-]*`)

// warnings reports warnings only the new side prints. Warnings about an object are
// attributed to it; the others to the configuration.
func (d *differ) warnings() {
	seen := map[string]bool{}
	for _, w := range d.before.Warnings {
		seen[egVersion.ReplaceAllString(w, "EG <version>")] = true
	}
	for _, w := range d.after.Warnings {
		norm := egVersion.ReplaceAllString(w, "EG <version>")
		if seen[norm] {
			continue
		}
		seen[norm] = true
		ref, ok := warningObject(w)
		if !ok {
			ref = resource.Ref{Kind: "EnvoyGateway", Name: "configuration"}
		}
		d.add(WarningAdded, ref, []string{ref.Kind}, w, "new warning: "+w, "", w, nil)
	}
}

// inherit gives findings that are consequences (xDS removed or fail-closed, a parent lost,
// a warning) the behavior ID of their cause when the rules left them unmapped: the object's
// own mapped finding, or that of a policy targeting the object. A Gateway listener whose
// attached routes change takes the ID of the route that came or went. A new warning that
// only repeats another finding of its object is dropped.
func (d *differ) inherit() {
	attach := map[Change]bool{ObjectUnseen: true, ObjectSeen: true, ParentLost: true, ParentGained: true,
		AdmissionAllowed: true}
	for i := range d.findings {
		f := &d.findings[i]
		if f.ID != Unmapped || f.Change != AttachedRoutes {
			continue
		}
		listener := strings.TrimPrefix(strings.SplitN(f.Summary, ":", 2)[0], "listener ")
		// A route names the listener (Gateway/ns/name/listener) or the whole Gateway
		// (Gateway/ns/name: conditions, or Gateway/ns/name:port: ...).
		at, whole := f.Object.String()+"/"+listener, f.Object.String()+":"
		names := func(s string) bool { return strings.Contains(s, at) || strings.Contains(s, whole) }
		for _, g := range d.findings {
			if attach[g.Change] && g.ID != Unmapped && (names(g.Before) || names(g.After)) {
				f.ID = g.ID
				break
			}
		}
	}
	// Causes are what happens to objects (admission, statuses), not other xDS changes of
	// theirs: a route whose JWT provider is renamed does not lose its routes for it.
	causes := map[Change]bool{AdmissionRefused: true, AdmissionAllowed: true, ObjectUnseen: true, ObjectSeen: true,
		ConditionLost: true, ConditionGained: true, ConditionChanged: true, ParentLost: true, ParentGained: true,
		AttachedRoutes: true,
		PatchMissed:    true, PatchHits: true} // a patch policy no longer Programmed because its operations miss
	cause := map[resource.Ref]Finding{}
	for _, f := range d.findings {
		if f.ID == Unmapped || !causes[f.Change] {
			continue
		}
		if c, ok := cause[f.Object]; !ok || f.Severity.rank() < c.Severity.rank() {
			cause[f.Object] = f
		}
	}
	patched := map[string]string{} // xDS resource a missed operation addressed → its ID
	for _, f := range d.findings {
		if f.Change == PatchMissed && f.XDS != nil {
			patched[f.XDS.Type+"\x00"+f.XDS.Before] = f.ID
		}
	}
	consequence := map[Change]bool{Removed: true, Added: true, FailClosed: true, ParentLost: true, ParentGained: true,
		WarningAdded: true, ConditionLost: true, ConditionChanged: true, ConditionReworded: true, ShapeChanged: true}
	for i := range d.findings {
		f := &d.findings[i]
		if f.ID != Unmapped || !consequence[f.Change] {
			continue
		}
		// Where to look: the object itself, then the policies targeting it, then the routes
		// it affects and the policies targeting them or their Gateways; a route that fails
		// closed looks at its policies first, the route's then its Gateways' (its own
		// findings are rarely the cause). Among the policies of the context, one that turned
		// invalid (Accepted False: it fails routes closed) explains more than one the API
		// server refuses (that one is simply not applied), so those come first.
		lostFirst := func(refs []resource.Ref) []resource.Ref {
			var lost, rest []resource.Ref
			for _, r := range refs {
				if c, ok := cause[r]; ok && c.Change == ConditionLost {
					lost = append(lost, r)
				} else {
					rest = append(rest, r)
				}
			}
			return append(lost, rest...)
		}
		var ctxPolicies []resource.Ref
		for _, c := range f.Context {
			ctxPolicies = append(ctxPolicies, d.targets[c]...)
		}
		where := append([]resource.Ref{f.Object}, d.targets[f.Object]...)
		for _, c := range f.Context {
			if isRouteKind(c.Kind) {
				where = append(where, c)
			}
		}
		where = append(where, lostFirst(ctxPolicies)...)
		if f.Change == FailClosed {
			where = append(lostFirst(append(append([]resource.Ref(nil), d.targets[f.Object]...), ctxPolicies...)), f.Object)
		}
		for _, r := range where {
			if c, ok := cause[r]; ok {
				f.ID = c.ID
				// A route that fails closed because of a policy is the policy's to fix:
				// reported there, the route as context.
				if f.Change == FailClosed && r != f.Object {
					f.Context = append([]resource.Ref{f.Object}, f.Context...)
					f.Object = r
				}
				break
			}
		}
		// Else, xDS that a patch used to add to a resource goes when the patch misses.
		if f.ID == Unmapped && f.XDS != nil {
			if id, ok := patched[f.XDS.Type+"\x00"+f.XDS.Before]; ok {
				f.ID = id
			}
		}
	}
	// Drop warnings that repeat a finding of their object.
	has := map[string]bool{}
	for _, f := range d.findings {
		if f.Change != WarningAdded {
			has[f.Object.String()+"\x00"+f.ID] = true
		}
	}
	out := d.findings[:0]
	for _, f := range d.findings {
		if f.Change == WarningAdded && has[f.Object.String()+"\x00"+f.ID] {
			continue
		}
		out = append(out, f)
	}
	d.findings = out
}
