package corpus

import (
	"fmt"
	"sort"

	"sigs.k8s.io/yaml"

	"github.com/egharness/egharness/translator/resource"
	"github.com/egharness/egharness/translator/result"
)

// outputFile is the part of an EG testdata *.out.yaml that holds statuses: the objects EG's
// translator wrote status into, under the keys EG marshals its resources with. The IR
// (xdsIR, infraIR) and the kinds without a status of ours are left out.
type outputFile struct {
	Gateways               []outObject `json:"gateways"`
	ListenerSets           []outObject `json:"listenerSets"`
	HTTPRoutes             []outObject `json:"httpRoutes"`
	GRPCRoutes             []outObject `json:"grpcRoutes"`
	TLSRoutes              []outObject `json:"tlsRoutes"`
	TCPRoutes              []outObject `json:"tcpRoutes"`
	UDPRoutes              []outObject `json:"udpRoutes"`
	ClientTrafficPolicies  []outObject `json:"clientTrafficPolicies"`
	BackendTrafficPolicies []outObject `json:"backendTrafficPolicies"`
	SecurityPolicies       []outObject `json:"securityPolicies"`
	EnvoyExtensionPolicies []outObject `json:"envoyExtensionPolicies"`
	BackendTLSPolicies     []outObject `json:"backendTLSPolicies"`
	EnvoyPatchPolicies     []outObject `json:"envoyPatchPolicies"`
}

// ComparedKinds are the kinds whose statuses the corpus compares: Gateways (their
// conditions, each listener's conditions and attachedRoutes), ListenerSets (the same),
// routes (each parent's conditions) and policies (each ancestor's conditions).
var ComparedKinds = []string{"Gateway", "ListenerSet", "HTTPRoute", "GRPCRoute", "TLSRoute", "TCPRoute", "UDPRoute",
	"ClientTrafficPolicy", "BackendTrafficPolicy", "SecurityPolicy", "EnvoyExtensionPolicy", "BackendTLSPolicy",
	"EnvoyPatchPolicy"}

type outObject struct {
	Metadata struct {
		Namespace string `json:"namespace"`
		Name      string `json:"name"`
	} `json:"metadata"`
	Status *result.APIStatus `json:"status"`
}

// DecodeOutput reads the statuses of a case's *.out.yaml, in our result's form: a parent or
// ancestor without a kind is a Gateway and without a namespace is in the object's own (as
// the Gateway API defaults them).
func DecodeOutput(file string, data []byte) ([]result.ObjectStatus, error) {
	var out outputFile
	if err := yaml.Unmarshal(data, &out); err != nil {
		return nil, fmt.Errorf("%s: %v", file, err)
	}
	lists := map[string][]outObject{
		"Gateway": out.Gateways, "ListenerSet": out.ListenerSets,
		"HTTPRoute": out.HTTPRoutes, "GRPCRoute": out.GRPCRoutes, "TLSRoute": out.TLSRoutes, "TCPRoute": out.TCPRoutes,
		"UDPRoute":            out.UDPRoutes,
		"ClientTrafficPolicy": out.ClientTrafficPolicies, "BackendTrafficPolicy": out.BackendTrafficPolicies,
		"SecurityPolicy":       out.SecurityPolicies,
		"EnvoyExtensionPolicy": out.EnvoyExtensionPolicies, "BackendTLSPolicy": out.BackendTLSPolicies,
		"EnvoyPatchPolicy": out.EnvoyPatchPolicies,
	}
	var statuses []result.ObjectStatus
	for _, kind := range ComparedKinds {
		for _, o := range lists[kind] {
			ref := resource.Ref{Kind: kind, Namespace: o.Metadata.Namespace, Name: o.Metadata.Name}
			st := o.Status.ObjectStatus(ref)
			statuses = append(statuses, st)
		}
	}
	sort.SliceStable(statuses, func(i, j int) bool { return statuses[i].Object.Less(statuses[j].Object) })
	return statuses, nil
}
