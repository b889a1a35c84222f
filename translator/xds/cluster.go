package xds

import (
	"time"

	clusterv3 "github.com/envoyproxy/go-control-plane/envoy/config/cluster/v3"
	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	endpointv3 "github.com/envoyproxy/go-control-plane/envoy/config/endpoint/v3"
	commonv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/load_balancing_policies/common/v3"
	leastrequestv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/load_balancing_policies/least_request/v3"
	httpv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/upstreams/http/v3"
	"google.golang.org/protobuf/types/known/anypb"
	"google.golang.org/protobuf/types/known/durationpb"
)

// EG's cluster defaults (facts of EG v1.9's output for a plain backend).
const (
	connectTimeout        = 10 * time.Second
	bufferLimitBytes      = 32768
	defaultMaxRetries     = 1024
	leastRequestExtension = "envoy.load_balancing_policies.least_request"
)

func adsSource() *corev3.ConfigSource {
	return &corev3.ConfigSource{
		ConfigSourceSpecifier: &corev3.ConfigSource_Ads{Ads: &corev3.AggregatedConfigSource{}},
		ResourceApiVersion:    corev3.ApiVersion_V3,
	}
}

func buildCluster(name string, owner resourceRef, http2 bool) *clusterv3.Cluster {
	c := &clusterv3.Cluster{
		Name:                 name,
		ClusterDiscoveryType: &clusterv3.Cluster_Type{Type: clusterv3.Cluster_EDS},
		EdsClusterConfig: &clusterv3.Cluster_EdsClusterConfig{
			EdsConfig:   adsSource(),
			ServiceName: name,
		},
		ConnectTimeout:                durationpb.New(connectTimeout),
		PerConnectionBufferLimitBytes: u32(bufferLimitBytes),
		LoadBalancingPolicy: &clusterv3.LoadBalancingPolicy{Policies: []*clusterv3.LoadBalancingPolicy_Policy{{
			TypedExtensionConfig: &corev3.TypedExtensionConfig{
				Name: leastRequestExtension,
				TypedConfig: mustAny(&leastrequestv3.LeastRequest{
					LocalityLbConfig: &commonv3.LocalityLbConfig{
						LocalityConfigSpecifier: &commonv3.LocalityLbConfig_LocalityWeightedLbConfig_{
							LocalityWeightedLbConfig: &commonv3.LocalityLbConfig_LocalityWeightedLbConfig{},
						},
					},
				}),
			},
		}}},
		CircuitBreakers: &clusterv3.CircuitBreakers{Thresholds: []*clusterv3.CircuitBreakers_Thresholds{{
			MaxRetries: u32(defaultMaxRetries),
		}}},
		CommonLbConfig:            &clusterv3.Cluster_CommonLbConfig{},
		DnsLookupFamily:           clusterv3.Cluster_V4_PREFERRED,
		IgnoreHealthOnHostRemoval: true,
		Metadata:                  resourceMetadata(owner),
	}
	if http2 {
		c.TypedExtensionProtocolOptions = map[string]*anypb.Any{
			"envoy.extensions.upstreams.http.v3.HttpProtocolOptions": mustAny(&httpv3.HttpProtocolOptions{
				UpstreamProtocolOptions: &httpv3.HttpProtocolOptions_ExplicitHttpConfig_{
					ExplicitHttpConfig: &httpv3.HttpProtocolOptions_ExplicitHttpConfig{
						ProtocolConfig: &httpv3.HttpProtocolOptions_ExplicitHttpConfig_Http2ProtocolOptions{
							Http2ProtocolOptions: &corev3.Http2ProtocolOptions{
								InitialConnectionWindowSize: u32(1048576),
								InitialStreamWindowSize:     u32(65536),
							}},
					}},
			}),
		}
	}
	return c
}

// oneEndpointLoadAssignment is the load assignment of a cluster the proxy reaches one
// endpoint through, host:port (the rate limit service, a remote JWKS): a single locality,
// named <cluster>/backend/-1 as EG names it, with weight 1 for it and its endpoint.
func oneEndpointLoadAssignment(cluster, host string, port uint32) *endpointv3.ClusterLoadAssignment {
	return &endpointv3.ClusterLoadAssignment{ClusterName: cluster, Endpoints: []*endpointv3.LocalityLbEndpoints{{
		Locality:            &corev3.Locality{Region: cluster + "/backend/-1"},
		LoadBalancingWeight: u32(1),
		LbEndpoints: []*endpointv3.LbEndpoint{{
			HostIdentifier: &endpointv3.LbEndpoint_Endpoint{Endpoint: &endpointv3.Endpoint{
				Address: socketAddress(host, port),
			}},
			LoadBalancingWeight: u32(1),
		}},
	}}}
}
