package gatewayapi

import (
	"fmt"

	egv1a1 "github.com/envoyproxy/gateway/api/v1alpha1"
	"k8s.io/apimachinery/pkg/types"
	gwapiv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/egharness/egharness/translator/ir"
	"github.com/egharness/egharness/translator/resource"
	"github.com/egharness/egharness/translator/result"
)

// resolveEGBackend resolves a backendRef to an EG Backend (gateway.envoyproxy.io): only
// with extensionApis.enableBackend; its FQDN endpoints become a DNS cluster, its IP
// endpoints plain endpoints.
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
	if be.Spec.TLS != nil {
		tls, err := rt.egBackendTLS(be)
		if err != nil {
			return fail("InvalidBackendTLS", err.Error())
		}
		b.TLS = tls
	}
	return b, nil
}

// egBackendTLS is the upstream TLS a Backend's own spec.tls asks for: the system store (the
// shared system_ca_certificates secret, SDS-03) or CA refs in its namespace, an SNI, or no
// verification at all. Backend-targeted BackendTLSPolicies and client certificates are not
// translated by the reference translator.
func (rt *routeTranslator) egBackendTLS(be *egv1a1.Backend) (*ir.UpstreamTLS, error) {
	t := be.Spec.TLS
	tls := &ir.UpstreamTLS{Policy: "Backend/" + be.Namespace + "/" + be.Name}
	if t.SNI != nil {
		tls.SNI = string(*t.SNI)
	}
	perResource := fmt.Sprintf("%s/%s-ca", be.Name, be.Namespace)
	switch {
	case t.InsecureSkipVerify != nil && *t.InsecureSkipVerify:
		tls.Insecure = true
	case t.WellKnownCACertificates != nil && *t.WellKnownCACertificates == gwapiv1.WellKnownCACertificatesSystem:
		tls.SystemCA, tls.CASource, tls.CAName = true, "System", systemCASecret
		if rt.t.Profile.FlagOn(egv1a1.PerResourceSystemCASecret, rt.t.Config.RuntimeFlags) || !rt.t.Profile.SharedSystemCASecret {
			tls.CAName = perResource
		}
	case len(t.CACertificateRefs) > 0:
		ca, sources, sds, err := rt.caBundle(be.Namespace, t.CACertificateRefs)
		if err != nil {
			return nil, err
		}
		tls.CA, tls.CASource, tls.CAName, tls.CASDS = ca, sources, perResource, sds
	default:
		return nil, fmt.Errorf("CACertificate must be specified when InsecureSkipVerify is false")
	}
	tls.MinVersion, tls.MaxVersion = "1.2", rt.t.Profile.UpstreamTLSMax
	rt.proxyBackendTLS(tls)
	return tls, nil
}

// backendStatuses accepts every Backend: EG reports "The Backend was accepted" on each.
func backendStatuses(ix *index, st *statusBook) {
	for _, be := range ix.backendList {
		st.object(resource.Ref{Kind: egv1a1.KindBackend, Namespace: be.Namespace, Name: be.Name}).Conditions =
			[]result.Condition{cond("Accepted", "True", "Accepted", "The Backend was accepted")}
	}
}
