package check

import (
	"bytes"
	"encoding/pem"
	"slices"

	listenerv3 "github.com/envoyproxy/go-control-plane/envoy/config/listener/v3"
	tlsv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/transport_sockets/tls/v3"

	"github.com/egharness/egharness/harness/scenario"
	"github.com/egharness/egharness/translator/result"
)

// secretPEM checks the PEM blocks of a certificate Secret and that they are canonical.
func (c *collector) secretPEM(where, what string, s *tlsv3.Secret, x scenario.XDSExpect) {
	tc := s.GetTlsCertificate()
	check := func(part string, data []byte, want []string) {
		if len(want) == 0 {
			return
		}
		got, canonical := pemBlockTypes(data)
		if !slices.Equal(got, want) {
			c.failf("xds", where, "%s: %s holds PEM blocks %v, expected %v", what, part, got, want)
		} else if !canonical {
			c.failf("xds", where, "%s: %s is not canonical PEM (text around the blocks, CRLF or odd line lengths)", what, part)
		}
	}
	check("certificate chain", tc.GetCertificateChain().GetInlineBytes(), x.ChainBlocks)
	check("private key", tc.GetPrivateKey().GetInlineBytes(), x.KeyBlocks)
}

// pemBlockTypes lists the PEM blocks of data and says whether data is exactly their
// canonical encoding.
func pemBlockTypes(data []byte) ([]string, bool) {
	var types []string
	var canon []byte
	for rest := data; len(rest) > 0; {
		b, r := pem.Decode(rest)
		if b == nil {
			break
		}
		types = append(types, b.Type)
		canon = append(canon, pem.EncodeToMemory(b)...)
		rest = r
	}
	return types, bytes.Equal(canon, data)
}

// filterChainTLS checks a filter chain's ALPN and certificate sources.
func (c *collector) filterChainTLS(where, what string, fc *listenerv3.FilterChain, x scenario.XDSExpect) {
	var ctx tlsv3.DownstreamTlsContext
	if ts := fc.GetTransportSocket(); ts != nil && ts.GetTypedConfig() != nil {
		_ = ts.GetTypedConfig().UnmarshalTo(&ctx)
	}
	common := ctx.GetCommonTlsContext()
	if len(x.ALPN) > 0 && !slices.Equal(common.GetAlpnProtocols(), x.ALPN) {
		c.failf("xds", where, "%s: ALPN is %v, expected %v", what, common.GetAlpnProtocols(), x.ALPN)
	}
	if len(x.Certificates) > 0 {
		var got []string
		for _, sc := range common.GetTlsCertificateSdsSecretConfigs() {
			name := sc.GetName()
			if cl := sc.GetSdsConfig().GetApiConfigSource().GetGrpcServices(); len(cl) > 0 {
				name += "@" + cl[0].GetEnvoyGrpc().GetClusterName()
			}
			got = append(got, name)
		}
		if !slices.Equal(got, x.Certificates) {
			c.failf("xds", where, "%s: certificates are %v, expected %v", what, got, x.Certificates)
		}
	}
}

func findSecret(x *result.XDS, name string) *tlsv3.Secret {
	for _, s := range x.Secrets {
		if s.GetName() == name {
			return s
		}
	}
	return nil
}

func findFilterChain(x *result.XDS, in, name string) *listenerv3.FilterChain {
	for l := range namedIn(x.Listeners, in) {
		for _, fc := range chainsOf(l) {
			if fc.GetName() == name {
				return fc
			}
		}
	}
	return nil
}
