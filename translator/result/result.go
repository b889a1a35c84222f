// Package result is what any implementation returns for one set of objects: admission
// verdicts, statuses, xDS resources, patch outcomes and warnings. Its JSON form is the
// `translate -o json` contract that external implementations print.
package result

import (
	"cmp"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	clusterv3 "github.com/envoyproxy/go-control-plane/envoy/config/cluster/v3"
	endpointv3 "github.com/envoyproxy/go-control-plane/envoy/config/endpoint/v3"
	listenerv3 "github.com/envoyproxy/go-control-plane/envoy/config/listener/v3"
	routev3 "github.com/envoyproxy/go-control-plane/envoy/config/route/v3"
	tlsv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/transport_sockets/tls/v3"

	"github.com/egharness/egharness/translator/ir"
	"github.com/egharness/egharness/translator/resource"
)

// Result is one translation's output.
type Result struct {
	Admission []Admission    `json:"admission"`
	Statuses  []ObjectStatus `json:"statuses"`
	XDS       XDS            `json:"xds"`
	Patches   []PatchOutcome `json:"patches"`
	Warnings  []string       `json:"warnings"`
	// IR is the reference translator's intermediate model (nil from other implementations).
	// Not part of the JSON contract; `serve` shows it at /snapshots.
	IR *ir.XDS `json:"-"`
}

// Admission is the API server's verdict on one object.
type Admission struct {
	Object  resource.Ref `json:"object"`
	Allowed bool         `json:"allowed"`
	Message string       `json:"message"`
}

// Condition is a status condition without its timestamps.
type Condition struct {
	Type    string `json:"type"`
	Status  string `json:"status"`
	Reason  string `json:"reason"`
	Message string `json:"message"`
}

// ObjectStatus is one object's status.
type ObjectStatus struct {
	Object     resource.Ref     `json:"object"`
	Conditions []Condition      `json:"conditions"`
	Listeners  []ListenerStatus `json:"listeners,omitempty"`
	// Parents is a route's status.parents or a policy's status.ancestors.
	Parents []ParentStatus `json:"parents,omitempty"`
	// AttachedListenerSets is a Gateway's status.attachedListenerSets: how many
	// ListenerSets attach to it and are accepted (unset when none).
	AttachedListenerSets *int32 `json:"attachedListenerSets,omitempty"`
}

// ListenerStatus is one Gateway listener's status.
type ListenerStatus struct {
	Name           string      `json:"name"`
	Conditions     []Condition `json:"conditions"`
	AttachedRoutes int32       `json:"attachedRoutes"`
	// SupportedKinds are the route kinds (group gateway.networking.k8s.io) the listener
	// takes, as its status.supportedKinds lists them. Optional in the exec protocol: an
	// implementation that leaves it out reports none.
	SupportedKinds []string `json:"supportedKinds,omitempty"`
}

// ParentRef names a parent or ancestor.
type ParentRef struct {
	Kind        string `json:"kind"`
	Namespace   string `json:"namespace"`
	Name        string `json:"name"`
	SectionName string `json:"sectionName,omitempty"`
	// Port is the parentRef's port, when it names one: two parentRefs that differ only by
	// port are two entries.
	Port int32 `json:"port,omitempty"`
}

// String is Kind/namespace/name[/sectionName][:port], the form scenarios use; Kind/name for
// a cluster-scoped parent (a GatewayClass).
func (p ParentRef) String() string {
	s := p.Kind + "/" + p.Namespace + "/" + p.Name
	if p.Namespace == "" {
		s = p.Kind + "/" + p.Name
	}
	if p.SectionName != "" {
		s += "/" + p.SectionName
	}
	if p.Port != 0 {
		s += fmt.Sprintf(":%d", p.Port)
	}
	return s
}

// ParentStatus is the conditions for one parent.
type ParentStatus struct {
	Ref        ParentRef   `json:"ref"`
	Conditions []Condition `json:"conditions"`
	// ControllerName is set on a policy's ancestors (status.ancestors[].controllerName).
	ControllerName string `json:"controllerName,omitempty"`
}

// PatchOutcome is what one EnvoyPatchPolicy operation did.
type PatchOutcome struct {
	Policy    resource.Ref `json:"policy"`
	Operation int          `json:"operation"`
	Hit       bool         `json:"hit"`
	Reason    string       `json:"reason,omitempty"`
}

// XDS holds the resources, each list sorted by name.
type XDS struct {
	Listeners []*listenerv3.Listener
	Routes    []*routev3.RouteConfiguration
	Clusters  []*clusterv3.Cluster
	Endpoints []*endpointv3.ClusterLoadAssignment
	Secrets   []*tlsv3.Secret
}

// Sort orders every list by resource name so output never depends on map order.
func (x *XDS) Sort() {
	sortByName(x.Listeners, (*listenerv3.Listener).GetName)
	sortByName(x.Routes, (*routev3.RouteConfiguration).GetName)
	sortByName(x.Clusters, (*clusterv3.Cluster).GetName)
	sortByName(x.Endpoints, (*endpointv3.ClusterLoadAssignment).GetClusterName)
	sortByName(x.Secrets, (*tlsv3.Secret).GetName)
}

// Names is the name of each resource in list, in order; nil when there are none. (A
// ClusterLoadAssignment has no GetName: its name is GetClusterName.)
func Names[T interface{ GetName() string }](list []T) []string {
	var names []string
	for _, r := range list {
		names = append(names, r.GetName())
	}
	return names
}

// sortByName is a stable sort by name: equal names keep their order.
func sortByName[T any](list []T, name func(T) string) {
	sortStable(list, func(a, b T) int { return strings.Compare(name(a), name(b)) })
}

// sortStable sorts list by c, equal elements keeping their order. Ties are broken by
// position, so an O(n log n) sort does it (sort.SliceStable's merging costs n log² n, which
// showed at 10k routes).
func sortStable[T any](list []T, c func(a, b T) int) {
	type at struct {
		pos int
		v   T
	}
	xs := make([]at, len(list))
	for i, v := range list {
		xs[i] = at{i, v}
	}
	slices.SortFunc(xs, func(a, b at) int {
		if r := c(a.v, b.v); r != 0 {
			return r
		}
		return cmp.Compare(a.pos, b.pos)
	})
	for i := range xs {
		list[i] = xs[i].v
	}
}

func compareRefs(a, b resource.Ref) int {
	return cmp.Or(strings.Compare(a.Kind, b.Kind), strings.Compare(a.Namespace, b.Namespace),
		strings.Compare(a.Name, b.Name))
}

// Status returns the status of ref, or nil.
func (r *Result) Status(ref resource.Ref) *ObjectStatus {
	for i := range r.Statuses {
		if r.Statuses[i].Object == ref {
			return &r.Statuses[i]
		}
	}
	return nil
}

// AdmissionOf returns the verdict on ref, or nil when the object was not seen.
func (r *Result) AdmissionOf(ref resource.Ref) *Admission {
	for i := range r.Admission {
		if r.Admission[i].Object == ref {
			return &r.Admission[i]
		}
	}
	return nil
}

// Normalize puts every list in a stable order and replaces nil lists with empty ones, so
// two equal results print the same bytes.
func (r *Result) Normalize() {
	sortStable(r.Admission, func(a, b Admission) int { return compareRefs(a.Object, b.Object) })
	sortStable(r.Statuses, func(a, b ObjectStatus) int { return compareRefs(a.Object, b.Object) })
	r.XDS.Sort()
	if r.Admission == nil {
		r.Admission = []Admission{}
	}
	if r.Statuses == nil {
		r.Statuses = []ObjectStatus{}
	}
	if r.Patches == nil {
		r.Patches = []PatchOutcome{}
	}
	if r.Warnings == nil {
		r.Warnings = []string{}
	}
	for i := range r.Statuses {
		if r.Statuses[i].Conditions == nil {
			r.Statuses[i].Conditions = []Condition{}
		}
	}
}

// Warnf adds a warning.
func (r *Result) Warnf(format string, args ...any) {
	r.Warnings = append(r.Warnings, fmt.Sprintf(format, args...))
}

var _ json.Marshaler = XDS{}
