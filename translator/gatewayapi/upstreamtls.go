package gatewayapi

import (
	"errors"
	"fmt"
	"strconv"

	egv1a1 "github.com/envoyproxy/gateway/api/v1alpha1"
	"k8s.io/apimachinery/pkg/types"
	gwapiv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/egharness/egharness/translator/certs"
	"github.com/egharness/egharness/translator/ir"
)

// errNoCAMerged: TLS is asked for (a Backend's spec.tls) but neither the Backend nor a
// policy says what to trust, and verification is not skipped.
var errNoCAMerged = errors.New("CACertificate must be specified when InsecureSkipVerify is false")

// upstreamTLS is the TLS Envoy speaks to one backend, merged from up to three sources the
// way EG v1.9 does:
//
//   - what to verify: an EG Backend's spec.tls (be, nil for Services), overridden attribute
//     by attribute by the BackendTLSPolicy targeting the backend (its trust, SNI and
//     subjectAltNames win; the Backend's insecureSkipVerify stays);
//   - what to present: the Backend's client settings (certificate, versions, ciphers,
//     ALPN) over the EnvoyProxy's backendTLS, field by field;
//   - TLS 1.2 up to the profile's maximum when neither sets a version (BTLS-03).
//
// Without a Backend spec.tls or a policy there is no TLS (nil, nil). The policy's use is
// recorded for its status on the route's parents.
func (translation *routeTranslator) upstreamTLS(ns string, be *egv1a1.Backend, target btlsTarget) (*ir.UpstreamTLS,
	error) {
	return translation.mergeUpstreamTLS(ns, be, target, true)
}

// mergeUpstreamTLS is upstreamTLS; record says whether the policy's use is recorded for its
// status (for the route's Gateways, or for the policy whose own backend this is).
func (translation *routeTranslator) mergeUpstreamTLS(ns string, be *egv1a1.Backend, target btlsTarget,
	record bool) (*ir.UpstreamTLS, error) {
	var (
		server       *ir.UpstreamTLS
		backendOwned *clientTLS
		err          error
	)
	if be != nil && be.Spec.TLS != nil {
		if server, err = translation.backendServerTLS(be); err != nil {
			return nil, err
		}
		if cfg := be.Spec.TLS.BackendTLSConfig; cfg != nil {
			if backendOwned, err = translation.clientTLSSettings(cfg, egv1a1.KindBackend, be.Namespace, be.Name); err != nil {
				return nil, err
			}
		}
	}
	if p := translation.objects.backendTLSPolicy(ns, target); p != nil {
		bundle, err := translation.backendTLSBundle(p)
		if record {
			translation.recordBTLS(p, err)
		}
		if err != nil {
			return nil, err
		}
		server = mergeServerTLS(server, bundle)
	}
	if server == nil {
		return nil, nil
	}
	if !server.Insecure && server.CAName == "" && server.CASDS == nil {
		return nil, errNoCAMerged
	}
	var proxyOwned *clientTLS
	if cfg, kind, ons, oname := translation.proxyClientTLS(); cfg != nil {
		if proxyOwned, err = translation.clientTLSSettings(cfg, kind, ons, oname); err != nil {
			return nil, err
		}
	}
	if c := mergeClientTLS(backendOwned, proxyOwned); c != nil {
		c.applyTo(server)
	}
	if server.MinVersion == "" {
		server.MinVersion = "1.2"
	}
	if server.MaxVersion == "" {
		server.MaxVersion = translation.t.Profile.UpstreamTLSMax
	}
	return server, nil
}

// mergeServerTLS lays a policy's verification settings over a Backend's: a policy always
// brings trust and an SNI (which turns off the endpoint-hostname SNI), and its
// subjectAltNames (possibly none) replace the Backend's.
func mergeServerTLS(backend, policy *ir.UpstreamTLS) *ir.UpstreamTLS {
	if backend == nil {
		return policy
	}
	merged := *backend
	merged.Policy = policy.Policy
	if policy.CAName != "" || policy.CASDS != nil {
		merged.CA, merged.CAName, merged.CASource, merged.CASDS = policy.CA, policy.CAName, policy.CASource, policy.CASDS
		merged.SystemCA = policy.SystemCA
	}
	if policy.SNI != "" {
		merged.SNI, merged.AutoHostSNI = policy.SNI, false
	}
	merged.SubjectAltNames = policy.SubjectAltNames
	return &merged
}

// backendServerTLS is what a Backend's spec.tls says about verifying the backend: skip it,
// or trust the system store (the shared system_ca_certificates secret, SDS-03) or its CA
// refs; and the SNI to send, fixed or the endpoint's hostname. Trust may still come from a
// policy, so none here is not an error yet.
func (translation *routeTranslator) backendServerTLS(be *egv1a1.Backend) (*ir.UpstreamTLS, error) {
	t := be.Spec.TLS
	tls := &ir.UpstreamTLS{Policy: "Backend/" + be.Namespace + "/" + be.Name}
	tls.Insecure = t.InsecureSkipVerify != nil && *t.InsecureSkipVerify
	tls.AutoHostSNI = t.AutoSNIFromEndpointHostname != nil && *t.AutoSNIFromEndpointHostname
	if t.SNI != nil {
		tls.SNI = string(*t.SNI)
	}
	if tls.Insecure {
		return tls, nil
	}
	perResource := fmt.Sprintf("%s/%s-ca", be.Name, be.Namespace)
	switch {
	case t.WellKnownCACertificates != nil && *t.WellKnownCACertificates == gwapiv1.WellKnownCACertificatesSystem:
		tls.SystemCA, tls.CASource, tls.CAName = true, "System", systemCASecret
		if translation.t.Profile.FlagOn(egv1a1.PerResourceSystemCASecret, translation.t.Config.RuntimeFlags) ||
			!translation.t.Profile.SharedSystemCASecret {
			tls.CAName = perResource
		}
	case len(t.CACertificateRefs) > 0:
		ca, sources, sds, err := translation.caBundle("Backend", be.Namespace, localRefs(t.CACertificateRefs))
		if err != nil {
			return nil, err
		}
		tls.CA, tls.CASource, tls.CAName, tls.CASDS = ca, sources, perResource, sds
	}
	return tls, nil
}

// clientTLS is the client side of upstream TLS from one owner (a Backend, the EnvoyProxy).
// ALPN is kept apart from its being set: an empty list turns ALPN off, an unset one leaves
// it to the other owner.
type clientTLS struct {
	certs                    []ir.TLSCertificate
	minVersion, maxVersion   string
	ciphers, curves, sigAlgs []string
	alpn                     []string
	alpnSet                  bool
}

func (c *clientTLS) applyTo(t *ir.UpstreamTLS) {
	t.ClientCertificates = c.certs
	t.MinVersion, t.MaxVersion = c.minVersion, c.maxVersion
	t.Ciphers, t.ECDHCurves, t.SignatureAlgorithms = c.ciphers, c.curves, c.sigAlgs
	if c.alpnSet {
		t.ALPN = append([]string{}, c.alpn...)
	}
}

// mergeClientTLS lays a Backend's client settings over the EnvoyProxy's: each one the
// Backend sets wins.
func mergeClientTLS(backend, proxy *clientTLS) *clientTLS {
	switch {
	case backend == nil:
		return proxy
	case proxy == nil:
		return backend
	}
	m := *proxy
	if len(backend.certs) > 0 {
		m.certs = backend.certs
	}
	if backend.minVersion != "" {
		m.minVersion = backend.minVersion
	}
	if backend.maxVersion != "" {
		m.maxVersion = backend.maxVersion
	}
	if len(backend.ciphers) > 0 {
		m.ciphers = backend.ciphers
	}
	if len(backend.curves) > 0 {
		m.curves = backend.curves
	}
	if len(backend.sigAlgs) > 0 {
		m.sigAlgs = backend.sigAlgs
	}
	if backend.alpnSet {
		m.alpn, m.alpnSet = backend.alpn, true
	}
	return &m
}

// clientTLSSettings reads one owner's BackendTLSConfig. The client certificate Secret must
// be in the owner's namespace; an SDS reference Secret (with enableSDSSecretRef) makes
// Envoy fetch it from that server.
func (translation *routeTranslator) clientTLSSettings(cfg *egv1a1.BackendTLSConfig, ownerKind, ownerNS,
	ownerName string) (*clientTLS, error) {
	c := &clientTLS{ciphers: cfg.Ciphers, curves: cfg.ECDHCurves, sigAlgs: cfg.SignatureAlgorithms}
	if cfg.MinVersion != nil {
		c.minVersion = string(*cfg.MinVersion)
	}
	if cfg.MaxVersion != nil {
		c.maxVersion = string(*cfg.MaxVersion)
	}
	if cfg.ALPNProtocols != nil {
		c.alpnSet = true
		for _, p := range cfg.ALPNProtocols {
			c.alpn = append(c.alpn, string(p))
		}
	}
	ref := cfg.ClientCertificateRef
	if ref == nil {
		return c, nil
	}
	ns := ownerNS
	if ref.Namespace != nil {
		ns = string(*ref.Namespace)
	}
	// a Gateway's reference was checked with its ReferenceGrants already (gatewaytls.go)
	if ns != ownerNS && ownerKind != "Gateway" {
		return nil, fmt.Errorf(
			"ClientCertificateRef Secret is not located in the same namespace as %s. Secret namespace: %s "+
				"does not match %s namespace: %s",
			ownerKind, ns, ownerKind, ownerNS)
	}
	s := translation.objects.secrets[types.NamespacedName{Namespace: ns, Name: string(ref.Name)}]
	if s == nil {
		return nil, fmt.Errorf("failed to locate TLS secret for client auth: %s/%s specified in %s %s/%s",
			ownerNS, ref.Name, ownerKind, ownerNS, ownerName)
	}
	if s.Type == certs.SDSSecretType {
		if !translation.objects.sdsSecretRefs {
			return nil, errors.New("SDS Secret reference is not enabled in EnvoyGateway configuration")
		}
		sref, err := certs.ReadSDSRef(s)
		if err != nil {
			return nil, fmt.Errorf("invalid SDS reference secret: %w", err)
		}
		c.certs = []ir.TLSCertificate{{SDS: &ir.SDSSource{SecretName: sref.SecretName, URL: sref.URL}}}
		return c, nil
	}
	c.certs = []ir.TLSCertificate{{
		Name:        s.Namespace + "/" + s.Name,
		Certificate: secretData(s, "tls.crt"),
		PrivateKey:  secretData(s, "tls.key"),
	}}
	return c, nil
}

// proxyClientTLS is the client side of upstream TLS from the route's first Gateway parent,
// or the Gateway whose telemetry is resolved (its spec.tls.backend, else its EnvoyProxy's
// backendTLS), with its
// owner (kind, namespace, name) for error messages.
func (translation *routeTranslator) proxyClientTLS() (*egv1a1.BackendTLSConfig, string, string, string) {
	g := translation.telemetryGateway
	if g == nil {
		if len(translation.curAncestors) == 0 {
			return nil, "", "", ""
		}
		a := translation.curAncestors[0]
		g = translation.findGateway(a.Namespace, a.Name)
	}
	if g == nil {
		return nil, "", "", ""
	}
	if g.backendTLS.set { // the Gateway's spec.tls.backend replaces the EnvoyProxy's
		if g.backendTLS.cfg == nil {
			return nil, "", "", ""
		}
		return g.backendTLS.cfg, "Gateway", g.gw.Namespace, g.gw.Name
	}
	envoyProxy, _ := translation.objects.envoyProxyOf(g.gw)
	if envoyProxy == nil || envoyProxy.Spec.BackendTLS == nil {
		return nil, "", "", ""
	}
	return envoyProxy.Spec.BackendTLS, egv1a1.KindEnvoyProxy, envoyProxy.Namespace, envoyProxy.Name
}

// validateBackendTLS is the part of EG's Backend validation that concerns spec.tls: unless
// verification is skipped, trust must come from the Backend itself, from a
// BackendTLSPolicy naming the whole Backend, or from section-named policies covering every
// endpoint port; and the client certificate must be in the Backend's namespace. An invalid
// Backend is not Accepted, and routes to it say InvalidBackendRef.
func (objects *index) validateBackendTLS(be *egv1a1.Backend) error {
	t := be.Spec.TLS
	if t == nil {
		return nil
	}
	if t.InsecureSkipVerify == nil || !*t.InsecureSkipVerify {
		if t.WellKnownCACertificates == nil && len(t.CACertificateRefs) == 0 && !objects.policiesTrustBackend(be) {
			return errors.New(
				"must specify either CACertificateRefs or WellKnownCACertificates when InsecureSkipVerify is unset or false")
		}
	}
	if t.BackendTLSConfig != nil && t.ClientCertificateRef != nil && t.ClientCertificateRef.Namespace != nil {
		if ns := string(*t.ClientCertificateRef.Namespace); ns != be.Namespace {
			return fmt.Errorf(
				"clientCertificateRef Secret is not located in the same namespace as Backend. Secret namespace: %s does "+
					"not match Backend namespace: %s",
				ns, be.Namespace)
		}
	}
	return nil
}

// policiesTrustBackend: some BackendTLSPolicy naming the Backend (by name; EG does not look
// at the policy's namespace here) brings trust for all of it, or section-named ones cover
// each of its endpoint ports.
func (objects *index) policiesTrustBackend(be *egv1a1.Backend) bool {
	ports := map[string]bool{}
	for _, endpoint := range be.Spec.Endpoints {
		switch {
		case endpoint.FQDN != nil:
			ports[strconv.Itoa(int(endpoint.FQDN.Port))] = false
		case endpoint.IP != nil:
			ports[strconv.Itoa(int(endpoint.IP.Port))] = false
		}
	}
	for _, p := range objects.btlsPolicies {
		for _, t := range p.Spec.TargetRefs {
			if string(t.Group) != egv1a1.GroupName || string(t.Kind) != egv1a1.KindBackend || string(t.Name) != be.Name {
				continue
			}
			if t.SectionName == nil {
				if p.Spec.Validation.WellKnownCACertificates != nil || len(p.Spec.Validation.CACertificateRefs) > 0 {
					return true
				}
				continue
			}
			if _, ok := ports[string(*t.SectionName)]; ok {
				ports[string(*t.SectionName)] = true
			}
		}
	}
	if len(ports) == 0 {
		return false
	}
	for _, covered := range ports {
		if !covered {
			return false
		}
	}
	return true
}
