package result

import "github.com/egharness/egharness/translator/resource"

// APIStatus is an object's status as the API server stores it (and as EG's testdata
// writes it): the part the checks compare. The live tier reads it from a cluster and the
// corpus from EG's *.out.yaml, so both read statuses by one rule.
type APIStatus struct {
	Conditions []Condition `json:"conditions"`
	Listeners  []struct {
		Name           string      `json:"name"`
		AttachedRoutes int32       `json:"attachedRoutes"`
		Conditions     []Condition `json:"conditions"`
	} `json:"listeners"`
	Parents []struct {
		ParentRef  ParentRef   `json:"parentRef"`
		Conditions []Condition `json:"conditions"`
	} `json:"parents"`
	Ancestors []struct {
		AncestorRef ParentRef   `json:"ancestorRef"`
		Conditions  []Condition `json:"conditions"`
	} `json:"ancestors"`
}

// ObjectStatus is the status of object in our result's form: route parents and policy
// ancestors both as Parents, each defaulted as the API defaults a parentRef, and every
// condition list present (empty, not absent, when the object has none).
func (s *APIStatus) ObjectStatus(object resource.Ref) ObjectStatus {
	out := ObjectStatus{Object: object, Conditions: []Condition{}}
	if s == nil {
		return out
	}
	out.Conditions = orEmpty(s.Conditions)
	for _, l := range s.Listeners {
		out.Listeners = append(out.Listeners,
			ListenerStatus{Name: l.Name, AttachedRoutes: l.AttachedRoutes, Conditions: orEmpty(l.Conditions)})
	}
	for _, p := range s.Parents {
		out.Parents = append(out.Parents,
			ParentStatus{Ref: p.ParentRef.Defaulted(object.Namespace), Conditions: orEmpty(p.Conditions)})
	}
	for _, a := range s.Ancestors {
		out.Parents = append(out.Parents,
			ParentStatus{Ref: a.AncestorRef.Defaulted(object.Namespace), Conditions: orEmpty(a.Conditions)})
	}
	return out
}

// Defaulted is the parentRef as the API defaults it on an object in namespace: a Gateway
// when it names no kind, in the object's namespace when it names none, except a
// GatewayClass, which is cluster-scoped and has no namespace.
func (p ParentRef) Defaulted(namespace string) ParentRef {
	if p.Kind == "" {
		p.Kind = "Gateway"
	}
	if p.Namespace == "" && p.Kind != "GatewayClass" {
		p.Namespace = namespace
	}
	return p
}

func orEmpty(cs []Condition) []Condition {
	if cs == nil {
		return []Condition{}
	}
	return cs
}
