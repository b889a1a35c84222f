package xds

import (
	"math"
	"slices"
	"strings"
	"time"

	egv1a1 "github.com/envoyproxy/gateway/api/v1alpha1"
	clusterv3 "github.com/envoyproxy/go-control-plane/envoy/config/cluster/v3"
	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	routev3 "github.com/envoyproxy/go-control-plane/envoy/config/route/v3"
	cswrrv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/load_balancing_policies/client_side_weighted_round_robin/v3"
	commonv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/load_balancing_policies/common/v3"
	leastrequestv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/load_balancing_policies/least_request/v3"
	randomv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/load_balancing_policies/random/v3"
	roundrobinv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/load_balancing_policies/round_robin/v3"
	previousprioritiesv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/retry/priority/previous_priorities/v3"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/durationpb"
	"google.golang.org/protobuf/types/known/structpb"
	"google.golang.org/protobuf/types/known/wrapperspb"
	gwapiv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/egharness/egharness/translator/ir"
)

// The BackendTrafficPolicy in force on a route (BTP-02): what it sets on the route.

// requestTimeout is the route's request timeout: the HTTPRoute rule's own timeouts win
// over the BackendTrafficPolicy's timeout.http.requestTimeout, as in EG.
func requestTimeout(r *ir.HTTPRoute) *time.Duration {
	if r.Timeout != nil {
		return r.Timeout
	}
	bt := r.Policies.BackendTraffic
	if bt == nil || bt.Spec == nil || bt.Spec.Timeout == nil || bt.Spec.Timeout.HTTP == nil || bt.Spec.Timeout.HTTP.RequestTimeout == nil {
		return nil
	}
	d, err := time.ParseDuration(string(*bt.Spec.Timeout.HTTP.RequestTimeout))
	if err != nil {
		return nil
	}
	return &d
}

// streamIdleTimeout is the policy's timeout.http.streamIdleTimeout, which replaces the
// idle timeout derived from the request timeout.
func streamIdleTimeout(r *ir.HTTPRoute) *time.Duration {
	bt := r.Policies.BackendTraffic
	if bt == nil || bt.Spec == nil || bt.Spec.Timeout == nil || bt.Spec.Timeout.HTTP == nil || bt.Spec.Timeout.HTTP.StreamIdleTimeout == nil {
		return nil
	}
	d, err := time.ParseDuration(string(*bt.Spec.Timeout.HTTP.StreamIdleTimeout))
	if err != nil {
		return nil
	}
	return &d
}

// btpRetryPolicy is the policy's retry, when the HTTPRoute rule has none of its own (the
// rule's retry wins, as in EG): EG's defaults, then what the policy sets.
func btpRetryPolicy(r *ir.HTTPRoute) *routev3.RetryPolicy {
	bt := r.Policies.BackendTraffic
	if r.Retry != nil || bt == nil || bt.Spec == nil || bt.Spec.Retry == nil {
		return nil
	}
	rt := bt.Spec.Retry
	rp := retryPolicy(&ir.Retry{})
	if rt.NumRetries != nil {
		rp.NumRetries = u32(uint32(*rt.NumRetries))
	}
	if rt.NumAttemptsPerPriority != nil && *rt.NumAttemptsPerPriority > 0 {
		rp.RetryPriority = &routev3.RetryPolicy_RetryPriority{
			Name: "envoy.retry_priorities.previous_priorities",
			ConfigType: &routev3.RetryPolicy_RetryPriority_TypedConfig{TypedConfig: mustAny(&previousprioritiesv3.PreviousPrioritiesConfig{
				UpdateFrequency: *rt.NumAttemptsPerPriority,
			})},
		}
	}
	if on := rt.RetryOn; on != nil && (on.Triggers != nil || on.HTTPStatusCodes != nil) {
		if len(on.Triggers) > 0 {
			ts := make([]string, len(on.Triggers))
			for i, t := range on.Triggers {
				ts[i] = string(t)
			}
			rp.RetryOn = strings.Join(ts, ",")
		}
		rp.RetriableStatusCodes = make([]uint32, len(on.HTTPStatusCodes))
		for i, c := range on.HTTPStatusCodes {
			rp.RetriableStatusCodes[i] = uint32(c)
		}
	}
	if pr := rt.PerRetry; pr != nil {
		if d := ir.Duration(pr.Timeout); d != nil {
			rp.PerTryTimeout = durationpb.New(*d)
		}
		if bo := pr.BackOff; bo != nil {
			base, max := ir.Duration(bo.BaseInterval), ir.Duration(bo.MaxInterval)
			if base != nil || max != nil {
				rbo := &routev3.RetryPolicy_RetryBackOff{}
				if base != nil {
					rbo.BaseInterval = durationpb.New(*base)
				}
				if max != nil {
					rbo.MaxInterval = durationpb.New(*max)
				}
				rp.RetryBackOff = rbo
			}
		}
	}
	return rp
}

// applyBackendTrafficCluster puts the cluster settings of the route's policy on the
// cluster of its backends (BTP-02).
func applyBackendTrafficCluster(c *clusterv3.Cluster, r *ir.HTTPRoute) {
	if bt := r.Policies.BackendTraffic; bt != nil && bt.Spec != nil {
		applyClusterSettings(c, &bt.Spec.ClusterSettings)
	}
}

// circuitBreakerDefault is the CRD's default for each circuit breaker threshold.
const circuitBreakerDefault = 1024

// applyClusterSettings puts cluster settings on a cluster: circuit breaker and load
// balancer. A BackendTrafficPolicy's apply to its routes' clusters, the backendSettings of a
// policy's external service (ext_authz, ext_proc, an OIDC provider) to that service's.
func applyClusterSettings(c *clusterv3.Cluster, cs *egv1a1.ClusterSettings) {
	if cs == nil {
		return
	}
	if cb := cs.CircuitBreaker; cb != nil {
		t := c.CircuitBreakers.Thresholds[0]
		// the CRD defaults every threshold to 1024, as the API server (and egctl) fill in
		set := func(dst **wrapperspb.UInt32Value, v *int64) {
			switch {
			case v == nil:
				*dst = u32(circuitBreakerDefault)
			case *v >= 0 && *v <= math.MaxUint32:
				*dst = u32(uint32(*v))
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
		if lb.SlowStart != nil {
			if d := ir.Duration(lb.SlowStart.Window); d != nil {
				slow = &commonv3.SlowStartConfig{SlowStartWindow: durationpb.New(*d)}
			}
		}
		var name string
		var cfg proto.Message
		switch lb.Type {
		case egv1a1.RoundRobinLoadBalancerType:
			name, cfg = "envoy.load_balancing_policies.round_robin", &roundrobinv3.RoundRobin{LocalityLbConfig: locality, SlowStartConfig: slow}
		case egv1a1.RandomLoadBalancerType:
			name, cfg = "envoy.load_balancing_policies.random", &randomv3.Random{LocalityLbConfig: locality}
		case egv1a1.LeastRequestLoadBalancerType:
			name, cfg = leastRequestExtension, &leastrequestv3.LeastRequest{LocalityLbConfig: locality, SlowStartConfig: slow}
		case egv1a1.BackendUtilizationLoadBalancerType:
			name, cfg = "envoy.load_balancing_policies.client_side_weighted_round_robin", clientSideWRR(lb.BackendUtilization, slow)
		}
		if cfg != nil {
			c.LoadBalancingPolicy = &clusterv3.LoadBalancingPolicy{Policies: []*clusterv3.LoadBalancingPolicy_Policy{{
				TypedExtensionConfig: &corev3.TypedExtensionConfig{Name: name, TypedConfig: mustAny(cfg)},
			}}}
		}
	}
}

// clientSideWRR is EG's client-side weighted round robin for BackendUtilization load
// balancing (xds translator buildBackendUtilizationLoadBalancingPolicy): the periods that are
// set and positive, the error penalty as a fraction, the metric names, out-of-band load
// reports when asked for, and the policy's slow start. It has no locality setting.
func clientSideWRR(bu *egv1a1.BackendUtilization, slow *commonv3.SlowStartConfig) *cswrrv3.ClientSideWeightedRoundRobin {
	c := &cswrrv3.ClientSideWeightedRoundRobin{SlowStartConfig: slow}
	if bu == nil {
		return c
	}
	positive := func(d *gwapiv1.Duration) *durationpb.Duration {
		if v := ir.Duration(d); v != nil && *v > 0 {
			return durationpb.New(*v)
		}
		return nil
	}
	c.BlackoutPeriod = positive(bu.BlackoutPeriod)
	c.WeightExpirationPeriod = positive(bu.WeightExpirationPeriod)
	c.WeightUpdatePeriod = positive(bu.WeightUpdatePeriod)
	if p := bu.ErrorUtilizationPenaltyPercent; p != nil {
		c.ErrorUtilizationPenalty = wrapperspb.Float(float32(*p) / 100.0)
	}
	c.MetricNamesForComputingUtilization = append([]string(nil), bu.MetricNamesForComputingUtilization...)
	if oob := bu.OutOfBand; oob != nil {
		c.EnableOobLoadReport = wrapperspb.Bool(true)
		if v := ir.Duration(oob.ReportingPeriod); v != nil {
			c.OobReportingPeriod = durationpb.New(*v)
		}
		if oob.Port != nil || oob.Authority != nil {
			cfg := &commonv3.OrcaOobReportingConfig{}
			if oob.Port != nil {
				cfg.PortValue = uint32(*oob.Port)
			}
			if oob.Authority != nil {
				cfg.Authority = *oob.Authority
			}
			c.OobReportingConfig = cfg
		}
	}
	return c
}

// loadReportHeaders are the response headers a backend reports its load in (ORCA), which EG
// removes on the routes of a BackendUtilization load balancer unless keepResponseHeaders.
var loadReportHeaders = []string{"endpoint-load-metrics", "endpoint-load-metrics-bin"}

// removedResponseHeaders is the route's response headers to remove: its filters', then the
// load report headers when its BackendTrafficPolicy balances by backend utilization and does
// not keep them (backendtrafficpolicy.go, after the traffic features are set).
func removedResponseHeaders(r *ir.HTTPRoute) []string {
	out := r.RemoveResponseHeaders
	bt := r.Policies.BackendTraffic
	if bt == nil || bt.Spec == nil || bt.Spec.LoadBalancer == nil || bt.Spec.LoadBalancer.Type != egv1a1.BackendUtilizationLoadBalancerType {
		return out
	}
	if bu := bt.Spec.LoadBalancer.BackendUtilization; bu != nil && bu.KeepResponseHeaders != nil && *bu.KeepResponseHeaders {
		return out
	}
	out = append([]string(nil), out...)
	for _, h := range loadReportHeaders {
		if !slices.Contains(out, h) {
			out = append(out, h)
		}
	}
	return out
}

// addPolicyMetadata lists the BackendTrafficPolicy in force in the route's envoy-gateway
// metadata ("policies"), beside the route's resources, as EG does.
func addPolicyMetadata(out *routev3.Route, r *ir.HTTPRoute) {
	bt := r.Policies.BackendTraffic
	if bt == nil || out.Metadata == nil {
		return
	}
	eg := out.Metadata.FilterMetadata["envoy-gateway"]
	if eg == nil {
		return
	}
	eg.Fields["policies"] = structpb.NewListValue(&structpb.ListValue{Values: []*structpb.Value{
		structpb.NewStructValue(&structpb.Struct{Fields: map[string]*structpb.Value{
			"kind":      structpb.NewStringValue(bt.Policy.Kind),
			"name":      structpb.NewStringValue(bt.Policy.Name),
			"namespace": structpb.NewStringValue(bt.Policy.Namespace),
		}}),
	}})
}
