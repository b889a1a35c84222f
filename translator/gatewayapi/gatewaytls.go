package gatewayapi

import (
	"errors"
	"fmt"
	"strconv"

	egv1a1 "github.com/envoyproxy/gateway/api/v1alpha1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	gwapiv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/egharness/egharness/translator/conditions"
	"github.com/egharness/egharness/translator/ir"
	"github.com/egharness/egharness/translator/resource"
	"github.com/egharness/egharness/translator/result"
)

// Gateway-level TLS (spec.tls, Gateway API v1.5+), as EG v1.9 reads it before the listeners.
//
// spec.tls.frontend validates client certificates on the Gateway's HTTPS listeners: a
// default, and per-port entries that replace it on their port (one without validation turns
// it off there). The CA data of the references is joined as it is (no expiry check, unlike a
// ClientTrafficPolicy's, whose clientValidation replaces it) and sent as the secret
// gateway/<ns>/<name>/<default or port>/ca.crt. AllowValidOnly requires a certificate the CAs
// sign; AllowInsecureFallback asks for one and accepts any, and the Gateway says so
// (InsecureFrontendValidationMode). A listener whose validation does not resolve is left out
// of the xDS and says why in its conditions (frontendRefused); its routes stay attached.
//
// spec.tls.backend names the client certificate the proxy presents to TLS backends; when the
// field is present it replaces the EnvoyProxy's backendTLS for this Gateway's routes entirely,
// even when it names nothing usable (then no client settings apply at all).
//
// Every failure sets the Gateway's ResolvedRefs False (the last one wins); with none it is
// True.

const (
	reasonInvalidClientCertificateRef = "InvalidClientCertificateRef"
	msgGatewayTLSResolved             = "Successfully resolved all TLS references for the gateway"
	msgInsecureFrontendValidation     = "Gateway is using AllowInsecureFallback frontend validation mode."
)

// gatewayBackendTLS is what spec.tls.backend gives the routes of one Gateway.
type gatewayBackendTLS struct {
	// set: spec.tls.backend is present, so the EnvoyProxy's backendTLS does not apply.
	set bool
	// cfg is the client certificate to present; nil when none is named or it did not resolve.
	cfg *egv1a1.BackendTLSConfig
}

// frontendValidation is the client validation of one port (or the default): the IR's, or the
// error that keeps the port's HTTPS listeners out of the xDS.
type frontendValidation struct {
	v   *ir.ClientValidation
	err error
}

// gatewayTLS reads the Gateway's spec.tls and writes its conditions.
func (translation *routeTranslator) gatewayTLS(g *gatewayCtx) {
	spec := g.gw.Spec.TLS
	if spec == nil {
		return
	}
	s := translation.status.object(resource.Ref{Kind: "Gateway", Namespace: g.gw.Namespace, Name: g.gw.Name})
	ok := true
	fail := func(c result.Condition) {
		ok = false
		s.Conditions = conditions.Set(s.Conditions, c)
	}
	if f := spec.Frontend; f != nil {
		insecure := false
		validation := func(v *gwapiv1.FrontendTLSValidation, suffix, what string) *frontendValidation {
			if v == nil {
				return nil
			}
			fv := translation.frontendValidation(g.gw, v, suffix)
			if fv.err != nil {
				fail(conditions.New("ResolvedRefs", "False", reasonInvalidParameters,
					fmt.Sprintf("Failed to get %sfrontend CA certs for gateway: %v", what, fv.err)))
			} else if v.Mode == gwapiv1.AllowInsecureFallback {
				insecure = true
			}
			return fv
		}
		def := validation(f.Default.Validation, "default", "default ")
		perPort := map[gwapiv1.PortNumber]*frontendValidation{}
		for _, pp := range f.PerPort {
			perPort[pp.Port] = validation(pp.TLS.Validation, strconv.Itoa(int(pp.Port)), "")
		}
		if insecure {
			s.Conditions = conditions.Set(s.Conditions,
				conditions.New(string(gwapiv1.GatewayConditionInsecureFrontendValidationMode), "True",
					string(gwapiv1.GatewayReasonConfigurationChanged), msgInsecureFrontendValidation))
		}
		for _, l := range g.listeners {
			if l.spec.Protocol != gwapiv1.HTTPSProtocolType {
				continue // frontend validation is for HTTPS listeners only
			}
			fv, own := perPort[l.spec.Port]
			if !own {
				fv = def
			}
			switch {
			case fv == nil:
			case fv.err != nil:
				l.frontendRefused(fv.err)
			case l.ir != nil && l.ir.TLS != nil:
				l.ir.TLS.ClientValidation = fv.v
			}
		}
	}
	if b := spec.Backend; b != nil {
		g.backendTLS.set = true
		if c, err := g.backendClientCert(b.ClientCertificateRef, translation.objects, translation.permitted); err != nil {
			fail(*err)
		} else {
			g.backendTLS.cfg = c
		}
	}
	if ok {
		s.Conditions = conditions.Set(s.Conditions,
			conditions.New("ResolvedRefs", "True", "ResolvedRefs", msgGatewayTLSResolved))
	}
}

// frontendRefused takes an HTTPS listener whose client validation did not resolve out of the
// xDS and writes its conditions: ResolvedRefs and Programmed False with the reason the error
// gives, Accepted False (NoValidCACertificate), in that order on a listener that was valid
// so far.
func (l *listenerCtx) frontendRefused(err error) {
	l.frontendInvalid = true
	msg := "Listener has invalid caCertificateRef for frontend TLS validation: " + err.Error()
	reason := gwapiv1.ListenerReasonInvalidCACertificateRef
	switch {
	case errors.Is(err, errCAKind):
		reason = gwapiv1.ListenerReasonInvalidCACertificateKind
	case errors.Is(err, errNoCA):
		reason = gwapiv1.ListenerReasonNoValidCACertificate
	case errors.Is(err, errRefNotPermitted):
		reason = gwapiv1.ListenerReasonRefNotPermitted
	}
	refused := []result.Condition{
		conditions.New("ResolvedRefs", "False", string(reason), msg),
		conditions.New("Programmed", "False", string(reason), msg),
		conditions.New("Accepted", "False", string(gwapiv1.ListenerReasonNoValidCACertificate), msg),
	}
	valid := true
	for _, c := range l.conditions {
		valid = valid && c.Status == "True"
	}
	if valid { // EG writes these before the listener's other conditions
		l.conditions = refused
		return
	}
	for _, c := range refused {
		l.conditions = conditions.Set(l.conditions, c)
	}
}

// frontendValidation resolves one validation's CA references (in the Gateway's namespace,
// or granted to it) and mode.
func (translation *routeTranslator) frontendValidation(gw *gwapiv1.Gateway, v *gwapiv1.FrontendTLSValidation,
	suffix string) *frontendValidation {
	pem, _, sds, err := translation.caBundle("Gateway", gw.Namespace, v.CACertificateRefs)
	if err != nil {
		return &frontendValidation{err: err}
	}
	cv := &ir.ClientValidation{
		RequireClientCertificate: true,
		CA: &ir.CABundle{Name: fmt.Sprintf("gateway/%s/%s/%s/ca.crt", gw.Namespace, gw.Name, suffix),
			PEM: pem, SDS: sds},
	}
	if v.Mode == gwapiv1.AllowInsecureFallback {
		cv.RequireClientCertificate, cv.AcceptUntrusted = false, true
	}
	return &frontendValidation{v: cv}
}

// backendClientCert checks spec.tls.backend.clientCertificateRef: a core Secret, in the
// Gateway's namespace or granted by a ReferenceGrant, holding tls.crt and tls.key. The error
// is the ResolvedRefs condition EG writes.
func (g *gatewayCtx) backendClientCert(ref *gwapiv1.SecretObjectReference, objects *index,
	permitted permitFunc) (*egv1a1.BackendTLSConfig, *result.Condition) {
	if ref == nil {
		return nil, nil
	}
	fail := func(reason, msg string) (*egv1a1.BackendTLSConfig, *result.Condition) {
		c := conditions.New("ResolvedRefs", "False", reason, msg)
		return nil, &c
	}
	group, kind := "", "Secret"
	if ref.Group != nil {
		group = string(*ref.Group)
	}
	if ref.Kind != nil {
		kind = string(*ref.Kind)
	}
	switch {
	case kind != "Secret":
		return fail(reasonInvalidClientCertificateRef,
			"Invalid backend client certificate reference for gateway: invalid client certificate reference kind: "+kind)
	case group != "":
		return fail(reasonInvalidClientCertificateRef,
			"Invalid backend client certificate reference for gateway: invalid client certificate reference group: "+group)
	}
	ns := g.gw.Namespace
	if ref.Namespace != nil {
		ns = string(*ref.Namespace)
	}
	if ns != g.gw.Namespace && !permitted("Gateway", g.gw.Namespace, group, kind, ns, string(ref.Name)) {
		return fail(string(gwapiv1.GatewayReasonRefNotPermitted),
			"invalid cross-namespace reference to backend client certificate")
	}
	s := objects.secrets[types.NamespacedName{Namespace: ns, Name: string(ref.Name)}]
	switch {
	case s == nil:
		return fail(reasonInvalidClientCertificateRef, "failed to get backend client certs for gateway")
	case secretData(s, corev1.TLSCertKey) == nil || secretData(s, corev1.TLSPrivateKeyKey) == nil:
		return fail(reasonInvalidClientCertificateRef, fmt.Sprintf(
			"invalid backend client cert secret for gateway: secret %s/%s must contain 'tls.crt' and 'tls.key' fields", ns,
			ref.Name))
	}
	return &egv1a1.BackendTLSConfig{ClientCertificateRef: ref}, nil
}
