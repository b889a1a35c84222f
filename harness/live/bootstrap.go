// Package live runs scenarios against real proxies: the Envoy bootstrap that points Envoy
// at the harness's xDS server, the Kubernetes manifests that run Envoy and echo backends in
// a kind cluster, the rewrite of a snapshot's endpoints onto those backends, real HTTP,
// gRPC, TLS and TCP requests, and the comparison of what came back with the offline route
// checker's answers. The kind suite (suites/e2e) drives it; everything here runs without a
// cluster and is unit-tested.
package live

import (
	"fmt"
	"net"
	"strconv"
	"time"

	bootstrapv3 "github.com/envoyproxy/go-control-plane/envoy/config/bootstrap/v3"
	clusterv3 "github.com/envoyproxy/go-control-plane/envoy/config/cluster/v3"
	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	endpointv3 "github.com/envoyproxy/go-control-plane/envoy/config/endpoint/v3"
	httpv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/upstreams/http/v3"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/types/known/anypb"
	"google.golang.org/protobuf/types/known/durationpb"
	"sigs.k8s.io/yaml"
)

// XDSClusterName is the bootstrap's one static cluster: the harness's xDS server.
const XDSClusterName = "egharness_xds"

// BootstrapOptions say where the xDS server is and who the Envoy is.
type BootstrapOptions struct {
	// XDSAddress is host:port of the xDS server; a host name is resolved by Envoy (DNS).
	XDSAddress string
	// NodeID and NodeCluster identify the Envoy in ACK and NACK records.
	NodeID, NodeCluster string
	// AdminPort is Envoy's admin listener on 127.0.0.1 (config_dump for state dumps).
	AdminPort uint32
}

// Bootstrap is an Envoy bootstrap that takes every listener, route, cluster, endpoint and
// secret over one ADS stream (state of the world, API v3) from the harness, checked with
// the protos' own validation rules.
func Bootstrap(o BootstrapOptions) (*bootstrapv3.Bootstrap, error) {
	host, portStr, err := net.SplitHostPort(o.XDSAddress)
	if err != nil {
		return nil, fmt.Errorf("xDS address %q: %w", o.XDSAddress, err)
	}
	port, err := strconv.ParseUint(portStr, 10, 16)
	if err != nil || port == 0 {
		return nil, fmt.Errorf("xDS address %q: bad port", o.XDSAddress)
	}
	discovery := clusterv3.Cluster_STRICT_DNS
	if net.ParseIP(host) != nil {
		discovery = clusterv3.Cluster_STATIC
	}
	// gRPC needs HTTP/2 to the xDS server.
	h2, err := anypb.New(&httpv3.HttpProtocolOptions{
		UpstreamProtocolOptions: &httpv3.HttpProtocolOptions_ExplicitHttpConfig_{
			ExplicitHttpConfig: &httpv3.HttpProtocolOptions_ExplicitHttpConfig{
				ProtocolConfig: &httpv3.HttpProtocolOptions_ExplicitHttpConfig_Http2ProtocolOptions{
					Http2ProtocolOptions: &corev3.Http2ProtocolOptions{},
				},
			},
		},
	})
	if err != nil {
		return nil, err
	}
	ads := &corev3.ConfigSource{
		ResourceApiVersion:    corev3.ApiVersion_V3,
		ConfigSourceSpecifier: &corev3.ConfigSource_Ads{Ads: &corev3.AggregatedConfigSource{}},
	}
	b := &bootstrapv3.Bootstrap{
		Node: &corev3.Node{Id: o.NodeID, Cluster: o.NodeCluster},
		Admin: &bootstrapv3.Admin{
			Address: socketAddress("127.0.0.1", o.AdminPort),
		},
		DynamicResources: &bootstrapv3.Bootstrap_DynamicResources{
			AdsConfig: &corev3.ApiConfigSource{
				ApiType:             corev3.ApiConfigSource_GRPC,
				TransportApiVersion: corev3.ApiVersion_V3,
				GrpcServices: []*corev3.GrpcService{{
					TargetSpecifier: &corev3.GrpcService_EnvoyGrpc_{
						EnvoyGrpc: &corev3.GrpcService_EnvoyGrpc{ClusterName: XDSClusterName}},
				}},
				SetNodeOnFirstMessageOnly: true,
			},
			CdsConfig: ads,
			LdsConfig: ads,
		},
		StaticResources: &bootstrapv3.Bootstrap_StaticResources{
			Clusters: []*clusterv3.Cluster{{
				Name:                          XDSClusterName,
				ConnectTimeout:                durationpb.New(5 * time.Second),
				ClusterDiscoveryType:          &clusterv3.Cluster_Type{Type: discovery},
				TypedExtensionProtocolOptions: map[string]*anypb.Any{"envoy.extensions.upstreams.http.v3.HttpProtocolOptions": h2},
				LoadAssignment: &endpointv3.ClusterLoadAssignment{
					ClusterName: XDSClusterName,
					Endpoints: []*endpointv3.LocalityLbEndpoints{{
						LbEndpoints: []*endpointv3.LbEndpoint{{
							HostIdentifier: &endpointv3.LbEndpoint_Endpoint{Endpoint: &endpointv3.Endpoint{
								Address: socketAddress(host, uint32(port)),
							}},
						}},
					}},
				},
			}},
		},
	}
	if err := b.ValidateAll(); err != nil {
		return nil, fmt.Errorf("bootstrap: %w", err)
	}
	return b, nil
}

func socketAddress(host string, port uint32) *corev3.Address {
	return &corev3.Address{Address: &corev3.Address_SocketAddress{SocketAddress: &corev3.SocketAddress{
		Address: host, PortSpecifier: &corev3.SocketAddress_PortValue{PortValue: port},
	}}}
}

// BootstrapYAML is the bootstrap as Envoy reads it from -c (YAML of the proto's JSON form).
func BootstrapYAML(b *bootstrapv3.Bootstrap) ([]byte, error) {
	js, err := protojson.MarshalOptions{Indent: ""}.Marshal(b)
	if err != nil {
		return nil, err
	}
	return yaml.JSONToYAML(js)
}
