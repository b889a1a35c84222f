package gatewayapi

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	"k8s.io/apimachinery/pkg/types"
	gwapiv1 "sigs.k8s.io/gateway-api/apis/v1"
	mcsv1a1 "sigs.k8s.io/mcs-api/pkg/apis/v1alpha1"

	"github.com/egharness/egharness/translator/ir"
)

// A ServiceImport (Multi-Cluster Services API, group multicluster.x-k8s.io) is a backend
// like a Service, as EG v1.9 resolves it: the object must exist with the backendRef's port
// (and the route's transport), a reference into another namespace needs a ReferenceGrant to
// the ServiceImport, a BackendTLSPolicy may target it (section: the port's name), and its
// endpoints are the ready addresses of the EndpointSlices labelled
// multicluster.kubernetes.io/service-name (IP or FQDN slices, never both for one
// backendRef). Without any such slice the reference routes to the ServiceImport's IPs, as
// it routes a Service without slices to its ClusterIP (egctl's offline routing).

// serviceImportGroup is the API group of ServiceImport.
const serviceImportGroup = mcsv1a1.GroupName

// resolveServiceImport fills b for a backendRef to a ServiceImport in ns.
func (translation *routeTranslator) resolveServiceImport(b *ir.Backend, routeKind, routeNS, ns string,
	backendRef gwapiv1.BackendRef,
	fail func(reason, msg string) (*ir.Backend, *refError)) (*ir.Backend, *refError) {
	if ns != routeNS &&
		!translation.permitted(routeKind, routeNS, serviceImportGroup, "ServiceImport", ns, string(backendRef.Name)) {
		return fail("RefNotPermitted",
			fmt.Sprintf("Backend ref to ServiceImport %s/%s not permitted by any ReferenceGrant.", ns, backendRef.Name))
	}
	if backendRef.Port == nil {
		return fail("PortNotSpecified", "A valid port number corresponding to a port on the Service must be specified")
	}
	si := translation.objects.serviceImports[types.NamespacedName{Namespace: ns, Name: string(backendRef.Name)}]
	if si == nil {
		return fail("BackendNotFound", fmt.Sprintf("service import %s/%s not found", ns, backendRef.Name))
	}
	want := corev1.ProtocolTCP
	if routeKind == "UDPRoute" {
		want = corev1.ProtocolUDP
	}
	sp := importPort(si, int32(*backendRef.Port), want)
	if sp == nil {
		return fail("PortNotFound",
			fmt.Sprintf("%s port %d not found on service import %s/%s", want, *backendRef.Port, ns, backendRef.Name))
	}
	// The BackendTLSPolicy comes first, as EG resolves it before the endpoints.
	tls, err := translation.upstreamTLS(ns, nil,
		btlsTarget{group: serviceImportGroup, kind: "ServiceImport", name: si.Name, section: sp.Name})
	if err != nil {
		return fail("InvalidBackendTLS", err.Error())
	}
	b.TLS = tls
	eps, dns, mixed := translation.importEndpoints(si, sp)
	if mixed {
		return fail("UnsupportedAddressType", "mixed endpointslice address type for the same backendRef is not supported")
	}
	b.Endpoints, b.DNS = eps, dns
	if ap := sp.AppProtocol; ap != nil && (routeKind == "HTTPRoute" || routeKind == "GRPCRoute") {
		b.HTTP2 = *ap == "kubernetes.io/h2c" || *ap == "gateway.envoyproxy.io/h2c" || *ap == "grpc"
	}
	return b, nil
}

// importPort is the ServiceImport's port of that number and protocol (TCP when unset).
func importPort(si *mcsv1a1.ServiceImport, port int32, want corev1.Protocol) *mcsv1a1.ServicePort {
	for i := range si.Spec.Ports {
		p := &si.Spec.Ports[i]
		proto := p.Protocol
		if proto == "" {
			proto = corev1.ProtocolTCP
		}
		if p.Port == port && proto == want {
			return p
		}
	}
	return nil
}

// importEndpoints are the ready addresses of the ServiceImport's EndpointSlices for the
// port (matched by name and protocol), whether they are hostnames (FQDN slices), and
// whether the slices mix FQDN and IP address types. Without slices, the ServiceImport's
// IPs serve on the backendRef's port.
func (translation *routeTranslator) importEndpoints(si *mcsv1a1.ServiceImport,
	sp *mcsv1a1.ServicePort) (eps []ir.Endpoint, dns, mixed bool) {
	slices := translation.objects.importSlices[types.NamespacedName{Namespace: si.Namespace, Name: si.Name}]
	if len(slices) == 0 {
		for _, ip := range si.Spec.IPs {
			eps = append(eps, ir.Endpoint{Host: ip, Port: uint32(sp.Port)})
		}
		return eps, false, false
	}
	proto := sp.Protocol
	if proto == "" {
		proto = corev1.ProtocolTCP
	}
	fqdn, ip := false, false
	seen := map[ir.Endpoint]bool{}
	for _, s := range slices {
		if s.AddressType == discoveryv1.AddressTypeFQDN {
			fqdn = true
		} else {
			ip = true
		}
		for _, p := range s.Ports {
			name, pproto := "", corev1.ProtocolTCP
			if p.Name != nil {
				name = *p.Name
			}
			if p.Protocol != nil {
				pproto = *p.Protocol
			}
			if name != sp.Name || pproto != proto || p.Port == nil {
				continue
			}
			for _, endpoint := range s.Endpoints {
				if endpoint.Conditions.Ready != nil && !*endpoint.Conditions.Ready {
					continue
				}
				for _, a := range endpoint.Addresses {
					e := ir.Endpoint{Host: a, Port: uint32(*p.Port)}
					if !seen[e] {
						seen[e] = true
						eps = append(eps, e)
					}
				}
			}
		}
	}
	return eps, fqdn && !ip, fqdn && ip
}
