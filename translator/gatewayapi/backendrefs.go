package gatewayapi

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	gwapiv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/egharness/egharness/translator/ir"
	"github.com/egharness/egharness/translator/refgrant"
)

// A rule's backendRefs into IR destinations: Services, ServiceImports and EG Backends, with
// their endpoints, weights and the ReferenceGrants that let a route reach another namespace
// (RT-06).

// resolveDestination resolves a rule's backendRefs once for all its matches.
func (translation *routeTranslator) resolveDestination(kind, ns string, refs []gwapiv1.BackendRef, clusterName string,
	ruleIdx int) (*ruleCtx, *ir.Destination) {
	resolvedRule := &ruleCtx{}
	dest := &ir.Destination{Name: clusterName}
	for k, backendRef := range refs {
		b, err := translation.resolveBackend(kind, ns, backendRef, clusterName, k)
		if err != nil {
			resolvedRule.errors = append(resolvedRule.errors,
				refError{reason: err.reason,
					msg: fmt.Sprintf("failed to process route rule %d backendRef %d: %s", ruleIdx, k, err.msg)})
			resolvedRule.backendErrors = true
		}
		if err == nil && (b.Kind == "Service" || b.Kind == "ServiceImport") && len(b.Endpoints) == 0 {
			// EndpointSlices that list no ready endpoint (a scaled-down Deployment): the
			// reference is fine, the backend serves nothing.
			resolvedRule.noEndpoints = append(resolvedRule.noEndpoints, refError{reason: "EndpointsNotFound",
				msg: fmt.Sprintf("failed to find endpoints: no ready endpoints for the related %s %s/%s", b.Kind, b.Namespace,
					b.ServiceName)})
			if b.Weight != 0 {
				resolvedRule.noEndpointWeight += b.Weight
			}
		}
		if b.Weight == 0 {
			continue // a zero weight takes no traffic and makes no cluster
		}
		dest.HTTP2 = dest.HTTP2 || b.HTTP2
		dest.Settings = append(dest.Settings, b)
	}
	dest.BackendLB = destinationLB(dest)
	return resolvedRule, dest
}

// resolveBackend resolves one backendRef. An invalid backend is still returned (with its
// weight) so that its share of traffic answers 500.
func (translation *routeTranslator) resolveBackend(routeKind, routeNS string, backendRef gwapiv1.BackendRef,
	clusterName string,
	k int) (*ir.Backend, *refError) {
	weight := uint32(1)
	if backendRef.Weight != nil {
		weight = uint32(*backendRef.Weight)
	}
	ns := routeNS
	if backendRef.Namespace != nil && *backendRef.Namespace != "" {
		ns = string(*backendRef.Namespace)
	}
	kind := "Service"
	if backendRef.Kind != nil {
		kind = string(*backendRef.Kind)
	}
	b := &ir.Backend{Name: fmt.Sprintf("%s/backend/%d", clusterName, k), Weight: weight, Kind: kind, Namespace: ns,
		ServiceName: string(backendRef.Name)}
	if backendRef.Port != nil {
		b.Port = uint32(*backendRef.Port)
	}
	fail := func(reason, msg string) (*ir.Backend, *refError) {
		b.Invalid = true
		b.Endpoints = nil
		return b, &refError{reason: reason, msg: msg}
	}
	if backendRef.Group != nil && *backendRef.Group != "" && *backendRef.Group != "multicluster.x-k8s.io" &&
		*backendRef.Group != "gateway.envoyproxy.io" {
		return fail("InvalidKind",
			"Group is invalid, only the core API group (specified by omitting the group field or setting it to an empty "+
				"string), multicluster.x-k8s.io and gateway.envoyproxy.io are supported")
	}
	switch kind {
	case "Service":
	case "ServiceImport":
		return translation.resolveServiceImport(b, routeKind, routeNS, ns, backendRef, fail)
	case "Backend":
		return translation.resolveEGBackend(b, routeKind, routeNS, ns, backendRef, fail)
	default:
		return fail("InvalidKind", "Kind is invalid, only Service, MCS ServiceImport and Envoy Gateway Backend are supported")
	}
	if ns != routeNS && !translation.permitted(routeKind, routeNS, "", "Service", ns, string(backendRef.Name)) {
		return fail("RefNotPermitted",
			fmt.Sprintf("Backend ref to %s %s/%s not permitted by any ReferenceGrant.", kind, ns, backendRef.Name))
	}
	if backendRef.Port == nil {
		return fail("PortNotSpecified", "A valid port number corresponding to a port on the Service must be specified")
	}
	svc := translation.objects.services[types.NamespacedName{Namespace: ns, Name: string(backendRef.Name)}]
	if svc == nil {
		return fail("BackendNotFound", fmt.Sprintf("service %s/%s not found", ns, backendRef.Name))
	}
	if svc.Spec.Type == corev1.ServiceTypeExternalName {
		// No address to put in a cluster: the backend is invalid, and only its own share of
		// the traffic is lost (RT-07).
		return fail("UnsupportedValue",
			fmt.Sprintf(
				"Service %s/%s is of type ExternalName, which is not supported as a backend; use an Envoy Gateway Backend "+
					"resource with an FQDN endpoint instead",
				ns, backendRef.Name))
	}
	// The port must exist with the route's transport: UDP for UDPRoute, TCP otherwise.
	want := corev1.ProtocolTCP
	if routeKind == "UDPRoute" {
		want = corev1.ProtocolUDP
	}
	var sp *corev1.ServicePort
	for i := range svc.Spec.Ports {
		p := &svc.Spec.Ports[i]
		proto := p.Protocol
		if proto == "" {
			proto = corev1.ProtocolTCP
		}
		if p.Port == int32(*backendRef.Port) && proto == want {
			sp = p
			break
		}
	}
	if sp == nil {
		return fail("PortNotFound",
			fmt.Sprintf("%s Port %d not found on Service %s/%s", want, *backendRef.Port, ns, backendRef.Name))
	}
	b.Endpoints = translation.endpoints(svc, sp)
	if ap := sp.AppProtocol; ap != nil && (routeKind == "HTTPRoute" || routeKind == "GRPCRoute") {
		// Real Envoy found this missing: a gRPC health check on an HTTP/1 cluster is
		// refused ("cluster must support HTTP/2 for gRPC healthchecking").
		b.HTTP2 = *ap == "kubernetes.io/h2c" || *ap == "gateway.envoyproxy.io/h2c" || *ap == "grpc"
	}
	if err := translation.applyBackendTLS(b, ns, sp); err != nil {
		return fail(err.reason, err.msg)
	}
	b.BackendLB = translation.objects.lbWinners[types.NamespacedName{Namespace: ns, Name: string(backendRef.Name)}]
	return b, nil
}

// endpoints resolves a Service port to addresses. With EndpointSlices for the Service, the
// ready endpoints serve (EG's default Endpoint routing); without any, the ClusterIP does,
// as `egctl x translate` routes offline (a Service without one gets egctl's placeholder).
func (translation *routeTranslator) endpoints(svc *corev1.Service, sp *corev1.ServicePort) []ir.Endpoint {
	slices := translation.objects.slices[types.NamespacedName{Namespace: svc.Namespace, Name: svc.Name}]
	if len(slices) == 0 {
		ip := svc.Spec.ClusterIP
		if ip == "" || ip == corev1.ClusterIPNone {
			ip = "10.96.1.2"
		}
		return []ir.Endpoint{{Host: ip, Port: uint32(sp.Port)}}
	}
	var out []ir.Endpoint
	seen := map[ir.Endpoint]bool{}
	for _, s := range slices {
		var port *int32
		for _, p := range s.Ports {
			if p.Name != nil && *p.Name == sp.Name || p.Name == nil && sp.Name == "" {
				port = p.Port
				break
			}
		}
		if port == nil {
			continue
		}
		for _, endpoint := range s.Endpoints {
			if endpoint.Conditions.Ready != nil && !*endpoint.Conditions.Ready {
				continue
			}
			for _, a := range endpoint.Addresses {
				e := ir.Endpoint{Host: a, Port: uint32(*port)}
				if !seen[e] {
					seen[e] = true
					out = append(out, e)
				}
			}
		}
	}
	return out
}

// permitted reports whether a ReferenceGrant in the target namespace lets fromKind objects
// in fromNS refer to the target (RT-06).
func (translation *routeTranslator) permitted(fromKind, fromNS, toGroup, toKind, toNS, toName string) bool {
	return translation.permittedFrom(gwapiv1.GroupName, fromKind, fromNS, toGroup, toKind, toNS, toName)
}

// permittedFrom is permitted for a referrer of any group (an EG policy's backendRefs).
func (translation *routeTranslator) permittedFrom(fromGroup, fromKind, fromNS, toGroup, toKind, toNS,
	toName string) bool {
	return translation.objects.grants.Permits(refgrant.From{Group: fromGroup, Kind: fromKind, Namespace: fromNS},
		refgrant.To{Group: toGroup, Kind: toKind, Namespace: toNS, Name: toName})
}
