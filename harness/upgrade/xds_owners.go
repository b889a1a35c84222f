package upgrade

import (
	"sort"
	"strings"
	"sync"

	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	listenerv3 "github.com/envoyproxy/go-control-plane/envoy/config/listener/v3"

	// linked in so that walkStrings opens tcp_proxy configs
	_ "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/network/tcp_proxy/v3"
	gwapiv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/egharness/egharness/translator/resource"
)

// Who an xDS entity belongs to: the Gateway, route or policy whose objects made it, read
// from EG's names and metadata, so a finding names what a user wrote.

// owner is the object an xDS thing belongs to: the envoy-gateway metadata's first resource,
// else an object named inside the xDS name ("httproute/ns/name/...",
// ".../envoyextensionpolicy/ns/name/..."), else fallback.
func (c *collector) owner(name string, meta []resource.Ref, fallback resource.Ref) resource.Ref {
	if len(meta) > 0 {
		return meta[0]
	}
	parts := strings.Split(name, "/")
	for i := 0; i+2 < len(parts); i++ {
		if kind, ok := c.d.byKindLower[strings.ToLower(parts[i])]; ok {
			ref := resource.Ref{Kind: kind, Namespace: parts[i+1], Name: parts[i+2]}
			if _, ok := c.d.objects[ref]; ok {
				return ref
			}
		}
		// A kind EG names resources after (httproute/ns/name/...), even when the object
		// is not among the input (an implementation may report what it was given apart).
		if kind, ok := knownLower()[parts[i]]; ok && parts[i+1] != "" && parts[i+2] != "" {
			return resource.Ref{Kind: kind, Namespace: parts[i+1], Name: parts[i+2]}
		}
	}
	// A per-resource CA secret of v1.8 is "<name>/<namespace>-ca" (SDS-03).
	if len(parts) == 2 && strings.HasSuffix(parts[1], "-ca") {
		for _, kind := range []string{"BackendTLSPolicy", "Backend"} {
			ref := resource.Ref{Kind: kind, Namespace: strings.TrimSuffix(parts[1], "-ca"), Name: parts[0]}
			if _, ok := c.d.objects[ref]; ok {
				return ref
			}
		}
	}
	if len(parts) >= 2 {
		for _, kind := range []string{"Secret", "BackendTLSPolicy", "Backend"} {
			ref := resource.Ref{Kind: kind, Namespace: parts[0], Name: parts[1]}
			if _, ok := c.d.objects[ref]; ok {
				return ref
			}
		}
	}
	return fallback
}

// knownLower maps the lower-case spelling of every kind egharness reads to the kind.
var knownLower = sync.OnceValue(func() map[string]string {
	out := map[string]string{}
	for _, k := range resource.KnownKinds() {
		out[strings.ToLower(k)] = k
	}
	return out
})

// gatewayOfListener is the Gateway a listener belongs to: from its name
// (NAMESPACE/GATEWAY/LISTENER), else from its first filter chain's (the V2 name scheme names
// listeners by protocol and port and their chains after the Gateway listener), when the
// input holds that Gateway.
func (d *differ) gatewayOfListener(l *listenerv3.Listener) (resource.Ref, bool) {
	if gw, ok := d.gatewayOf(l.GetName()); ok {
		return gw, true
	}
	chains := l.GetFilterChains()
	if dc := l.GetDefaultFilterChain(); dc != nil {
		chains = append(chains[:len(chains):len(chains)], dc)
	}
	for _, fc := range chains {
		if gw, ok := d.gatewayOf(fc.GetName()); ok {
			return gw, true
		}
	}
	return resource.Ref{}, false
}

// gatewayOf is the Gateway of a name NAMESPACE/GATEWAY/LISTENER, when the input holds it.
func (d *differ) gatewayOf(name string) (resource.Ref, bool) {
	parts := strings.SplitN(name, "/", 3)
	if len(parts) < 3 {
		return resource.Ref{}, false
	}
	ref := resource.Ref{Kind: "Gateway", Namespace: parts[0], Name: parts[1]}
	if _, ok := d.objects[ref]; !ok {
		return resource.Ref{}, false
	}
	return ref, true
}

// gatewaysByPort maps an Envoy port to the Gateways with a listener on it (EG binds
// privileged ports 10000 higher).
func (d *differ) gatewaysByPort() map[uint32][]resource.Ref {
	out := map[uint32][]resource.Ref{}
	refs := make([]resource.Ref, 0)
	for ref := range d.objects {
		if ref.Kind == "Gateway" {
			refs = append(refs, ref)
		}
	}
	sort.Slice(refs, func(i, j int) bool { return refs[i].Less(refs[j]) })
	for _, ref := range refs {
		gw, ok := d.objects[ref].Obj.(*gwapiv1.Gateway)
		if !ok {
			continue
		}
		seen := map[uint32]bool{}
		for _, l := range gw.Spec.Listeners {
			p := uint32(l.Port)
			if p < 1024 {
				p += 10000
			}
			if !seen[p] {
				seen[p] = true
				out[p] = append(out[p], ref)
			}
		}
	}
	return out
}

// metaOwners reads EG's filter metadata (envoy-gateway.resources) naming the objects an
// xDS resource was made for.
func metaOwners(md *corev3.Metadata) []resource.Ref {
	st := md.GetFilterMetadata()["envoy-gateway"]
	var out []resource.Ref
	for _, v := range st.GetFields()["resources"].GetListValue().GetValues() {
		f := v.GetStructValue().GetFields()
		ref := resource.Ref{Kind: f["kind"].GetStringValue(), Namespace: f["namespace"].GetStringValue(),
			Name: f["name"].GetStringValue()}
		if ref.Kind != "" && ref.Name != "" {
			out = append(out, ref)
		}
	}
	return out
}
