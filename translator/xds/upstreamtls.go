package xds

import (
	"fmt"
	"sort"

	clusterv3 "github.com/envoyproxy/go-control-plane/envoy/config/cluster/v3"
	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	endpointv3 "github.com/envoyproxy/go-control-plane/envoy/config/endpoint/v3"
	tlsv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/transport_sockets/tls/v3"
	httpv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/upstreams/http/v3"
	matcherv3 "github.com/envoyproxy/go-control-plane/envoy/type/matcher/v3"
	"google.golang.org/protobuf/types/known/anypb"
	"google.golang.org/protobuf/types/known/structpb"

	"github.com/egharness/egharness/translator/ir"
	"github.com/egharness/egharness/translator/result"
)

// systemCAPath is where the proxy image keeps the system trust store.
const systemCAPath = "/etc/ssl/certs/ca-certificates.crt"

const transportSocketMatchKey = "envoy.transport_socket_match"

// withUpstreamTLS makes Envoy speak TLS to the backends that have it: a transport socket
// match per such backend (named <cluster>/tls/<index>), selected by that name on its
// endpoints. When every backend of an HTTP cluster speaks TLS, the cluster negotiates the
// HTTP version by ALPN (auto config), which needs a default transport socket: EG puts a
// placeholder there (an HTTP/2 cluster keeps its explicit HTTP/2 options but gets the
// placeholder too). If then none of them sends an SNI of its own (an EG Backend without
// sni), Envoy sends the request's host as SNI (auto SNI) and checks the certificate
// against it.
func withUpstreamTLS(c *clusterv3.Cluster, cla *endpointv3.ClusterLoadAssignment, settings []*ir.Backend, http,
	http2 bool) {
	all := len(settings) > 0
	literalSNI, hostSNI := false, false
	for _, s := range settings {
		if s.TLS == nil {
			all = false
			continue
		}
		literalSNI = literalSNI || s.TLS.SNI != ""
		hostSNI = hostSNI || (s.TLS.SNI == "" && s.TLS.AutoHostSNI)
	}
	autoSNI := all && http && !literalSNI && !hostSNI
	for i, s := range settings {
		if s.TLS == nil {
			continue
		}
		name := fmt.Sprintf("%s/tls/%d", c.Name, i)
		c.TransportSocketMatches = append(c.TransportSocketMatches, &clusterv3.Cluster_TransportSocketMatch{
			Name:            name,
			Match:           &structpb.Struct{Fields: map[string]*structpb.Value{"name": structpb.NewStringValue(name)}},
			TransportSocket: upstreamTLSSocket(s.TLS, autoSNI),
		})
		if i < len(cla.Endpoints) {
			for _, e := range cla.Endpoints[i].LbEndpoints {
				e.Metadata = &corev3.Metadata{FilterMetadata: map[string]*structpb.Struct{
					transportSocketMatchKey: {Fields: map[string]*structpb.Value{"name": structpb.NewStringValue(name)}},
				}}
			}
		}
	}
	if !all || !http {
		return
	}
	c.TransportSocket = &corev3.TransportSocket{
		Name: "dummy.transport_socket",
		ConfigType: &corev3.TransportSocket_TypedConfig{TypedConfig: mustAny(
			&tlsv3.UpstreamTlsContext{CommonTlsContext: &tlsv3.CommonTlsContext{}})},
	}
	if http2 { // gRPC keeps its explicit HTTP/2 options, the placeholder socket all the same
		if autoSNI {
			withAutoSNI(c)
		}
		return
	}
	opts := &httpv3.HttpProtocolOptions{
		UpstreamProtocolOptions: &httpv3.HttpProtocolOptions_AutoConfig{
			AutoConfig: &httpv3.HttpProtocolOptions_AutoHttpConfig{
				HttpProtocolOptions: &corev3.Http1ProtocolOptions{},
				Http2ProtocolOptions: &corev3.Http2ProtocolOptions{
					InitialConnectionWindowSize: u32(1048576),
					InitialStreamWindowSize:     u32(65536),
				},
			}},
	}
	if autoSNI {
		opts.UpstreamHttpProtocolOptions = &corev3.UpstreamHttpProtocolOptions{AutoSni: true}
	}
	c.TypedExtensionProtocolOptions = map[string]*anypb.Any{httpProtocolOptionsKey: mustAny(opts)}
}

const httpProtocolOptionsKey = "envoy.extensions.upstreams.http.v3.HttpProtocolOptions"

// withAutoSNI turns on auto SNI in the HTTP protocol options a cluster already has (an
// HTTP/2 cluster's explicit ones).
func withAutoSNI(c *clusterv3.Cluster) {
	opts := &httpv3.HttpProtocolOptions{}
	if a := c.TypedExtensionProtocolOptions[httpProtocolOptionsKey]; a != nil {
		if err := a.UnmarshalTo(opts); err != nil {
			return
		}
	}
	opts.UpstreamHttpProtocolOptions = &corev3.UpstreamHttpProtocolOptions{AutoSni: true}
	if c.TypedExtensionProtocolOptions == nil {
		c.TypedExtensionProtocolOptions = map[string]*anypb.Any{}
	}
	c.TypedExtensionProtocolOptions[httpProtocolOptionsKey] = mustAny(opts)
}

// tlsVersions maps EG's versions to Envoy's; "Auto" (and anything else) is TLS_AUTO.
var tlsVersions = map[string]tlsv3.TlsParameters_TlsProtocol{
	"1.0": tlsv3.TlsParameters_TLSv1_0, "1.1": tlsv3.TlsParameters_TLSv1_1,
	"1.2": tlsv3.TlsParameters_TLSv1_2, "1.3": tlsv3.TlsParameters_TLSv1_3,
}

// upstreamTLSSocket is the UpstreamTlsContext of one backend: SNI, the trust anchors over
// SDS, the identities to accept (the SNI as a DNS SAN when the policy names none; without
// either, the SNI Envoy sends, auto or the endpoint's hostname), the TLS parameters, ALPN
// and the client certificates.
func upstreamTLSSocket(t *ir.UpstreamTLS, autoSNI bool) *corev3.TransportSocket {
	vc := &tlsv3.CertificateValidationContext{}
	sans := t.SubjectAltNames
	if len(sans) == 0 && t.SNI != "" {
		sans = []ir.SubjectAltName{{Hostname: t.SNI}}
	}
	for _, san := range sans {
		m := &tlsv3.SubjectAltNameMatcher{SanType: tlsv3.SubjectAltNameMatcher_DNS,
			Matcher: &matcherv3.StringMatcher{MatchPattern: &matcherv3.StringMatcher_Exact{Exact: san.Hostname}}}
		if san.URI != "" {
			m.SanType = tlsv3.SubjectAltNameMatcher_URI
			m.Matcher = &matcherv3.StringMatcher{MatchPattern: &matcherv3.StringMatcher_Exact{Exact: san.URI}}
		}
		vc.MatchTypedSubjectAltNames = append(vc.MatchTypedSubjectAltNames, m)
	}
	ctx := &tlsv3.UpstreamTlsContext{
		Sni: t.SNI,
		CommonTlsContext: &tlsv3.CommonTlsContext{
			TlsParams: &tlsv3.TlsParameters{
				TlsMinimumProtocolVersion: tlsVersions[t.MinVersion],
				TlsMaximumProtocolVersion: tlsVersions[t.MaxVersion],
				CipherSuites:              t.Ciphers,
				EcdhCurves:                t.ECDHCurves,
				SignatureAlgorithms:       t.SignatureAlgorithms,
			},
			AlpnProtocols: t.ALPN,
		},
		AutoHostSni: t.AutoHostSNI,
	}
	for _, cert := range t.ClientCertificates {
		ctx.CommonTlsContext.TlsCertificateSdsSecretConfigs = append(ctx.CommonTlsContext.TlsCertificateSdsSecretConfigs,
			certificateSDS(cert))
	}
	if !t.Insecure {
		ctx.AutoSniSanValidation = len(sans) == 0 && (autoSNI || t.AutoHostSNI)
		ctx.CommonTlsContext.ValidationContextType = &tlsv3.CommonTlsContext_CombinedValidationContext{
			CombinedValidationContext: &tlsv3.CommonTlsContext_CombinedCertificateValidationContext{
				DefaultValidationContext:         vc,
				ValidationContextSdsSecretConfig: caSDS(t),
			},
		}
	}
	return &corev3.TransportSocket{
		Name:       tlsTransportSocket,
		ConfigType: &corev3.TransportSocket_TypedConfig{TypedConfig: mustAny(ctx)},
	}
}

// caSDS is where the trust anchors come from: EG's own secret over ADS, or the external SDS
// server's secret through its socket's cluster.
func caSDS(t *ir.UpstreamTLS) *tlsv3.SdsSecretConfig {
	if t.CASDS != nil {
		return externalSDS(t.CASDS)
	}
	return &tlsv3.SdsSecretConfig{Name: t.CAName, SdsConfig: adsSource()}
}

// tlsDestinations are the destinations whose backends may speak TLS: the routes', then the
// access log collectors'.
func tlsDestinations(x *ir.XDS) []*ir.Destination {
	var out []*ir.Destination
	for _, d := range x.Destinations() {
		out = append(out, d)
	}
	for _, d := range x.AccessLogDestinations() {
		out = append(out, d)
	}
	return out
}

// addUpstreamTLSSecrets adds the secrets the backends' TLS contexts name, once each, sorted
// by name: the trust anchors (the CA refs' PEM, or the proxy's system store by file; none
// when verification is skipped) and the client certificates Envoy presents.
func addUpstreamTLSSecrets(out *result.XDS, x *ir.XDS) {
	seen := map[string]*ir.UpstreamTLS{}
	clientCerts := map[string]ir.TLSCertificate{}
	for _, d := range tlsDestinations(x) {
		for _, s := range d.Settings {
			if s.TLS == nil {
				continue
			}
			for _, c := range s.TLS.ClientCertificates {
				if _, ok := clientCerts[c.Name]; c.SDS == nil && !ok {
					clientCerts[c.Name] = c
				}
			}
			if s.TLS.CASDS == nil && !s.TLS.Insecure {
				if _, ok := seen[s.TLS.CAName]; !ok {
					seen[s.TLS.CAName] = s.TLS
				}
			}
		}
	}
	names := make([]string, 0, len(seen))
	for n := range seen {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		t := seen[n]
		src := &corev3.DataSource{Specifier: &corev3.DataSource_InlineBytes{InlineBytes: t.CA}}
		if t.SystemCA {
			src = &corev3.DataSource{Specifier: &corev3.DataSource_Filename{Filename: systemCAPath}}
		}
		out.Secrets = append(out.Secrets, &tlsv3.Secret{
			Name: n,
			Type: &tlsv3.Secret_ValidationContext{ValidationContext: &tlsv3.CertificateValidationContext{TrustedCa: src}},
		})
	}
	certNames := make([]string, 0, len(clientCerts))
	for n := range clientCerts {
		certNames = append(certNames, n)
	}
	sort.Strings(certNames)
	have := map[string]bool{}
	for _, sec := range out.Secrets {
		have[sec.GetName()] = true // a listener may serve the same Secret
	}
	for _, n := range certNames {
		if have[n] {
			continue
		}
		out.Secrets = append(out.Secrets, buildTLSSecret(clientCerts[n]))
	}
}
