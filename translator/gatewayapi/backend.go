package gatewayapi

import (
	"errors"
	"fmt"
	"net/netip"
	"strconv"
	"strings"

	egv1a1 "github.com/envoyproxy/gateway/api/v1alpha1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation"
	gwapiv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/egharness/egharness/translator/conditions"
	"github.com/egharness/egharness/translator/ir"
	"github.com/egharness/egharness/translator/resource"
	"github.com/egharness/egharness/translator/result"
)

// resolveEGBackend resolves a backendRef to an EG Backend (gateway.envoyproxy.io): only
// with extensionApis.enableBackend; its FQDN endpoints become a DNS cluster, its IP
// endpoints plain endpoints. Its upstream TLS merges its spec.tls with the
// BackendTLSPolicy naming it (sectionName: the backendRef's port number).
func (translation *routeTranslator) resolveEGBackend(b *ir.Backend, routeKind, routeNS, ns string,
	backendRef gwapiv1.BackendRef,
	fail func(reason, msg string) (*ir.Backend, *refError)) (*ir.Backend, *refError) {
	if api := translation.t.Config.ExtensionAPIs; api == nil || !api.EnableBackend {
		return fail("UnsupportedValue", "Backend is disabled in Envoy Gateway configuration")
	}
	if ns != routeNS &&
		!translation.permitted(routeKind, routeNS, egv1a1.GroupName, egv1a1.KindBackend, ns, string(backendRef.Name)) {
		return fail("RefNotPermitted",
			fmt.Sprintf("Backend ref to %s %s/%s not permitted by any ReferenceGrant.", egv1a1.KindBackend, ns, backendRef.Name))
	}
	be := translation.objects.backends[types.NamespacedName{Namespace: ns, Name: string(backendRef.Name)}]
	if be == nil {
		return fail("BackendNotFound", fmt.Sprintf("Backend %s/%s not found", ns, backendRef.Name))
	}
	// EG validates the Backend for routes only; a policy's backends (no route kind) skip it.
	if reason, err := translation.objects.validateBackend(be); err != nil && routeKind != "" {
		return fail(reason, err.Error())
	}
	for _, endpoint := range be.Spec.Endpoints {
		switch {
		case endpoint.FQDN != nil:
			b.DNS = true
			b.Endpoints = append(b.Endpoints, ir.Endpoint{Host: endpoint.FQDN.Hostname, Port: uint32(endpoint.FQDN.Port)})
		case endpoint.IP != nil:
			b.Endpoints = append(b.Endpoints, ir.Endpoint{Host: endpoint.IP.Address, Port: uint32(endpoint.IP.Port)})
		case endpoint.Unix != nil && routeKind == "":
			// EG lets a policy's backend (ext_authz, ext_proc...) be a unix socket, not a
			// route's (EG's testdata: securitypolicy-with-extauth-backend).
			b.Endpoints = append(b.Endpoints, ir.Endpoint{Path: endpoint.Unix.Path})
		case endpoint.Unix != nil:
			return fail("UnsupportedAddressType", "unix domain sockets are not supported in backend references")
		}
	}
	section := ""
	if backendRef.Port != nil {
		section = strconv.Itoa(int(*backendRef.Port))
	}
	// A route's backend records the BackendTLSPolicy for the route's Gateways, a policy's
	// (no route kind) for the policy (policyBackend).
	tls, err := translation.mergeUpstreamTLS(ns, be,
		btlsTarget{group: egv1a1.GroupName, kind: egv1a1.KindBackend, name: be.Name, section: section}, routeKind != "" ||
			translation.policyBackend != nil)
	if err != nil {
		return fail("InvalidBackendTLS", err.Error())
	}
	b.TLS = tls
	b.DynamicResolver = be.Spec.Type != nil && *be.Spec.Type == egv1a1.BackendTypeDynamicResolver
	fqdn, ip := false, false
	for _, endpoint := range be.Spec.Endpoints {
		fqdn, ip = fqdn || endpoint.FQDN != nil, ip || endpoint.IP != nil
	}
	if fqdn && ip && routeKind != "" { // after the TLS, as EG does: a policy's status is written first
		return fail("UnsupportedAddressType",
			"mixed FQDN and IP or Unix address type for the same backendRef is not supported")
	}
	return b, nil
}

// backendStatuses accepts every Backend EG's validation lets through (validateBackend), and
// none when Backend is disabled. EG writes a refused one's condition with type Invalid and
// reason Accepted (the two swapped), which is kept.
func backendStatuses(objects *index, status *statusBook, enabled bool) {
	for _, be := range objects.backendList {
		c := conditions.New("Accepted", "True", "Accepted", "The Backend was accepted")
		if !enabled {
			c = conditions.New("Invalid", "False", "Accepted",
				"The Backend was not accepted since Backend is not enabled in Envoy Gateway Config")
		} else if _, err := objects.validateBackend(be); err != nil {
			c = conditions.New("Invalid", "False", "Accepted", "The Backend was not accepted: "+err.Error())
		}
		status.object(resource.Ref{Kind: egv1a1.KindBackend, Namespace: be.Namespace,
			Name: be.Name}).Conditions = []result.Condition{c}
	}
}

// validateBackend is EG's check of a Backend on its own, with the route reason its failure
// gives: a DynamicResolver takes no endpoints; spec.tls must get trust (validateBackendTLS);
// hostnames must be DNS names of two labels or more, not IPs; IPs must parse and not be
// loopback (which EG allows only on its Host infrastructure, not modelled here).
func (objects *index) validateBackend(be *egv1a1.Backend) (string, error) {
	if be.Spec.Type != nil && *be.Spec.Type == egv1a1.BackendTypeDynamicResolver && len(be.Spec.Endpoints) > 0 {
		return "InvalidBackendRef", errors.New("DynamicResolver type cannot have endpoints specified")
	}
	if err := objects.validateBackendTLS(be); err != nil {
		return "InvalidBackendRef", err
	}
	for _, endpoint := range be.Spec.Endpoints {
		if endpoint.Hostname != nil {
			if err := validBackendHostname(*endpoint.Hostname, "hostname"); err != nil {
				return "InvalidAddress", err
			}
		}
		switch {
		case endpoint.FQDN != nil:
			if err := validBackendHostname(endpoint.FQDN.Hostname, "FQDN"); err != nil {
				return "InvalidAddress", err
			}
		case endpoint.IP != nil:
			ip, err := netip.ParseAddr(endpoint.IP.Address)
			if err != nil {
				return "InvalidAddress", fmt.Errorf("IP address %s is invalid", endpoint.IP.Address)
			}
			if ip.IsLoopback() {
				return "InvalidAddress",
					fmt.Errorf("IP address %s in the loopback range is only supported when using the Host infrastructure",
						endpoint.IP.Address)
			}
		}
	}
	return "", nil
}

func validBackendHostname(hostname, what string) error {
	if errs := validation.IsDNS1123Subdomain(strings.TrimSuffix(hostname, ".")); errs != nil {
		return fmt.Errorf("hostname %s is not a valid %s", hostname, what)
	}
	if len(strings.Split(hostname, ".")) < 2 {
		return fmt.Errorf("hostname %s should be a domain with at least two segments separated by dots", hostname)
	}
	if _, err := netip.ParseAddr(hostname); err == nil {
		return fmt.Errorf("hostname %s is an IP address", hostname)
	}
	return nil
}
