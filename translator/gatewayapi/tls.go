package gatewayapi

import (
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	gwapiv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/egharness/egharness/translator/ir"
)

// checkTLS validates an HTTPS listener's TLS block and resolves its certificates. Problems
// become listener conditions with EG's reasons and messages.
func (l *listenerCtx) checkTLS(ix *index, permitted func(fromKind, fromNS, toGroup, toKind, toNS, toName string) bool) {
	t := l.spec.TLS
	if t == nil {
		l.conditions = setCondition(l.conditions, cond("Programmed", "False", "Invalid",
			fmt.Sprintf("Listener must have TLS set when protocol is %s.", l.spec.Protocol)))
		return
	}
	if t.Mode != nil && *t.Mode != gwapiv1.TLSModeTerminate {
		l.conditions = setCondition(l.conditions, cond("Programmed", "False", "UnsupportedTLSMode",
			fmt.Sprintf("TLS %s mode is not supported, TLS mode must be Terminate.", *t.Mode)))
		return
	}
	// Certificates live in the namespace of the listener's owner: the Gateway, or the
	// ListenerSet that brought the listener; a grant is needed from that owner.
	ownerKind, ownerNS := "Gateway", l.gateway.gw.Namespace
	if l.listenerSet != nil {
		ownerKind, ownerNS = "ListenerSet", l.listenerSet.Namespace
	}
	var errs []string
	allNotPermitted := true
	for i, ref := range t.CertificateRefs {
		fail := func(reason, format string, args ...any) {
			errs = append(errs, fmt.Sprintf("certificate refs %d: ", i)+fmt.Sprintf(format, args...))
			if reason != "RefNotPermitted" {
				allNotPermitted = false
			}
		}
		if ref.Group != nil && *ref.Group != "" {
			fail("InvalidCertificateRef", "Listener's TLS certificate ref group must be unspecified/empty.")
			continue
		}
		if ref.Kind != nil && *ref.Kind != "Secret" {
			fail("InvalidCertificateRef", "Listener's TLS certificate ref kind must be Secret.")
			continue
		}
		ns := ownerNS
		if ref.Namespace != nil && *ref.Namespace != "" {
			ns = string(*ref.Namespace)
		}
		if ns != ownerNS && !permitted(ownerKind, ownerNS, "", "Secret", ns, string(ref.Name)) {
			fail("RefNotPermitted", "Certificate ref to secret %s/%s not permitted by any ReferenceGrant.", ns, ref.Name)
			continue
		}
		sec := ix.secrets[types.NamespacedName{Namespace: ns, Name: string(ref.Name)}]
		switch {
		case sec == nil:
			fail("InvalidCertificateRef", "Secret %s/%s does not exist.", ns, ref.Name)
			continue
		case sec.Type != corev1.SecretTypeTLS:
			fail("InvalidCertificateRef", "Secret %s/%s must be of type %s.", ns, ref.Name, corev1.SecretTypeTLS)
			continue
		case len(secretData(sec, corev1.TLSCertKey)) == 0 || len(secretData(sec, corev1.TLSPrivateKeyKey)) == 0:
			fail("InvalidCertificateRef", "Secret %s/%s must contain %s and %s.", ns, ref.Name, corev1.TLSCertKey, corev1.TLSPrivateKeyKey)
			continue
		}
		certPEM, keyPEM := secretData(sec, corev1.TLSCertKey), secretData(sec, corev1.TLSPrivateKeyKey)
		names, err := certificateDNSNames(certPEM, keyPEM)
		if err != nil {
			fail("InvalidCertificateRef", "Secret %s/%s: %v.", ns, ref.Name, err)
			continue
		}
		l.certDNSNames = append(l.certDNSNames, names...)
		l.certs = append(l.certs, ir.TLSCertificate{Name: ns + "/" + string(ref.Name), Certificate: certPEM, PrivateKey: keyPEM})
	}
	if len(l.certs) == 0 {
		reason := "InvalidCertificateRef"
		if allNotPermitted && len(errs) > 0 {
			reason = "RefNotPermitted"
		}
		l.conditions = setCondition(l.conditions, cond("ResolvedRefs", "False", reason, "No valid secrets exist: "+strings.Join(errs, "\n")))
		return
	}
	if len(errs) > 0 {
		l.conditions = setCondition(l.conditions, cond("ResolvedRefs", "False", "PartiallyInvalidCertificateRef", "Some secrets are invalid: "+strings.Join(errs, "\n")))
	}
}

// secretData reads a key of a Secret, stringData included (the API server merges it).
func secretData(s *corev1.Secret, key string) []byte {
	if v, ok := s.StringData[key]; ok {
		return []byte(v)
	}
	return s.Data[key]
}

// certificateDNSNames checks that the PEM holds a certificate and a matching key, and
// returns the leaf's DNS SANs (what the overlap check compares).
func certificateDNSNames(certPEM, keyPEM []byte) ([]string, error) {
	block, _ := pem.Decode(certPEM)
	if block == nil || block.Type != "CERTIFICATE" {
		return nil, errors.New("tls.crt holds no PEM certificate")
	}
	leaf, err := x509.ParseCertificate(block.Bytes)
	if err != nil {
		return nil, fmt.Errorf("unable to parse the certificate: %v", err)
	}
	if _, err := tls.X509KeyPair(certPEM, keyPEM); err != nil {
		return nil, fmt.Errorf("the private key does not match the certificate: %v", err)
	}
	return leaf.DNSNames, nil
}

// checkOverlappingTLS sets OverlappingTLSConfig on HTTPS listeners of one Gateway that share
// a port and whose hostnames, then certificate SANs, overlap (the certificate reason wins,
// as Gateway API asks). Overlapping certificates make ALPN offer only http/1.1.
func (g *gatewayCtx) checkOverlappingTLS() {
	var https []*listenerCtx
	for _, l := range g.listeners {
		if l.spec.Protocol == gwapiv1.HTTPSProtocolType {
			https = append(https, l)
		}
	}
	type pair struct {
		other        *listenerCtx
		mine, theirs string
	}
	mark := func(overlap func(a, b *listenerCtx) (string, string, bool)) []*pair {
		found := make([]*pair, len(https))
		for i := range https {
			if found[i] != nil || hasFailure(https[i].conditions) {
				continue
			}
			for j := i + 1; j < len(https); j++ {
				if found[j] != nil || hasFailure(https[j].conditions) || https[i].spec.Port != https[j].spec.Port {
					continue
				}
				// Every later overlapping listener is marked; i keeps the last one it met.
				if a, b, ok := overlap(https[i], https[j]); ok {
					found[i] = &pair{other: https[j], mine: a, theirs: b}
					found[j] = &pair{other: https[i], mine: b, theirs: a}
				}
			}
		}
		return found
	}
	byHost := mark(func(a, b *listenerCtx) (string, string, bool) {
		return a.hostname(), b.hostname(), hostnamesOverlap(a.spec.Hostname, b.spec.Hostname)
	})
	for i, p := range byHost {
		if p != nil {
			https[i].conditions = setCondition(https[i].conditions, cond("OverlappingTLSConfig", "True", "OverlappingHostnames",
				fmt.Sprintf("The hostname %s overlaps with the hostname %s in listener %s.", p.mine, p.theirs, p.other.spec.Name)))
		}
	}
	byCert := mark(func(a, b *listenerCtx) (string, string, bool) {
		for _, x := range a.certDNSNames {
			for _, y := range b.certDNSNames {
				hx, hy := gwapiv1.Hostname(x), gwapiv1.Hostname(y)
				if hostnamesOverlap(&hx, &hy) {
					return x, y, true
				}
			}
		}
		return "", "", false
	})
	for i, p := range byCert {
		if p != nil {
			https[i].conditions = setCondition(https[i].conditions, cond("OverlappingTLSConfig", "True", "OverlappingCertificates",
				fmt.Sprintf("The certificate SAN %s overlaps with the certificate SAN %s in listener %s. ALPN will default to HTTP/1.1 to prevent HTTP/2 connection coalescing, unless explicitly configured via ClientTrafficPolicy", p.mine, p.theirs, p.other.spec.Name)))
			https[i].http11Only = true
		}
	}
}

// hostnamesOverlap: a missing hostname overlaps everything; a wildcard overlaps the names
// one label below it; otherwise the names must be equal.
func hostnamesOverlap(a, b *gwapiv1.Hostname) bool {
	if a == nil || b == nil {
		return true
	}
	return wildcardOneLabel(string(*a), string(*b)) || wildcardOneLabel(string(*b), string(*a))
}

func wildcardOneLabel(name, pattern string) bool {
	if strings.HasPrefix(pattern, "*") && len(pattern) > 1 && !strings.HasPrefix(name, "*") {
		suffix := pattern[1:]
		return strings.HasSuffix(name, suffix) && !strings.Contains(strings.TrimSuffix(name, suffix), ".")
	}
	return name == pattern
}
