package gatewayapi

import (
	"fmt"
	"strconv"

	egv1a1 "github.com/envoyproxy/gateway/api/v1alpha1"
	"k8s.io/apimachinery/pkg/types"
	gwapiv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/egharness/egharness/translator/ir"
	"github.com/egharness/egharness/translator/resource"
	"github.com/egharness/egharness/translator/result"
)

// resolveEGBackend resolves a backendRef to an EG Backend (gateway.envoyproxy.io): only
// with extensionApis.enableBackend; its FQDN endpoints become a DNS cluster, its IP
// endpoints plain endpoints. Its upstream TLS merges its spec.tls with the
// BackendTLSPolicy naming it (sectionName: the backendRef's port number).
func (rt *routeTranslator) resolveEGBackend(b *ir.Backend, routeKind, routeNS, ns string, br gwapiv1.BackendRef,
	fail func(reason, msg string) (*ir.Backend, *refError)) (*ir.Backend, *refError) {
	if api := rt.t.Config.ExtensionAPIs; api == nil || !api.EnableBackend {
		return fail("UnsupportedValue", "Backend is disabled in Envoy Gateway configuration")
	}
	if ns != routeNS && !rt.permitted(routeKind, routeNS, egv1a1.GroupName, egv1a1.KindBackend, ns, string(br.Name)) {
		return fail("RefNotPermitted", fmt.Sprintf("Backend ref to %s %s/%s not permitted by any ReferenceGrant.", egv1a1.KindBackend, ns, br.Name))
	}
	be := rt.ix.backends[types.NamespacedName{Namespace: ns, Name: string(br.Name)}]
	if be == nil {
		return fail("BackendNotFound", fmt.Sprintf("Backend %s/%s not found", ns, br.Name))
	}
	if err := rt.ix.validateBackendTLS(be); err != nil {
		return fail("InvalidBackendRef", err.Error())
	}
	for _, ep := range be.Spec.Endpoints {
		switch {
		case ep.FQDN != nil:
			b.DNS = true
			b.Endpoints = append(b.Endpoints, ir.Endpoint{Host: ep.FQDN.Hostname, Port: uint32(ep.FQDN.Port)})
		case ep.IP != nil:
			b.Endpoints = append(b.Endpoints, ir.Endpoint{Host: ep.IP.Address, Port: uint32(ep.IP.Port)})
		case ep.Unix != nil:
			return fail("UnsupportedAddressType", "unix domain sockets are not supported in backend references")
		}
	}
	section := ""
	if br.Port != nil {
		section = strconv.Itoa(int(*br.Port))
	}
	tls, err := rt.upstreamTLS(ns, be, btlsTarget{group: egv1a1.GroupName, kind: egv1a1.KindBackend, name: be.Name, section: section})
	if err != nil {
		return fail("InvalidBackendTLS", err.Error())
	}
	b.TLS = tls
	return b, nil
}

// backendStatuses accepts every Backend whose spec.tls is valid. EG writes a refused one's
// condition with type Invalid and reason Accepted (the two swapped), which is kept.
func backendStatuses(ix *index, st *statusBook) {
	for _, be := range ix.backendList {
		c := cond("Accepted", "True", "Accepted", "The Backend was accepted")
		if err := ix.validateBackendTLS(be); err != nil {
			c = cond("Invalid", "False", "Accepted", "The Backend was not accepted: "+err.Error())
		}
		st.object(resource.Ref{Kind: egv1a1.KindBackend, Namespace: be.Namespace, Name: be.Name}).Conditions = []result.Condition{c}
	}
}
