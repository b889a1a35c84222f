package xds

import (
	"sync"

	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	"google.golang.org/protobuf/types/known/structpb"

	"github.com/egharness/egharness/translator/ir"
)

// resourceRef is the Kubernetes object EG records in xDS metadata under "envoy-gateway".
type resourceRef struct {
	Kind, Name, Namespace, SectionName string
}

// resourceMetadata is the envoy-gateway metadata naming the object a resource comes from.
func resourceMetadata(r resourceRef) *corev3.Metadata {
	return &corev3.Metadata{FilterMetadata: map[string]*structpb.Struct{
		"envoy-gateway": {Fields: map[string]*structpb.Value{
			"resources": refList(r),
		}},
	}}
}

// refList is a one-object list of envoy-gateway metadata: its kind, name, namespace and,
// when it has one, its section.
func refList(r resourceRef) *structpb.Value {
	fields := map[string]*structpb.Value{
		"kind":      structpb.NewStringValue(r.Kind),
		"name":      structpb.NewStringValue(r.Name),
		"namespace": structpb.NewStringValue(r.Namespace),
	}
	if r.SectionName != "" {
		fields["sectionName"] = structpb.NewStringValue(r.SectionName)
	}
	return structpb.NewListValue(&structpb.ListValue{Values: []*structpb.Value{
		structpb.NewStructValue(&structpb.Struct{Fields: fields}),
	}})
}

// routeMetadata is the envoy-gateway metadata of an xDS route: the rule it comes from and,
// when a BackendTrafficPolicy is in force on it, that policy ("policies"), as EG lists it.
func routeMetadata(r *ir.HTTPRoute) (owner, policy resourceRef) {
	owner = resourceRef{Kind: r.Source.Kind, Name: r.Source.Name, Namespace: r.Source.Namespace,
		SectionName: r.Source.RuleName}
	if traffic := r.Policies.BackendTraffic; traffic != nil {
		policy = resourceRef{Kind: traffic.Policy.Kind, Name: traffic.Policy.Name, Namespace: traffic.Policy.Namespace}
	}
	return owner, policy
}

// metadataTable hands out one Metadata message for each owner (and policy) within one
// translation. A rule's xDS route stands once per listener and hostname it serves, so the
// 10k-route mix built 60,000 route metadata blocks for 20,000 rules: 170 MB of the 410 MB
// live when printing started. Sharing the messages changes no byte of the output (protojson
// prints a shared message at each place it stands); it is safe because nothing changes a
// resource once it is built (EnvoyPatchPolicy patches a printed copy, and the harness clones
// what it rewrites). Routes are built on every core, hence the lock.
type metadataTable struct {
	mu    sync.Mutex
	built map[metadataKey]*corev3.Metadata
}

type metadataKey struct{ owner, policy resourceRef }

func newMetadataTable() *metadataTable {
	return &metadataTable{built: map[metadataKey]*corev3.Metadata{}}
}

// of is the metadata naming owner and, unless it is the zero resourceRef, the policy in
// force on it.
func (m *metadataTable) of(owner, policy resourceRef) *corev3.Metadata {
	key := metadataKey{owner, policy}
	m.mu.Lock()
	defer m.mu.Unlock()
	if md, ok := m.built[key]; ok {
		return md
	}
	md := resourceMetadata(owner)
	if policy != (resourceRef{}) {
		md.FilterMetadata["envoy-gateway"].Fields["policies"] = refList(policy)
	}
	m.built[key] = md
	return md
}
