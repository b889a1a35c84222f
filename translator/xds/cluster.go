package xds

import (
	"time"

	clusterv3 "github.com/envoyproxy/go-control-plane/envoy/config/cluster/v3"
	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	commonv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/load_balancing_policies/common/v3"
	leastrequestv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/load_balancing_policies/least_request/v3"
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

func buildCluster(name string, owner resourceRef) *clusterv3.Cluster {
	return &clusterv3.Cluster{
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
}
