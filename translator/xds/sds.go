package xds

import (
	"sort"

	clusterv3 "github.com/envoyproxy/go-control-plane/envoy/config/cluster/v3"
	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	endpointv3 "github.com/envoyproxy/go-control-plane/envoy/config/endpoint/v3"
	tlsv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/transport_sockets/tls/v3"
	"google.golang.org/protobuf/types/known/durationpb"

	"github.com/egharness/egharness/translator/certs"
	"github.com/egharness/egharness/translator/ir"
)

// certificateSDS says where Envoy finds a certificate: our own SDS (over ADS, the secret
// named <namespace>/<name>) or, for SDS reference Secrets (TLS-08), the external server's
// secret through the gRPC cluster of its socket.
func certificateSDS(c ir.TLSCertificate) *tlsv3.SdsSecretConfig {
	if c.SDS == nil {
		return &tlsv3.SdsSecretConfig{Name: c.Name, SdsConfig: adsSource()}
	}
	return externalSDS(c.SDS)
}

// externalSDS is a secret of the user's own SDS server, fetched through the gRPC cluster of
// its socket (certificates, trust anchors and client-validation CAs alike).
func externalSDS(s *ir.SDSSource) *tlsv3.SdsSecretConfig {
	cluster := certs.SDSClusterName(s.URL)
	return &tlsv3.SdsSecretConfig{
		Name: s.SecretName,
		SdsConfig: &corev3.ConfigSource{ConfigSourceSpecifier: &corev3.ConfigSource_ApiConfigSource{
			ApiConfigSource: &corev3.ApiConfigSource{
				ApiType: corev3.ApiConfigSource_GRPC,
				GrpcServices: []*corev3.GrpcService{{TargetSpecifier: &corev3.GrpcService_EnvoyGrpc_{
					EnvoyGrpc: &corev3.GrpcService_EnvoyGrpc{ClusterName: cluster},
				}}},
			},
		}},
	}
}

// sdsURLs collects every SDS server the IR uses, once each, sorted (SDS-02).
func sdsURLs(x *ir.XDS) []string {
	seen := map[string]bool{}
	add := func(cfg *ir.TLSConfig) {
		if cfg == nil {
			return
		}
		for _, c := range cfg.Certificates {
			if c.SDS != nil {
				seen[c.SDS.URL] = true
			}
		}
		// A Gateway's frontend CA from an SDS server is not collected: EG v1.9 names the
		// socket's cluster in the validation context but defines it only for certificates
		// and backends (gateway-frontend-sds-ca).
	}
	for _, l := range x.HTTP {
		add(l.TLS)
	}
	for _, l := range x.TCP {
		add(l.TLS)
	}
	for _, u := range extraSDSURLs(x) {
		seen[u] = true
	}
	out := make([]string, 0, len(seen))
	for u := range seen {
		out = append(out, u)
	}
	sort.Strings(out)
	return out
}

// extraSDSURLs are SDS servers named outside listener certificates: BackendTLSPolicy trust
// anchors.
func extraSDSURLs(x *ir.XDS) []string {
	var out []string
	for _, d := range tlsDestinations(x) {
		for _, s := range d.Settings {
			if s.TLS == nil {
				continue
			}
			if s.TLS.CASDS != nil {
				out = append(out, s.TLS.CASDS.URL)
			}
			for _, c := range s.TLS.ClientCertificates {
				if c.SDS != nil {
					out = append(out, c.SDS.URL) // an upstream client certificate
				}
			}
		}
	}
	return out
}

// sdsClusters is one STATIC HTTP/2 cluster per SDS server, reaching its unix socket through
// a pipe address; several Secrets naming one socket share its cluster.
func sdsClusters(x *ir.XDS) []*clusterv3.Cluster {
	var out []*clusterv3.Cluster
	for _, u := range sdsURLs(x) {
		name := certs.SDSClusterName(u)
		out = append(out, &clusterv3.Cluster{
			Name:                 name,
			ClusterDiscoveryType: &clusterv3.Cluster_Type{Type: clusterv3.Cluster_STATIC},
			ConnectTimeout:       durationpb.New(10e9),
			Http2ProtocolOptions: &corev3.Http2ProtocolOptions{},
			LoadAssignment: &endpointv3.ClusterLoadAssignment{
				ClusterName: name,
				Endpoints: []*endpointv3.LocalityLbEndpoints{{LbEndpoints: []*endpointv3.LbEndpoint{{
					HostIdentifier: &endpointv3.LbEndpoint_Endpoint{Endpoint: &endpointv3.Endpoint{
						Address: &corev3.Address{Address: &corev3.Address_Pipe{Pipe: &corev3.Pipe{Path: certs.SDSPipe(u)}}},
					}},
				}}}},
			},
		})
	}
	return out
}
