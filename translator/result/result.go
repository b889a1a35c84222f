// Package result is what any implementation returns for one set of objects: admission
// verdicts, statuses, xDS resources, patch outcomes and warnings. Its JSON form is the
// `translate -o json` contract that external implementations print.
package result

import (
	"encoding/json"
	"fmt"
	"sort"

	clusterv3 "github.com/envoyproxy/go-control-plane/envoy/config/cluster/v3"
	endpointv3 "github.com/envoyproxy/go-control-plane/envoy/config/endpoint/v3"
	listenerv3 "github.com/envoyproxy/go-control-plane/envoy/config/listener/v3"
	routev3 "github.com/envoyproxy/go-control-plane/envoy/config/route/v3"
	tlsv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/transport_sockets/tls/v3"

	"github.com/egharness/egharness/translator/resource"
)

// Result is one translation's output.
type Result struct {
	Admission []Admission    `json:"admission"`
	Statuses  []ObjectStatus `json:"statuses"`
	XDS       XDS            `json:"xds"`
	Patches   []PatchOutcome `json:"patches"`
	Warnings  []string       `json:"warnings"`
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
}

// ListenerStatus is one Gateway listener's status.
type ListenerStatus struct {
	Name           string      `json:"name"`
	Conditions     []Condition `json:"conditions"`
	AttachedRoutes int32       `json:"attachedRoutes"`
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

// String is Kind/namespace/name[/sectionName][:port], the form scenarios use.
func (p ParentRef) String() string {
	s := p.Kind + "/" + p.Namespace + "/" + p.Name
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
	sort.SliceStable(x.Listeners, func(i, j int) bool { return x.Listeners[i].GetName() < x.Listeners[j].GetName() })
	sort.SliceStable(x.Routes, func(i, j int) bool { return x.Routes[i].GetName() < x.Routes[j].GetName() })
	sort.SliceStable(x.Clusters, func(i, j int) bool { return x.Clusters[i].GetName() < x.Clusters[j].GetName() })
	sort.SliceStable(x.Endpoints, func(i, j int) bool { return x.Endpoints[i].GetClusterName() < x.Endpoints[j].GetClusterName() })
	sort.SliceStable(x.Secrets, func(i, j int) bool { return x.Secrets[i].GetName() < x.Secrets[j].GetName() })
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
	sort.SliceStable(r.Admission, func(i, j int) bool { return r.Admission[i].Object.Less(r.Admission[j].Object) })
	sort.SliceStable(r.Statuses, func(i, j int) bool { return r.Statuses[i].Object.Less(r.Statuses[j].Object) })
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
