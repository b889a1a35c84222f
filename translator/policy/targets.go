package policy

import (
	"sort"
	"time"

	egv1a1 "github.com/envoyproxy/gateway/api/v1alpha1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	gwapiv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/egharness/egharness/translator/refgrant"
)

// target is one resolved policy target: a targetRef (in the policy's namespace) or an
// object a targetSelector matched.
type target struct {
	group, kind, namespace, name string
	section                      *string
}

func (t target) sectionOr() string {
	if t.section == nil {
		return ""
	}
	return *t.section
}

// candidate is an object a targetSelector may match.
type candidate struct {
	kind      string
	namespace string
	name      string
	labels    map[string]string
	created   time.Time
}

// fromRefs are the policy's targetRef and targetRefs, in its namespace (POL-01: a
// targetRef never leaves the policy's namespace).
func fromRefs(refs egv1a1.PolicyTargetReferences, ns string) []target {
	var out []target
	for _, r := range refs.GetTargetRefs() {
		if r == (gwapiv1.LocalPolicyTargetReferenceWithSectionName{}) {
			continue
		}
		t := target{group: string(r.Group), kind: string(r.Kind), namespace: ns, name: string(r.Name)}
		if r.SectionName != nil {
			s := string(*r.SectionName)
			t.section = &s
		}
		out = append(out, t)
	}
	return out
}

// resolve is every target of the policy among the candidates: what its targetSelectors
// match (oldest object first), then its targetRefs not already matched.
func (w *world) resolve(policyKind string, refs egv1a1.PolicyTargetReferences, ns string,
	cands ...[]candidate) []target {
	type hit struct {
		t       target
		created time.Time
	}
	var hits []hit
	seen := map[target]bool{}
	for _, sel := range refs.TargetSelectors {
		group := gwapiv1.GroupName
		if sel.Group != nil {
			group = string(*sel.Group)
		}
		selector, err := metav1.LabelSelectorAsSelector(
			&metav1.LabelSelector{MatchLabels: sel.MatchLabels, MatchExpressions: sel.MatchExpressions})
		if err != nil {
			selector = labels.Nothing()
		}
		for _, list := range cands {
			for _, c := range list {
				if c.kind != string(sel.Kind) || group != gwapiv1.GroupName {
					continue
				}
				if !w.namespaceSelected(sel.Namespaces, ns, c.namespace) || !selector.Matches(labels.Set(c.labels)) {
					continue
				}
				if c.namespace != ns && !w.granted(policyKind, ns, c.kind, c.namespace, c.name) {
					continue
				}
				t := target{group: group, kind: c.kind, namespace: c.namespace, name: c.name}
				if seen[t] {
					continue
				}
				seen[t] = true
				hits = append(hits, hit{t, c.created})
			}
		}
	}
	sort.SliceStable(hits, func(i, j int) bool { return hits[i].created.Before(hits[j].created) })
	out := make([]target, 0, len(hits))
	for _, h := range hits {
		out = append(out, h.t)
	}
	for _, t := range fromRefs(refs, ns) {
		if t.section == nil && seen[t] {
			continue
		}
		out = append(out, t)
	}
	return out
}

// namespaceSelected applies a targetSelector's namespaces (its own namespace unless it
// says otherwise).
func (w *world) namespaceSelected(n *egv1a1.TargetSelectorNamespaces, policyNS, targetNS string) bool {
	if n == nil {
		return targetNS == policyNS
	}
	switch n.From {
	case "", egv1a1.TargetNamespaceFromSame:
		return targetNS == policyNS
	case egv1a1.TargetNamespaceFromAll:
		return true
	case egv1a1.TargetNamespaceFromSelector:
		lbls, ok := w.topo.NamespaceLabels[targetNS]
		if !ok || n.Selector == nil {
			return false
		}
		sel, err := metav1.LabelSelectorAsSelector(n.Selector)
		return err == nil && sel.Matches(labels.Set(lbls))
	}
	return false
}

// granted: a ReferenceGrant in the target's namespace lets this policy kind in the
// policy's namespace select the target (a Gateway API object).
func (w *world) granted(policyKind, fromNS, toKind, toNS, toName string) bool {
	return w.grants.Permits(refgrant.From{Group: egv1a1.GroupName, Kind: policyKind, Namespace: fromNS},
		refgrant.To{Group: gwapiv1.GroupName, Kind: toKind, Namespace: toNS, Name: toName})
}
