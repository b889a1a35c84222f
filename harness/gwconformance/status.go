package gwconformance

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/egharness/egharness/harness/gwconformance/kubeapi"
	"github.com/egharness/egharness/translator/result"
)

const gatewayGroup = "gateway.networking.k8s.io"

// statusWriter writes one translation's statuses into the store, as EG's status updater
// does in a cluster: every condition observes the generation translated, a condition whose
// status did not change keeps its lastTransitionTime, and what EG's provider adds beyond
// the translator (a Gateway's addresses, its Accepted and Programmed conditions) is added
// here, following EG v1.9's provider (internal/provider/kubernetes/status.go and
// internal/gatewayapi/status/gateway.go).
type statusWriter struct {
	store     *kubeapi.Store
	gens      map[string]int64
	addresses map[string]GatewayAddress
	now       time.Time
	errs      []error
}

// groupsOf are where a kind the result names may live.
var groupsOf = []string{gatewayGroup, "gateway.envoyproxy.io", "gateway.networking.x-k8s.io", ""}

func (w *statusWriter) find(ref resourceRef) *unstructured.Unstructured {
	for _, g := range groupsOf {
		u, err := w.store.Get(
			kubeapi.Key{GroupKind: schema.GroupKind{Group: g, Kind: ref.Kind}, Namespace: ref.Namespace, Name: ref.Name}, "")
		if err == nil {
			return u
		}
	}
	return nil
}

type resourceRef struct{ Kind, Namespace, Name string }

func (w *statusWriter) write(res *result.Result) {
	for _, st := range res.Statuses {
		ref := resourceRef{st.Object.Kind, st.Object.Namespace, st.Object.Name}
		u := w.find(ref)
		if u == nil {
			continue // deleted since it was translated
		}
		gen := w.gens[objectID(u.GetKind(), u.GetNamespace(), u.GetName())]
		old, _, _ := unstructured.NestedMap(u.Object, "status")
		var status map[string]any
		switch u.GetKind() {
		case "Gateway":
			status = w.gateway(u, st, old, gen)
		case "ListenerSet":
			status = w.listenerSet(u, st, old, gen)
		case "HTTPRoute", "GRPCRoute", "TLSRoute", "TCPRoute", "UDPRoute":
			status = w.route(u, st, old, gen)
		default:
			status = w.generic(u, st, old, gen)
		}
		u.Object["status"] = status
		u.SetResourceVersion("")
		if _, err := w.store.Update(u, true); err != nil {
			w.errs = append(w.errs, fmt.Errorf("status of %s %s/%s: %w", u.GetKind(), u.GetNamespace(), u.GetName(), err))
		}
	}
}

// conditions turns the result's conditions into status conditions, keeping the
// lastTransitionTime of those whose status is what it was.
func (w *statusWriter) conditions(cs []result.Condition, old []any, gen int64) []any {
	prev := map[string]map[string]any{}
	for _, o := range old {
		if m, ok := o.(map[string]any); ok {
			prev[fmt.Sprint(m["type"])] = m
		}
	}
	out := make([]any, 0, len(cs))
	for _, c := range cs {
		ltt := w.now.UTC().Format(time.RFC3339)
		if p, ok := prev[c.Type]; ok && p["status"] == c.Status {
			if t, ok := p["lastTransitionTime"].(string); ok {
				ltt = t
			}
		}
		out = append(out, map[string]any{
			"type": c.Type, "status": c.Status, "reason": c.Reason, "message": c.Message,
			"observedGeneration": gen, "lastTransitionTime": ltt,
		})
	}
	return out
}

func oldList(old map[string]any, field string) []any {
	l, _ := old[field].([]any)
	return l
}

func hasCondition(cs []result.Condition, typ string) bool {
	for _, c := range cs {
		if c.Type == typ {
			return true
		}
	}
	return false
}

// gateway is a Gateway's status: the translator's listeners and conditions, the address
// the run gave it, and EG's provider conditions (Accepted from the listeners, Programmed
// from the address and the proxy, which is always running here).
func (w *statusWriter) gateway(u *unstructured.Unstructured, st result.ObjectStatus, old map[string]any,
	gen int64) map[string]any {
	conds := append([]result.Condition(nil), st.Conditions...)
	if !hasCondition(conds, "Accepted") {
		conds = append(conds, gatewayAccepted(st.Listeners))
	}
	addr := w.addresses[u.GetNamespace()+"/"+u.GetName()]
	if !hasCondition(conds, "Programmed") {
		if addr.NotUsable {
			conds = append(conds,
				result.Condition{Type: "Programmed", Status: "False", Reason: "AddressNotUsable",
					Message: "One or more Gateway addresses cannot be used"})
		} else if addr.IP == "" {
			conds = append(conds,
				result.Condition{Type: "Programmed", Status: "False", Reason: "AddressNotAssigned",
					Message: "No addresses have been assigned to the Gateway"})
		} else {
			conds = append(conds,
				result.Condition{Type: "Programmed", Status: "True", Reason: "Programmed",
					Message: "Address assigned to the Gateway, 1/1 envoy replicas available"})
		}
	}
	status := map[string]any{"conditions": w.conditions(conds, oldList(old, "conditions"), gen)}
	switch {
	case len(addr.Static) > 0:
		var list []any
		for _, ip := range addr.Static {
			list = append(list, map[string]any{"type": "IPAddress", "value": ip})
		}
		status["addresses"] = list
	case addr.IP != "":
		status["addresses"] = []any{map[string]any{"type": "IPAddress", "value": addr.IP}}
	}
	status["listeners"] = w.listeners(st.Listeners, oldList(old, "listeners"), gen, nil)
	if st.AttachedListenerSets != nil {
		status["attachedListenerSets"] = int64(*st.AttachedListenerSets)
	}
	return status
}

// gatewayAccepted is EG's Gateway Accepted condition derived from its listeners.
func gatewayAccepted(ls []result.ListenerStatus) result.Condition {
	var notAccepted []string
	for _, l := range ls {
		ok := false
		for _, c := range l.Conditions {
			if c.Type == "Accepted" && c.Status == "True" {
				ok = true
			}
		}
		if !ok {
			notAccepted = append(notAccepted, l.Name)
		}
	}
	sortStrings(notAccepted)
	switch {
	case len(notAccepted) == 0:
		return result.Condition{Type: "Accepted", Status: "True", Reason: "Accepted",
			Message: "The Gateway has been scheduled by Envoy Gateway"}
	case len(notAccepted) < len(ls):
		return result.Condition{Type: "Accepted", Status: "True", Reason: "ListenersNotValid",
			Message: "Listeners not valid: " + joinComma(notAccepted)}
	default:
		return result.Condition{Type: "Accepted", Status: "False", Reason: "ListenersNotValid",
			Message: "No listeners are valid: " + joinComma(notAccepted)}
	}
}

// listeners are listener statuses; port, when not nil, gives a ListenerSet entry's port.
func (w *statusWriter) listeners(ls []result.ListenerStatus, old []any, gen int64, port func(name string) any) []any {
	prev := map[string][]any{}
	for _, o := range old {
		if m, ok := o.(map[string]any); ok {
			c, _ := m["conditions"].([]any)
			prev[fmt.Sprint(m["name"])] = c
		}
	}
	out := make([]any, 0, len(ls))
	for _, l := range ls {
		kinds := make([]any, 0, len(l.SupportedKinds))
		for _, k := range l.SupportedKinds {
			kinds = append(kinds, map[string]any{"group": gatewayGroup, "kind": k})
		}
		m := map[string]any{
			"name": l.Name, "supportedKinds": kinds, "attachedRoutes": int64(l.AttachedRoutes),
			"conditions": w.conditions(l.Conditions, prev[l.Name], gen),
		}
		if port != nil {
			if p := port(l.Name); p != nil {
				m["port"] = p
			}
		}
		out = append(out, m)
	}
	return out
}

func (w *statusWriter) listenerSet(u *unstructured.Unstructured, st result.ObjectStatus, old map[string]any,
	gen int64) map[string]any {
	specListeners, _, _ := unstructured.NestedSlice(u.Object, "spec", "listeners")
	port := func(name string) any {
		for _, l := range specListeners {
			if m, ok := l.(map[string]any); ok && m["name"] == name {
				return m["port"]
			}
		}
		return nil
	}
	return map[string]any{
		"conditions": w.conditions(st.Conditions, oldList(old, "conditions"), gen),
		"listeners":  w.listeners(st.Listeners, oldList(old, "listeners"), gen, port),
	}
}

// route is a route's status.parents: each parent the result reports, named by the
// parentRef the route wrote (its defaults filled in by the CRD), as EG copies it; entries of
// other controllers are kept.
func (w *statusWriter) route(u *unstructured.Unstructured, st result.ObjectStatus, old map[string]any,
	gen int64) map[string]any {
	specRefs, _, _ := unstructured.NestedSlice(u.Object, "spec", "parentRefs")
	var parents []any
	oldParents := oldList(old, "parents")
	for _, p := range st.Parents {
		ref := matchParentRef(specRefs, p.Ref, u.GetNamespace())
		var prevConds []any
		for _, o := range oldParents {
			if m, ok := o.(map[string]any); ok && fmt.Sprint(m["parentRef"]) == fmt.Sprint(ref) {
				prevConds, _ = m["conditions"].([]any)
			}
		}
		parents = append(parents, map[string]any{
			"parentRef": ref, "controllerName": ControllerName,
			"conditions": w.conditions(p.Conditions, prevConds, gen),
		})
	}
	for _, o := range oldParents {
		if m, ok := o.(map[string]any); ok && m["controllerName"] != ControllerName {
			parents = append(parents, m)
		}
	}
	if parents == nil {
		parents = []any{}
	}
	status := map[string]any{}
	for k, v := range old {
		status[k] = v
	}
	status["parents"] = parents
	return status
}

// matchParentRef finds the route's own parentRef for a parent the result names.
func matchParentRef(specRefs []any, r result.ParentRef, routeNS string) map[string]any {
	for _, s := range specRefs {
		m, ok := s.(map[string]any)
		if !ok {
			continue
		}
		ns, _ := m["namespace"].(string)
		if ns == "" {
			ns = routeNS
		}
		kind, _ := m["kind"].(string)
		if kind == "" {
			kind = "Gateway"
		}
		section, _ := m["sectionName"].(string)
		var port int64
		switch p := m["port"].(type) {
		case int64:
			port = p
		case float64:
			port = int64(p)
		}
		if m["name"] == r.Name && ns == r.Namespace && kind == r.Kind && section == r.SectionName && port == int64(r.Port) {
			return m
		}
	}
	ref := map[string]any{"group": gatewayGroup, "kind": r.Kind, "name": r.Name, "namespace": r.Namespace}
	if r.SectionName != "" {
		ref["sectionName"] = r.SectionName
	}
	if r.Port != 0 {
		ref["port"] = int64(r.Port)
	}
	return ref
}

// generic is the status of a GatewayClass or a policy: conditions, and a policy's
// ancestors.
func (w *statusWriter) generic(u *unstructured.Unstructured, st result.ObjectStatus, old map[string]any,
	gen int64) map[string]any {
	status := map[string]any{}
	for k, v := range old {
		status[k] = v
	}
	if len(st.Conditions) > 0 || u.GetKind() == "GatewayClass" {
		status["conditions"] = w.conditions(st.Conditions, oldList(old, "conditions"), gen)
	}
	if len(st.Parents) > 0 {
		var ancestors []any
		for _, p := range st.Parents {
			ref := map[string]any{"group": groupOfKind(p.Ref.Kind), "kind": p.Ref.Kind, "name": p.Ref.Name,
				"namespace": p.Ref.Namespace}
			if p.Ref.SectionName != "" {
				ref["sectionName"] = p.Ref.SectionName
			}
			if p.Ref.Port != 0 {
				ref["port"] = int64(p.Ref.Port)
			}
			var prev []any
			for _, o := range oldList(old, "ancestors") {
				if m, ok := o.(map[string]any); ok && fmt.Sprint(m["ancestorRef"]) == fmt.Sprint(ref) {
					prev, _ = m["conditions"].([]any)
				}
			}
			ctrl := p.ControllerName
			if ctrl == "" {
				ctrl = ControllerName
			}
			ancestors = append(ancestors,
				map[string]any{"ancestorRef": ref, "controllerName": ctrl, "conditions": w.conditions(p.Conditions, prev, gen)})
		}
		status["ancestors"] = ancestors
	}
	return status
}

func groupOfKind(kind string) string {
	switch kind {
	case "Service", "Secret", "ConfigMap", "Namespace":
		return ""
	case "Backend", "EnvoyProxy", "SecurityPolicy", "BackendTrafficPolicy", "ClientTrafficPolicy", "EnvoyExtensionPolicy",
		"HTTPRouteFilter":
		return "gateway.envoyproxy.io"
	}
	return gatewayGroup
}

func sortStrings(s []string) { slices.Sort(s) }

func joinComma(s []string) string { return strings.Join(s, ", ") }
