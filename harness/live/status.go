package live

import (
	"encoding/json"
	"fmt"

	"github.com/egharness/egharness/translator/resource"
	"github.com/egharness/egharness/translator/result"
)

// liveStatus is the part of a Gateway API or EG object's status the scenarios check.
type liveStatus struct {
	Conditions []liveCondition `json:"conditions"`
	Listeners  []struct {
		Name           string          `json:"name"`
		AttachedRoutes int32           `json:"attachedRoutes"`
		Conditions     []liveCondition `json:"conditions"`
	} `json:"listeners"`
	Parents   []liveParent `json:"parents"`
	Ancestors []struct {
		AncestorRef liveRef         `json:"ancestorRef"`
		Conditions  []liveCondition `json:"conditions"`
	} `json:"ancestors"`
}

type liveCondition struct {
	Type    string `json:"type"`
	Status  string `json:"status"`
	Reason  string `json:"reason"`
	Message string `json:"message"`
}

type liveRef struct {
	Kind        string `json:"kind"`
	Namespace   string `json:"namespace"`
	Name        string `json:"name"`
	SectionName string `json:"sectionName"`
	Port        int32  `json:"port"`
}

type liveParent struct {
	ParentRef  liveRef         `json:"parentRef"`
	Conditions []liveCondition `json:"conditions"`
}

// StatusFrom reads an object's live status (its JSON form, the whole object or its status)
// into the shape the checks compare: conditions, listeners, and parents (route
// status.parents, policy status.ancestors). A parentRef without kind or namespace is the
// Gateway in the object's namespace, as the API defaults it.
func StatusFrom(ref resource.Ref, object []byte) (result.ObjectStatus, error) {
	var doc struct {
		Status *liveStatus `json:"status"`
	}
	if err := json.Unmarshal(object, &doc); err != nil {
		return result.ObjectStatus{}, fmt.Errorf("%s: status: %w", ref, err)
	}
	out := result.ObjectStatus{Object: ref, Conditions: []result.Condition{}}
	st := doc.Status
	if st == nil {
		return out, nil
	}
	out.Conditions = conditions(st.Conditions)
	for _, l := range st.Listeners {
		out.Listeners = append(out.Listeners,
			result.ListenerStatus{Name: l.Name, AttachedRoutes: l.AttachedRoutes, Conditions: conditions(l.Conditions)})
	}
	parent := func(r liveRef, cs []liveCondition) {
		if r.Kind == "" {
			r.Kind = "Gateway"
		}
		if r.Namespace == "" {
			r.Namespace = ref.Namespace
		}
		out.Parents = append(out.Parents, result.ParentStatus{
			Ref: result.ParentRef{Kind: r.Kind, Namespace: r.Namespace, Name: r.Name, SectionName: r.SectionName,
				Port: r.Port},
			Conditions: conditions(cs),
		})
	}
	for _, p := range st.Parents {
		parent(p.ParentRef, p.Conditions)
	}
	for _, a := range st.Ancestors {
		parent(a.AncestorRef, a.Conditions)
	}
	return out, nil
}

func conditions(cs []liveCondition) []result.Condition {
	out := make([]result.Condition, 0, len(cs))
	for _, c := range cs {
		out = append(out, result.Condition{Type: c.Type, Status: c.Status, Reason: c.Reason, Message: c.Message})
	}
	return out
}
