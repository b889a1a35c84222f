// Package refgrant is the one place the reference translator decides whether a
// cross-namespace reference is permitted by a ReferenceGrant (Gateway API GEP-709, RT-06,
// MRG-05). Every stage that resolves a reference into another namespace asks an Index:
// route backendRefs and mirrors, Backend refs, listener certificates, backend client
// certificates, BackendTLSPolicy CA bundles, HTTPRouteFilter credentials, policy targets
// (targetSelectors), policy Secrets and CA bundles, and policy backendRefs (ext_authz,
// ext_proc, ...).
//
// The rule, as EG v1.9 applies it (internal/gatewayapi/helpers.go,
// isCrossNamespaceReferencePermitted): a reference from an object of group/kind in
// namespace F to an object of group/kind/name in namespace T (T != F) is permitted only
// when some ReferenceGrant in namespace T has
//   - a `from` entry whose group, kind AND namespace are exactly the referrer's, and
//   - a `to` entry whose group and kind are exactly the target's and whose name is unset,
//     empty or exactly the target's name.
//
// A reference within one namespace needs no grant. The core group is "" (never "core").
package refgrant

import (
	gwapiv1 "sigs.k8s.io/gateway-api/apis/v1"
	gwapiv1b1 "sigs.k8s.io/gateway-api/apis/v1beta1"

	"github.com/egharness/egharness/translator/resource"
)

// From is the referring object: its API group ("" for core), kind and namespace.
type From struct {
	Group, Kind, Namespace string
}

// To is the referenced object: its API group ("" for core), kind, namespace and name.
type To struct {
	Group, Kind, Namespace, Name string
}

// Index holds the ReferenceGrants by the namespace they live in (the target namespace).
type Index struct {
	byNS map[string][]gwapiv1.ReferenceGrantSpec
}

// New indexes the ReferenceGrants (v1 and v1beta1) among objs; other objects are ignored.
func New(objs []resource.Object) *Index {
	grants := &Index{byNS: map[string][]gwapiv1.ReferenceGrantSpec{}}
	for _, o := range objs {
		switch v := o.Obj.(type) {
		case *gwapiv1.ReferenceGrant:
			grants.Add(v.Namespace, v.Spec)
		case *gwapiv1b1.ReferenceGrant:
			grants.Add(v.Namespace, gwapiv1.ReferenceGrantSpec(v.Spec))
		}
	}
	return grants
}

// Add records one grant living in namespace ns.
func (grants *Index) Add(ns string, spec gwapiv1.ReferenceGrantSpec) {
	if grants.byNS == nil {
		grants.byNS = map[string][]gwapiv1.ReferenceGrantSpec{}
	}
	grants.byNS[ns] = append(grants.byNS[ns], spec)
}

// Permits reports whether from may refer to to: the same namespace, or a grant in to's
// namespace that names from's group, kind and namespace and to's group, kind and name.
// A nil Index permits only same-namespace references.
func (grants *Index) Permits(from From, to To) bool {
	if from.Namespace == to.Namespace {
		return true
	}
	if grants == nil {
		return false
	}
	for _, g := range grants.byNS[to.Namespace] {
		if fromMatches(g.From, from) && toMatches(g.To, to) {
			return true
		}
	}
	return false
}

func fromMatches(froms []gwapiv1.ReferenceGrantFrom, from From) bool {
	for _, f := range froms {
		if string(f.Group) == from.Group && string(f.Kind) == from.Kind && string(f.Namespace) == from.Namespace {
			return true
		}
	}
	return false
}

func toMatches(tos []gwapiv1.ReferenceGrantTo, to To) bool {
	for _, t := range tos {
		if string(t.Group) == to.Group && string(t.Kind) == to.Kind &&
			(t.Name == nil || *t.Name == "" || string(*t.Name) == to.Name) {
			return true
		}
	}
	return false
}
