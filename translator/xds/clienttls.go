package xds

import (
	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	listenerv3 "github.com/envoyproxy/go-control-plane/envoy/config/listener/v3"
	tlsinspectorv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/listener/tls_inspector/v3"
	tlsv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/transport_sockets/tls/v3"
	"google.golang.org/protobuf/types/known/wrapperspb"

	"github.com/egharness/egharness/translator/ir"
	"github.com/egharness/egharness/translator/result"
)

// A ClientTrafficPolicy's TLS on the DownstreamTlsContext of a terminating listener (CTP-02),
// and the client-validation CA it sends as an SDS secret.

// clientValidation is the client validation a listener applies: its ClientTrafficPolicy's,
// else its Gateway's spec.tls.frontend (nil: none).
func clientValidation(cfg *ir.TLSConfig, ctp *ir.DownstreamTLS) *ir.ClientValidation {
	if ctp != nil && ctp.ClientValidation != nil {
		return ctp.ClientValidation
	}
	if cfg != nil {
		return cfg.ClientValidation
	}
	return nil
}

// applyClientValidation asks for and checks client certificates as v says.
func applyClientValidation(ctx *tlsv3.DownstreamTlsContext, v *ir.ClientValidation) {
	if v == nil {
		return
	}
	ctx.RequireClientCertificate = wrapperspb.Bool(v.RequireClientCertificate)
	setClientValidation(ctx.CommonTlsContext, v)
}

// applyClientTLS changes ctx after the policy's resolved TLS (client validation aside, see
// applyClientValidation); nil leaves Envoy's defaults.
func applyClientTLS(ctx *tlsv3.DownstreamTlsContext, t *ir.DownstreamTLS) {
	if t == nil {
		return
	}
	common := ctx.CommonTlsContext
	params := &tlsv3.TlsParameters{
		TlsMinimumProtocolVersion: tlsVersions[t.MinVersion], // Auto: TLS_AUTO, the zero value
		TlsMaximumProtocolVersion: tlsVersions[t.MaxVersion],
		CipherSuites:              t.Ciphers,
		EcdhCurves:                t.ECDHCurves,
		SignatureAlgorithms:       t.SignatureAlgorithms,
	}
	if t.MinVersion != "" || t.MaxVersion != "" || len(t.Ciphers)+len(t.ECDHCurves)+len(t.SignatureAlgorithms) > 0 {
		common.TlsParams = params
	}
	if t.ALPNSet {
		common.AlpnProtocols = t.ALPN
	}
	if t.StatefulResumption {
		ctx.DisableStatefulSessionResumption = false
	}
	if t.StatelessResumption {
		ctx.SessionTicketKeysType = nil
	}
}

// setClientValidation: the CA comes over SDS; the checks that are not the CA's (accept
// untrusted, allow expired, SPKI and certificate hashes, SAN matchers) go in a default
// validation context combined with it, and stand alone when there is no CA.
func setClientValidation(common *tlsv3.CommonTlsContext, v *ir.ClientValidation) {
	vc := &tlsv3.CertificateValidationContext{
		AllowExpiredCertificate: v.AllowExpiredCertificate,
		VerifyCertificateSpki:   v.SPKIHashes,
		VerifyCertificateHash:   v.CertificateHashes,
	}
	if v.AcceptUntrusted {
		vc.TrustChainVerification = tlsv3.CertificateValidationContext_ACCEPT_UNTRUSTED
	}
	for _, san := range v.SubjectAltNames {
		m := &tlsv3.SubjectAltNameMatcher{Matcher: stringMatcher(&san.Match)}
		switch san.Type {
		case "DNS":
			m.SanType = tlsv3.SubjectAltNameMatcher_DNS
		case "EMAIL":
			m.SanType = tlsv3.SubjectAltNameMatcher_EMAIL
		case "URI":
			m.SanType = tlsv3.SubjectAltNameMatcher_URI
		case "IP_ADDRESS":
			m.SanType = tlsv3.SubjectAltNameMatcher_IP_ADDRESS
		default:
			m.SanType, m.Oid = tlsv3.SubjectAltNameMatcher_OTHER_NAME, san.Type
		}
		vc.MatchTypedSubjectAltNames = append(vc.MatchTypedSubjectAltNames, m)
	}
	if v.CA == nil {
		common.ValidationContextType = &tlsv3.CommonTlsContext_ValidationContext{ValidationContext: vc}
		return
	}
	sds := &tlsv3.SdsSecretConfig{Name: v.CA.Name, SdsConfig: adsSource()}
	if v.CA.SDS != nil { // the CA comes from the user's own SDS server
		sds = externalSDS(v.CA.SDS)
	}
	if v.AcceptUntrusted || v.AllowExpiredCertificate ||
		len(v.SPKIHashes)+len(v.CertificateHashes)+len(v.SubjectAltNames) > 0 {
		common.ValidationContextType = &tlsv3.CommonTlsContext_CombinedValidationContext{
			CombinedValidationContext: &tlsv3.CommonTlsContext_CombinedCertificateValidationContext{
				DefaultValidationContext:         vc,
				ValidationContextSdsSecretConfig: sds,
			},
		}
		return
	}
	common.ValidationContextType = &tlsv3.CommonTlsContext_ValidationContextSdsSecretConfig{
		ValidationContextSdsSecretConfig: sds}
}

// addClientCASecrets adds each client-validation CA once, as a validation-context secret
// (none for a CA an SDS server of the user's serves).
func addClientCASecrets(out *result.XDS, seen map[string]bool, v *ir.ClientValidation) {
	if v == nil || v.CA == nil || v.CA.SDS != nil {
		return
	}
	ca := v.CA
	if seen[ca.Name] {
		return
	}
	seen[ca.Name] = true
	vc := &tlsv3.CertificateValidationContext{
		TrustedCa: &corev3.DataSource{Specifier: &corev3.DataSource_InlineBytes{InlineBytes: ca.PEM}},
	}
	if crl := v.CRL; crl != nil {
		vc.Crl = &corev3.DataSource{Specifier: &corev3.DataSource_InlineBytes{InlineBytes: crl.PEM}}
		vc.OnlyVerifyLeafCertCrl = crl.OnlyVerifyLeaf
	}
	out.Secrets = append(out.Secrets,
		&tlsv3.Secret{Name: ca.Name, Type: &tlsv3.Secret_ValidationContext{ValidationContext: vc}})
}

func fingerprintsOf(l *ir.HTTPListener) []string {
	if t := l.Policies.ClientTLS; t != nil {
		return t.Fingerprints
	}
	return nil
}

// tlsInspectorFilter is the TLS inspector, computing the JA3 and JA4 fingerprints asked for.
func tlsInspectorFilter(fingerprints []string) *listenerv3.ListenerFilter {
	ti := &tlsinspectorv3.TlsInspector{}
	for _, f := range fingerprints {
		switch f {
		case "JA3":
			ti.EnableJa3Fingerprinting = wrapperspb.Bool(true)
		case "JA4":
			ti.EnableJa4Fingerprinting = wrapperspb.Bool(true)
		}
	}
	return &listenerv3.ListenerFilter{Name: tlsInspector,
		ConfigType: &listenerv3.ListenerFilter_TypedConfig{TypedConfig: mustAny(ti)}}
}
