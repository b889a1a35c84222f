package gatewayapi

import (
	"fmt"

	egv1a1 "github.com/envoyproxy/gateway/api/v1alpha1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	gwapiv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/egharness/egharness/translator/resource"
	"github.com/egharness/egharness/translator/result"
)

// Gateway-level TLS (spec.tls, Gateway API v1.5+), as EG v1.9 reads it before the listeners.
// spec.tls.backend names the client certificate the proxy presents to TLS backends; when the
// field is present it replaces the EnvoyProxy's backendTLS for this Gateway's routes entirely,
// even when it names nothing usable (then no client settings apply at all). The Gateway's
// ResolvedRefs condition says whether the references resolved. spec.tls.frontend (client
// certificate validation per port) is not translated here: a warning names it.

const (
	reasonInvalidClientCertificateRef = "InvalidClientCertificateRef"
	msgGatewayTLSResolved             = "Successfully resolved all TLS references for the gateway"
)

// gatewayBackendTLS is what spec.tls.backend gives the routes of one Gateway.
type gatewayBackendTLS struct {
	// set: spec.tls.backend is present, so the EnvoyProxy's backendTLS does not apply.
	set bool
	// cfg is the client certificate to present; nil when none is named or it did not resolve.
	cfg *egv1a1.BackendTLSConfig
}

// processTLS reads the Gateway's spec.tls and writes its ResolvedRefs condition.
func (g *gatewayCtx) processTLS(ix *index, permitted permitFunc, st *statusBook) {
	spec := g.gw.Spec.TLS
	if spec == nil {
		return
	}
	ok := true
	var resolved result.Condition
	if b := spec.Backend; b != nil {
		g.backendTLS.set = true
		if c, err := g.backendClientCert(b.ClientCertificateRef, ix, permitted); err != nil {
			ok, resolved = false, *err
		} else {
			g.backendTLS.cfg = c
		}
	}
	if ok {
		resolved = cond("ResolvedRefs", "True", "ResolvedRefs", msgGatewayTLSResolved)
	}
	s := st.object(resource.Ref{Kind: "Gateway", Namespace: g.gw.Namespace, Name: g.gw.Name})
	s.Conditions = setCondition(s.Conditions, resolved)
}

// backendClientCert checks spec.tls.backend.clientCertificateRef: a core Secret, in the
// Gateway's namespace or granted by a ReferenceGrant, holding tls.crt and tls.key. The error
// is the ResolvedRefs condition EG writes.
func (g *gatewayCtx) backendClientCert(ref *gwapiv1.SecretObjectReference, ix *index, permitted permitFunc) (*egv1a1.BackendTLSConfig, *result.Condition) {
	if ref == nil {
		return nil, nil
	}
	fail := func(reason, msg string) (*egv1a1.BackendTLSConfig, *result.Condition) {
		c := cond("ResolvedRefs", "False", reason, msg)
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
		return fail(reasonInvalidClientCertificateRef, "Invalid backend client certificate reference for gateway: invalid client certificate reference kind: "+kind)
	case group != "":
		return fail(reasonInvalidClientCertificateRef, "Invalid backend client certificate reference for gateway: invalid client certificate reference group: "+group)
	}
	ns := g.gw.Namespace
	if ref.Namespace != nil {
		ns = string(*ref.Namespace)
	}
	if ns != g.gw.Namespace && !permitted("Gateway", g.gw.Namespace, group, kind, ns, string(ref.Name)) {
		return fail(string(gwapiv1.GatewayReasonRefNotPermitted), "invalid cross-namespace reference to backend client certificate")
	}
	s := ix.secrets[types.NamespacedName{Namespace: ns, Name: string(ref.Name)}]
	switch {
	case s == nil:
		return fail(reasonInvalidClientCertificateRef, "failed to get backend client certs for gateway")
	case secretData(s, corev1.TLSCertKey) == nil || secretData(s, corev1.TLSPrivateKeyKey) == nil:
		return fail(reasonInvalidClientCertificateRef, fmt.Sprintf(
			"invalid backend client cert secret for gateway: secret %s/%s must contain 'tls.crt' and 'tls.key' fields", ns, ref.Name))
	}
	return &egv1a1.BackendTLSConfig{ClientCertificateRef: ref}, nil
}
