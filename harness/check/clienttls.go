package check

import (
	"crypto/x509"
	"encoding/pem"
	"slices"

	listenerv3 "github.com/envoyproxy/go-control-plane/envoy/config/listener/v3"
	tlsv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/transport_sockets/tls/v3"

	"github.com/egharness/egharness/harness/scenario"
)

// secretTrustedCAs checks the CA certificates a validation-context Secret trusts.
func (c *collector) secretTrustedCAs(where, what string, s *tlsv3.Secret, x scenario.XDSExpect) {
	if len(x.TrustedCAs) == 0 {
		return
	}
	vc := s.GetValidationContext()
	if vc == nil {
		c.failf("xds", where, "%s: not a validation-context secret", what)
		return
	}
	var got []string
	for rest := vc.GetTrustedCa().GetInlineBytes(); len(rest) > 0; {
		b, r := pem.Decode(rest)
		if b == nil {
			break
		}
		rest = r
		cert, err := x509.ParseCertificate(b.Bytes)
		if err != nil {
			got = append(got, "unparsable "+b.Type)
			continue
		}
		got = append(got, cert.Subject.CommonName+" until "+cert.NotAfter.UTC().Format("2006-01-02"))
	}
	if !slices.Equal(got, x.TrustedCAs) {
		c.failf("xds", where, "%s: trusts %v, expected %v", what, got, x.TrustedCAs)
	}
}

// filterChainClientTLS checks what a ClientTrafficPolicy's TLS made of a filter chain's
// DownstreamTlsContext: protocol versions, ciphers, the client CA and whether a client
// certificate is required.
func (c *collector) filterChainClientTLS(where, what string, fc *listenerv3.FilterChain, x scenario.XDSExpect) {
	if x.MinTLS == "" && x.MaxTLS == "" && len(x.Ciphers) == 0 && x.ClientCA == "" && x.RequireClientCertificate == nil {
		return
	}
	var ctx tlsv3.DownstreamTlsContext
	if ts := fc.GetTransportSocket(); ts == nil || ts.GetTypedConfig() == nil ||
		ts.GetTypedConfig().UnmarshalTo(&ctx) != nil {
		c.failf("xds", where, "%s: terminates no TLS", what)
		return
	}
	common := ctx.GetCommonTlsContext()
	version := func(v tlsv3.TlsParameters_TlsProtocol) string {
		if v == tlsv3.TlsParameters_TLS_AUTO {
			return "auto"
		}
		return v.String()
	}
	if got := version(common.GetTlsParams().GetTlsMinimumProtocolVersion()); x.MinTLS != "" && got != x.MinTLS {
		c.failf("xds", where, "%s: minimum TLS version is %s, expected %s", what, got, x.MinTLS)
	}
	if got := version(common.GetTlsParams().GetTlsMaximumProtocolVersion()); x.MaxTLS != "" && got != x.MaxTLS {
		c.failf("xds", where, "%s: maximum TLS version is %s, expected %s", what, got, x.MaxTLS)
	}
	if got := common.GetTlsParams().GetCipherSuites(); len(x.Ciphers) > 0 && !slices.Equal(got, x.Ciphers) {
		c.failf("xds", where, "%s: cipher suites are %v, expected %v", what, got, x.Ciphers)
	}
	if got := clientCA(common); x.ClientCA != "" && got != x.ClientCA {
		c.failf("xds", where, "%s: client CA is %s, expected %s", what, got, x.ClientCA)
	}
	if w := x.RequireClientCertificate; w != nil && ctx.GetRequireClientCertificate().GetValue() != *w {
		c.failf("xds", where, "%s: requires a client certificate: %v, expected %v", what, !*w, *w)
	}
}

// clientCA names the SDS secret client certificates are checked against, "none" for a
// validation context without one, "off" when client certificates are not validated.
func clientCA(common *tlsv3.CommonTlsContext) string {
	switch v := common.GetValidationContextType().(type) {
	case *tlsv3.CommonTlsContext_ValidationContextSdsSecretConfig:
		return v.ValidationContextSdsSecretConfig.GetName()
	case *tlsv3.CommonTlsContext_CombinedValidationContext:
		return v.CombinedValidationContext.GetValidationContextSdsSecretConfig().GetName()
	case *tlsv3.CommonTlsContext_ValidationContext:
		if ca := v.ValidationContext.GetTrustedCa(); ca != nil {
			return "inline"
		}
		return "none"
	}
	return "off"
}
