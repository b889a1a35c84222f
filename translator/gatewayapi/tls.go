package gatewayapi

import (
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	gwapiv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/egharness/egharness/translator/certs"
	"github.com/egharness/egharness/translator/conditions"
	"github.com/egharness/egharness/translator/ir"
	"github.com/egharness/egharness/translator/result"
)

// checkTLS validates an HTTPS listener's TLS block and resolves its certificates. Problems
// become listener conditions with EG's reasons and messages.
func (l *listenerCtx) checkTLS(objects *index,
	permitted func(fromKind, fromNS, toGroup, toKind, toNS, toName string) bool) {
	t := l.spec.TLS
	if t == nil {
		l.conditions = conditions.Set(l.conditions, conditions.New("Programmed", "False", "Invalid",
			fmt.Sprintf("Listener must have TLS set when protocol is %s.", l.spec.Protocol)))
		return
	}
	if t.Mode != nil && *t.Mode != gwapiv1.TLSModeTerminate {
		l.conditions = conditions.Set(l.conditions, conditions.New("Programmed", "False", "UnsupportedTLSMode",
			fmt.Sprintf("TLS %s mode is not supported, TLS mode must be Terminate.", *t.Mode)))
		return
	}
	// Certificates live in the namespace of the listener's owner: the Gateway, or the
	// ListenerSet that brought the listener; a grant is needed from that owner.
	ownerKind, ownerNS := "Gateway", l.gateway.gw.Namespace
	if l.listenerSet != nil {
		ownerKind, ownerNS = "ListenerSet", l.listenerSet.Namespace
	}
	if len(t.CertificateRefs) == 0 {
		l.conditions = conditions.Set(l.conditions,
			conditions.New("Programmed", "False", "Invalid", "Listener must have at least 1 TLS certificate ref"))
		return
	}
	// First the references: each error names the ref's index. Serving certificates are
	// then validated together (TLS-04), their errors naming the Secret.
	var errs []string
	allNotPermitted := true
	var inline []*corev1.Secret
	var ordered []*corev1.Secret // the usable Secrets in ref order, inline and SDS
	sdsSeen := map[types.NamespacedName]bool{}
	sdsRefs := map[*corev1.Secret]certs.SDSRef{}
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
		key := types.NamespacedName{Namespace: ns, Name: string(ref.Name)}
		sec := objects.secrets[key]
		switch {
		case sec == nil:
			fail("InvalidCertificateRef", "Secret %s/%s does not exist.", ns, ref.Name)
			continue
		case sec.Type == certs.SDSSecretType && objects.listenerSDS:
			// TLS-08: the certificate lives on an external SDS server.
			if !objects.sdsSecretRefs {
				fail("InvalidCertificateRef",
					"SDS Secret %s/%s cannot be used because SDS Secret references are not enabled in EnvoyGateway configuration.", ns,
					ref.Name)
				continue
			}
			sds, err := certs.ReadSDSRef(sec)
			if err != nil {
				fail("InvalidCertificateRef", "Secret %s/%s is not a valid SDS reference secret: %v.", ns, ref.Name, err)
				continue
			}
			if sdsSeen[key] {
				continue // named twice: one SDS config is enough
			}
			sdsSeen[key] = true
			sdsRefs[sec] = sds
			ordered = append(ordered, sec)
			continue
		case sec.Type != corev1.SecretTypeTLS:
			fail("InvalidCertificateRef", "Secret %s/%s must be of type %s.", ns, ref.Name, corev1.SecretTypeTLS)
			continue
		case len(secretData(sec, corev1.TLSCertKey)) == 0 || len(secretData(sec, corev1.TLSPrivateKeyKey)) == 0:
			fail("InvalidCertificateRef", "Secret %s/%s must contain %s and %s.", ns, ref.Name, corev1.TLSCertKey,
				corev1.TLSPrivateKeyKey)
			continue
		}
		inline = append(inline, sec)
		ordered = append(ordered, sec)
	}
	if len(ordered) == 0 {
		reason := "InvalidCertificateRef"
		if allNotPermitted && len(errs) > 0 {
			reason = "RefNotPermitted"
		}
		l.conditions = conditions.Set(l.conditions,
			conditions.New("ResolvedRefs", "False", reason, "No valid secrets exist: "+strings.Join(errs, "\n")))
		return
	}
	served, certErrs := servingCertificates(inline, objects.now)
	if len(certErrs) > 0 {
		joined := strings.Join(certErrs, "\n")
		if len(served) == 0 && len(sdsRefs) == 0 {
			// Nothing left to serve: only the certificate errors are reported.
			l.conditions = conditions.Set(l.conditions,
				conditions.New("ResolvedRefs", "False", "InvalidCertificateRef", "No valid secrets exist: "+joined+"."))
			return
		}
		errs = append(errs, joined)
	}
	if len(errs) > 0 {
		l.conditions = conditions.Set(l.conditions,
			conditions.New("ResolvedRefs", "False", "PartiallyInvalidCertificateRef",
				"Some secrets are invalid: "+strings.Join(errs, "\n")))
	}
	for _, sec := range ordered {
		name := sec.Namespace + "/" + sec.Name
		if sds, ok := sdsRefs[sec]; ok {
			l.hasSDS = true
			l.certs = append(l.certs,
				ir.TLSCertificate{Name: name, SDS: &ir.SDSSource{SecretName: sds.SecretName, URL: sds.URL}})
			continue
		}
		if c, ok := served[sec]; ok {
			l.certDNSNames = append(l.certDNSNames, c.dnsNames...)
			l.certs = append(l.certs, ir.TLSCertificate{Name: name, Certificate: c.chain, PrivateKey: c.key})
		}
	}
}

// secretData reads a key of a Secret, stringData included (the API server merges it).
func secretData(s *corev1.Secret, key string) []byte {
	if v, ok := s.StringData[key]; ok {
		return []byte(v)
	}
	return s.Data[key]
}

// checkOverlappingTLS sets OverlappingTLSConfig on HTTPS listeners of one Gateway (of every
// Gateway of the proxy when Gateways merge, as EG does) that share a port and whose hostnames, then certificate SANs,
// overlap (the certificate reason wins, as Gateway API asks). Overlapping certificates make ALPN offer only http/1.1.
func checkOverlappingTLS(listeners []*listenerCtx) {
	var https []*listenerCtx
	for _, l := range listeners {
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
			if found[i] != nil || tlsCheckSkips(https[i].conditions) {
				continue
			}
			for j := i + 1; j < len(https); j++ {
				if found[j] != nil || tlsCheckSkips(https[j].conditions) || https[i].spec.Port != https[j].spec.Port {
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
			https[i].conditions = conditions.Set(https[i].conditions,
				conditions.New("OverlappingTLSConfig", "True", "OverlappingHostnames",
					fmt.Sprintf("The hostname %s overlaps with the hostname %s in listener %s%s.", p.mine, p.theirs, p.other.spec.Name,
						ofGateway(https[i], p.other))))
		}
	}
	checkSDSOpaque(https)
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
			https[i].conditions = conditions.Set(https[i].conditions,
				conditions.New("OverlappingTLSConfig", "True", "OverlappingCertificates",
					fmt.Sprintf(
						"The certificate SAN %s overlaps with the certificate SAN %s in listener %s%s. ALPN will default to HTTP/1.1 "+
							"to prevent HTTP/2 connection coalescing, unless explicitly configured via ClientTrafficPolicy",
						p.mine, p.theirs, p.other.spec.Name, ofGateway(https[i], p.other))))
			https[i].http11Only = true
			if lir := https[i].ir; lir != nil && lir.TLS != nil { // merged Gateways: checked after the IR is built
				lir.TLS.HTTP11Only = true
			}
		}
	}
}

// ofGateway names the other listener's Gateway when it is not this one's (merged Gateways
// are checked together), as EG's message does.
func ofGateway(l, other *listenerCtx) string {
	if l.gateway == other.gateway || l.gateway == nil || other.gateway == nil {
		return ""
	}
	return " of gateway " + other.gateway.gw.Name
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

// checkSDSOpaque: EG cannot read the names of a certificate an SDS server holds (TLS-09), so
// when several valid HTTPS listeners share a port it turns HTTP/2 off where connections
// might coalesce: on the SDS listeners themselves, on every listener of the port when an
// SDS listener has no hostname, and on listeners whose certificate names overlap an SDS
// listener's hostname. A lone listener on its port keeps HTTP/2. The affected listeners
// say so with OverlappingTLSConfig, reason SDSCertificateOpaque (what EG v1.9.1 writes; its
// release notes announce the condition as gateway.envoyproxy.io/TLSCertificateNamesUnknown).
func checkSDSOpaque(https []*listenerCtx) {
	valid := map[gwapiv1.PortNumber]int{}
	sds := map[gwapiv1.PortNumber][]*listenerCtx{}
	for _, l := range https {
		if tlsCheckSkips(l.conditions) {
			continue
		}
		valid[l.spec.Port]++
		if l.hasSDS {
			sds[l.spec.Port] = append(sds[l.spec.Port], l)
		}
	}
	for _, l := range https {
		if tlsCheckSkips(l.conditions) || valid[l.spec.Port] < 2 {
			continue
		}
		if !sdsAffects(l, sds[l.spec.Port]) {
			continue
		}
		l.http11Only = true
		l.conditions = conditions.Set(l.conditions,
			conditions.New("OverlappingTLSConfig", "True", "SDSCertificateOpaque", msgSDSCertificateOpaque))
	}
}

const msgSDSCertificateOpaque = "HTTP/2 is disabled by default because one or more HTTPS listeners on this port use " +
	"an SDS-backed certificate whose DNS names cannot be inspected. Configure ALPN explicitly with " +
	"ClientTrafficPolicy to override this default."

func sdsAffects(l *listenerCtx, sdsListeners []*listenerCtx) bool {
	for _, s := range sdsListeners {
		if s == l || s.spec.Hostname == nil {
			return true
		}
		for _, n := range l.certDNSNames {
			h := gwapiv1.Hostname(n)
			if hostnamesOverlap(s.spec.Hostname, &h) {
				return true
			}
		}
	}
	return false
}

// tlsCheckSkips: the overlap checks leave out listeners that failed, but not those that
// serve with part of their certificates (PartiallyInvalidCertificateRef).
func tlsCheckSkips(cs []result.Condition) bool {
	for _, c := range cs {
		if c.Type == "ResolvedRefs" && c.Reason == "PartiallyInvalidCertificateRef" {
			continue
		}
		if (c.Type == "Conflicted" && c.Status == "True") || (c.Type != "Conflicted" && c.Status == "False") {
			return true
		}
	}
	return false
}
