package xds

import (
	clusterv3 "github.com/envoyproxy/go-control-plane/envoy/config/cluster/v3"
	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	cswrrv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/load_balancing_policies/client_side_weighted_round_robin/v3"
	commonv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/load_balancing_policies/common/v3"
	leastrequestv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/load_balancing_policies/least_request/v3"
	randomv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/load_balancing_policies/random/v3"
	roundrobinv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/load_balancing_policies/round_robin/v3"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/durationpb"
	"google.golang.org/protobuf/types/known/wrapperspb"

	"github.com/egharness/egharness/translator/ir"
)

// applyClusterSettings puts cluster settings on a cluster: circuit breaker and load
// balancer. A BackendTrafficPolicy's apply to its routes' clusters, the backendSettings of a
// policy's external service (ext_authz, ext_proc, an OIDC provider) to that service's.
func applyClusterSettings(c *clusterv3.Cluster, cs *ir.ClusterSettings) {
	if cs == nil {
		return
	}
	if cb := cs.CircuitBreaker; cb != nil {
		t := c.CircuitBreakers.Thresholds[0]
		// a threshold the policy stage left nil keeps the cluster's own
		set := func(dst **wrapperspb.UInt32Value, v *uint32) {
			if v != nil {
				*dst = u32(*v)
			}
		}
		set(&t.MaxConnections, cb.MaxConnections)
		set(&t.MaxPendingRequests, cb.MaxPendingRequests)
		set(&t.MaxRequests, cb.MaxParallelRequests)
		set(&t.MaxRetries, cb.MaxParallelRetries)
		if cb.PerEndpoint != nil {
			ph := &clusterv3.CircuitBreakers_Thresholds{}
			set(&ph.MaxConnections, cb.PerEndpoint.MaxConnections)
			c.CircuitBreakers.PerHostThresholds = []*clusterv3.CircuitBreakers_Thresholds{ph}
		}
	}
	if lb := cs.LoadBalancer; lb != nil {
		locality := &commonv3.LocalityLbConfig{LocalityConfigSpecifier: &commonv3.LocalityLbConfig_LocalityWeightedLbConfig_{
			LocalityWeightedLbConfig: &commonv3.LocalityLbConfig_LocalityWeightedLbConfig{},
		}}
		var slow *commonv3.SlowStartConfig
		if lb.SlowStartWindow != nil {
			slow = &commonv3.SlowStartConfig{SlowStartWindow: durationpb.New(*lb.SlowStartWindow)}
		}
		var name string
		var cfg proto.Message
		switch lb.Type {
		case ir.LoadBalancerRoundRobin:
			name, cfg = "envoy.load_balancing_policies.round_robin",
				&roundrobinv3.RoundRobin{LocalityLbConfig: locality, SlowStartConfig: slow}
		case ir.LoadBalancerRandom:
			name, cfg = "envoy.load_balancing_policies.random", &randomv3.Random{LocalityLbConfig: locality}
		case ir.LoadBalancerLeastRequest:
			name, cfg = leastRequestExtension, &leastrequestv3.LeastRequest{LocalityLbConfig: locality, SlowStartConfig: slow}
		case ir.LoadBalancerBackendUtilization:
			name, cfg = "envoy.load_balancing_policies.client_side_weighted_round_robin",
				clientSideWRR(lb.BackendUtilization, slow)
		}
		if cfg != nil {
			c.LoadBalancingPolicy = &clusterv3.LoadBalancingPolicy{Policies: []*clusterv3.LoadBalancingPolicy_Policy{{
				TypedExtensionConfig: &corev3.TypedExtensionConfig{Name: name, TypedConfig: mustAny(cfg)},
			}}}
		}
	}
}

// clientSideWRR is EG's client-side weighted round robin for BackendUtilization load
// balancing (xds translator buildBackendUtilizationLoadBalancingPolicy): the periods, the
// error penalty as a fraction, the metric names, out-of-band load reports when asked for,
// and the policy's slow start. It has no locality setting.
func clientSideWRR(bu *ir.BackendUtilization, slow *commonv3.SlowStartConfig) *cswrrv3.ClientSideWeightedRoundRobin {
	c := &cswrrv3.ClientSideWeightedRoundRobin{SlowStartConfig: slow}
	if bu == nil {
		return c
	}
	c.BlackoutPeriod = durationOrNil(bu.BlackoutPeriod)
	c.WeightExpirationPeriod = durationOrNil(bu.WeightExpirationPeriod)
	c.WeightUpdatePeriod = durationOrNil(bu.WeightUpdatePeriod)
	if p := bu.ErrorUtilizationPenaltyPercent; p != nil {
		c.ErrorUtilizationPenalty = wrapperspb.Float(float32(*p) / 100.0)
	}
	c.MetricNamesForComputingUtilization = append([]string(nil), bu.MetricNamesForComputingUtilization...)
	if oob := bu.OutOfBand; oob != nil {
		c.EnableOobLoadReport = wrapperspb.Bool(true)
		c.OobReportingPeriod = durationOrNil(oob.ReportingPeriod)
		if oob.Port != nil || oob.Authority != nil {
			cfg := &commonv3.OrcaOobReportingConfig{}
			if oob.Port != nil {
				cfg.PortValue = *oob.Port
			}
			if oob.Authority != nil {
				cfg.Authority = *oob.Authority
			}
			c.OobReportingConfig = cfg
		}
	}
	return c
}
