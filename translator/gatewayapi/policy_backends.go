package gatewayapi

import (
	"errors"
	"fmt"
	"net"
	"strconv"

	egv1a1 "github.com/envoyproxy/gateway/api/v1alpha1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	gwapiv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/egharness/egharness/translator/ir"
	"github.com/egharness/egharness/translator/resource"
	"github.com/egharness/egharness/translator/result"
)

// PolicyBackends resolves the backendRefs of policy features that call a service of their
// own (SecurityPolicy extAuth, EnvoyExtensionPolicy extProc) with the same Services,
// EndpointSlices, EG Backends and BackendTLSPolicies the routes were resolved with. The
// policy stage reaches it through a small interface, so Service resolution lives in one
// place.
type PolicyBackends struct {
	translation *routeTranslator
}

// ResolvePolicyBackends resolves refs, declared by a policy of kind policyKind in policyNS,
// into one destination named name (EG's "<kind>/<ns>/<name>/<feature>/<index>"), its
// backends named <name>/backend/<i>. Unlike a route's backendRef, a bad reference is an
// error for the whole feature (EG then marks the policy Invalid): it carries EG's message.
//
// A BackendTLSPolicy that secures one of these backends lists the policy (owner) as its
// ancestor, as EG v1.9 does; BackendTLSStatuses writes those ancestors once the policy
// stage is done.
func (p *PolicyBackends) ResolvePolicyBackends(owner ir.PolicyRef, refs []egv1a1.BackendRef, name string,
	http2 bool) (*ir.Destination, error) {
	if p == nil || p.translation == nil {
		return nil, errors.New("backend references cannot be resolved")
	}
	if len(refs) == 0 {
		return nil, errors.New("no backendRefs found for external service")
	}
	policyNS := owner.Namespace
	translation := p.translation
	translation.policyBackend = &result.ParentRef{Kind: owner.Kind, Namespace: owner.Namespace, Name: owner.Name}
	defer func() { translation.policyBackend = nil }()
	dest := &ir.Destination{Name: name, HTTP2: http2}
	for i, ref := range refs {
		if err := p.validate(owner.Kind, policyNS, ref.BackendObjectReference); err != nil {
			return nil, err
		}
		if ref.Weight != nil && *ref.Weight == 0 {
			continue
		}
		b, err := p.resolve(policyNS, ref.BackendObjectReference, fmt.Sprintf("%s/backend/%d", name, i))
		if err != nil {
			return nil, err
		}
		b.Weight = 1
		if ref.Weight != nil {
			b.Weight = uint32(*ref.Weight)
		}
		dest.Settings = append(dest.Settings, b)
	}
	dns, ip := false, false
	for _, b := range dest.Settings {
		dns, ip = dns || b.DNS, ip || !b.DNS
	}
	if dns && ip {
		return nil, errors.New("external service destinations having multiple endpoint types are not supported")
	}
	return dest, nil
}

// PolicyBackendAuthority is the authority EG sends to a policy's external service: the
// Service's <name>.<namespace>:<port>, an EG Backend's first FQDN endpoint, or else
// <name>.<namespace>.
func (p *PolicyBackends) PolicyBackendAuthority(policyNS string, ref gwapiv1.BackendObjectReference) string {
	ns, kind := refNamespaceKind(policyNS, ref)
	if kind == egv1a1.KindBackend && p != nil && p.translation != nil {
		if be := p.translation.objects.backends[types.NamespacedName{Namespace: ns, Name: string(ref.Name)}]; be != nil {
			for _, endpoint := range be.Spec.Endpoints {
				if endpoint.FQDN != nil {
					return net.JoinHostPort(endpoint.FQDN.Hostname, strconv.Itoa(int(endpoint.FQDN.Port)))
				}
			}
		}
	}
	if (kind == "Service" || kind == "ServiceImport") && ref.Port != nil {
		return net.JoinHostPort(string(ref.Name)+"."+ns, strconv.Itoa(int(*ref.Port)))
	}
	return string(ref.Name) + "." + ns
}

// validate checks a policy's backendRef as EG does before resolving it: group and kind, a
// port for Services, the object and its TCP port, and only then a ReferenceGrant for a
// reference into another namespace.
func (p *PolicyBackends) validate(policyKind, policyNS string, ref gwapiv1.BackendObjectReference) error {
	if ref.Group != nil && *ref.Group != "" && *ref.Group != "multicluster.x-k8s.io" && *ref.Group != egv1a1.GroupName {
		return fmt.Errorf(
			"group is invalid, only the core API group (specified by omitting the group field or setting it to an empty "+
				"string), the multicluster.x-k8s.io API group, and the %s API group are supported",
			egv1a1.GroupName)
	}
	kind := "Service"
	if ref.Kind != nil {
		kind = string(*ref.Kind)
	}
	if kind != "Service" && kind != "ServiceImport" && kind != egv1a1.KindBackend {
		return errors.New(
			"kind is invalid, only Service (specified by omitting the kind field or setting it to 'Service'), " +
				"ServiceImport, and Backend are supported")
	}
	if ref.Port == nil && kind != egv1a1.KindBackend {
		return errors.New("a valid port number corresponding to a port on the Service must be specified")
	}
	ns := policyNS
	if ref.Namespace != nil && *ref.Namespace != "" {
		ns = string(*ref.Namespace)
	}
	switch kind {
	case "Service":
		svc := p.translation.objects.services[types.NamespacedName{Namespace: ns, Name: string(ref.Name)}]
		if svc == nil {
			return fmt.Errorf("service %s/%s not found", ns, ref.Name)
		}
		// An ExternalName Service has no address or endpoints to call; EG refuses it as a
		// policy's backend exactly as it refuses it as a route's (EG's testdata:
		// securitypolicy-with-extauth-externalname-service).
		if svc.Spec.Type == corev1.ServiceTypeExternalName {
			return fmt.Errorf(
				"Service %s/%s is of type ExternalName, which is not supported as a backend; use an Envoy Gateway Backend "+
					"resource with an FQDN endpoint instead",
				ns, ref.Name)
		}
		if servicePort(svc, int32(*ref.Port)) == nil {
			return fmt.Errorf("TCP Port %d not found on service %s/%s", *ref.Port, ns, ref.Name)
		}
	case "ServiceImport":
		si := p.translation.objects.serviceImports[types.NamespacedName{Namespace: ns, Name: string(ref.Name)}]
		if si == nil {
			return fmt.Errorf("serviceimport %s/%s not found", ns, ref.Name)
		}
		if importPort(si, int32(*ref.Port), corev1.ProtocolTCP) == nil {
			return fmt.Errorf("TCP Port %d not found on service %s/%s", *ref.Port, ns, ref.Name)
		}
	case egv1a1.KindBackend:
		be := p.translation.objects.backends[types.NamespacedName{Namespace: ns, Name: string(ref.Name)}]
		if be == nil {
			return fmt.Errorf("backend %s/%s not found", ns, ref.Name)
		}
		if be.Spec.Type != nil && *be.Spec.Type == egv1a1.BackendTypeDynamicResolver {
			return fmt.Errorf("dynamic resolver backend %s/%s is not supported", ns, ref.Name)
		}
	}
	if ns != policyNS {
		group := ""
		if ref.Group != nil {
			group = string(*ref.Group)
		}
		if !p.translation.permittedFrom(egv1a1.GroupName, policyKind, policyNS, group, kind, ns, string(ref.Name)) {
			return fmt.Errorf("backend ref to %s %s/%s not permitted by any ReferenceGrant", kind, ns, ref.Name)
		}
	}
	return nil
}

// resolve turns a validated reference into a backend: a Service's endpoints (and its
// BackendTLSPolicy), or an EG Backend's.
func (p *PolicyBackends) resolve(policyNS string, ref gwapiv1.BackendObjectReference, name string) (*ir.Backend,
	error) {
	translation := p.translation
	ns, kind := refNamespaceKind(policyNS, ref)
	b := &ir.Backend{Name: name, Kind: kind, Namespace: ns, ServiceName: string(ref.Name)}
	if ref.Port != nil {
		b.Port = uint32(*ref.Port)
	}
	if kind == egv1a1.KindBackend {
		var failure error
		fail := func(_, msg string) (*ir.Backend, *refError) {
			failure = errors.New(msg)
			return nil, &refError{msg: msg}
		}
		if api := translation.t.Config.ExtensionAPIs; api == nil || !api.EnableBackend {
			return nil, fmt.Errorf(
				"resource %s of type Backend cannot be used since Backend is disabled in Envoy Gateway configuration", ref.Name)
		}
		// The grant was checked by validate, with the policy as the referrer.
		if _, err := translation.resolveEGBackend(b, "", ns, ns, gwapiv1.BackendRef{BackendObjectReference: ref},
			fail); err != nil {
			return nil, failure
		}
		return b, nil
	}
	if kind == "ServiceImport" {
		si := translation.objects.serviceImports[types.NamespacedName{Namespace: ns, Name: string(ref.Name)}]
		sp := importPort(si, int32(*ref.Port), corev1.ProtocolTCP)
		eps, dns, mixed := translation.importEndpoints(si, sp)
		if mixed {
			return nil, errors.New("mixed endpointslice address type for the same backendRef is not supported")
		}
		b.Endpoints, b.DNS = eps, dns
		tls, err := translation.mergeUpstreamTLS(ns, nil,
			btlsTarget{group: serviceImportGroup, kind: "ServiceImport", name: si.Name, section: sp.Name}, true)
		if err != nil {
			return nil, err
		}
		b.TLS = tls
		return b, nil
	}
	svc := translation.objects.services[types.NamespacedName{Namespace: ns, Name: string(ref.Name)}]
	sp := servicePort(svc, int32(*ref.Port))
	b.Endpoints = translation.endpoints(svc, sp)
	// The BackendTLSPolicy of the Service applies to the policy's calls too, and lists
	// the policy as an ancestor.
	tls, err := translation.mergeUpstreamTLS(ns, nil, btlsTarget{kind: "Service", name: b.ServiceName, section: sp.Name},
		true)
	if err != nil {
		return nil, err
	}
	b.TLS = tls
	return b, nil
}

// servicePort is the Service's TCP port of that number.
func servicePort(svc *corev1.Service, port int32) *corev1.ServicePort {
	for i := range svc.Spec.Ports {
		sp := &svc.Spec.Ports[i]
		if sp.Port == port && (sp.Protocol == "" || sp.Protocol == corev1.ProtocolTCP) {
			return sp
		}
	}
	return nil
}

// refNamespaceKind is where a policy's backendRef points: its namespace (the policy's when
// it names none) and its kind (Service when it names none).
func refNamespaceKind(policyNS string, ref gwapiv1.BackendObjectReference) (string, string) {
	ns, kind := policyNS, "Service"
	if ref.Namespace != nil && *ref.Namespace != "" {
		ns = string(*ref.Namespace)
	}
	if ref.Kind != nil {
		kind = string(*ref.Kind)
	}
	return ns, kind
}

// BackendTLSStatuses writes the BackendTLSPolicy ancestors the policies' own backends
// added (ResolvePolicyBackends) into statuses, the Gateway API stage's statuses, whose
// BackendTLSPolicy entries it replaces: each policy's ancestors are its routes' Gateways
// (and EnvoyProxies of telemetry backends) first, then the policies, in the order they
// were resolved.
func (p *PolicyBackends) BackendTLSStatuses(statuses []result.ObjectStatus) []result.ObjectStatus {
	if p == nil || p.translation == nil || !p.translation.btlsPolicyUses {
		return statuses
	}
	translation := p.translation
	translation.backendTLSStatuses()
	fresh := map[resource.Ref]result.ObjectStatus{}
	for _, pol := range translation.objects.btlsPolicies {
		ref := resource.Ref{Kind: "BackendTLSPolicy", Namespace: pol.Namespace, Name: pol.Name}
		if s := translation.status.byRef[ref]; s != nil {
			fresh[ref] = *s
		}
	}
	out := make([]result.ObjectStatus, 0, len(statuses)+len(fresh))
	for _, s := range statuses {
		if f, ok := fresh[s.Object]; ok {
			s = f
			delete(fresh, s.Object)
		}
		out = append(out, s)
	}
	for _, pol := range translation.objects.btlsPolicies {
		ref := resource.Ref{Kind: "BackendTLSPolicy", Namespace: pol.Namespace, Name: pol.Name}
		if f, ok := fresh[ref]; ok {
			out = append(out, f)
		}
	}
	return out
}
