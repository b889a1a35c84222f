package policy

import (
	egv1a1 "github.com/envoyproxy/gateway/api/v1alpha1"

	"github.com/egharness/egharness/translator/ir"
)

// A BackendTrafficPolicy's route and cluster settings (EG v1.9): timeouts, retry, circuit
// breaker and load balancer, health checks and response overrides, resolved into
// ir.BackendTraffic on every route the policy is in force on, once the features resolved.
// Its filters resolve in backendtraffic_filters.go, its rate limits in ratelimit.go.

// resolveBackendTrafficSettings sets them on every HTTP, TCP and UDP route.
func resolveBackendTrafficSettings(x *ir.XDS) {
	for _, l := range x.HTTP {
		for _, r := range l.Routes {
			var bodies map[int]string
			if r.PolicyData != nil {
				bodies = r.PolicyData.ResponseBodies
			}
			r.Policies.BackendTrafficSettings = ResolveBackendTraffic(r.Policies.BackendTraffic, bodies, false)
		}
	}
	for _, l := range x.TCP {
		for _, r := range l.Routes {
			r.Policies.BackendTrafficSettings = ResolveBackendTraffic(r.Policies.BackendTraffic, nil, false)
		}
	}
	for _, l := range x.UDP {
		if l.Route != nil {
			l.Route.Policies.BackendTrafficSettings = ResolveBackendTraffic(l.Route.Policies.BackendTraffic, nil, true)
		}
	}
}

// ResolveBackendTraffic is what a (nil for none) sets on a route: bodies are the response
// bodies its responseOverride rules read from ConfigMaps (PolicyData.ResponseBodies); on a
// UDP route EG applies the load balancer alone. Exported for the xDS stage's tests.
func ResolveBackendTraffic(a *ir.Applied[egv1a1.BackendTrafficPolicySpec], bodies map[int]string,
	udp bool) *ir.BackendTraffic {
	if a == nil || a.Spec == nil {
		return nil
	}
	spec := a.Spec
	out := &ir.BackendTraffic{
		Retry:            resolveBackendRetry(spec.Retry),
		Cluster:          resolveClusterSettings(&spec.ClusterSettings),
		HealthCheck:      resolveHealthCheck(spec.HealthCheck),
		ResponseOverride: resolveResponseOverride(a, bodies),
	}
	if udp {
		out.Cluster.CircuitBreaker = nil
	}
	if t := spec.Timeout; t != nil && t.HTTP != nil {
		out.RequestTimeout = ir.Duration(t.HTTP.RequestTimeout)
		out.StreamIdleTimeout = ir.Duration(t.HTTP.StreamIdleTimeout)
	}
	if lb := spec.LoadBalancer; lb != nil && lb.Type == egv1a1.BackendUtilizationLoadBalancerType {
		keep := lb.BackendUtilization != nil && lb.BackendUtilization.KeepResponseHeaders != nil &&
			*lb.BackendUtilization.KeepResponseHeaders
		out.RemoveLoadReportHeaders = !keep
	}
	return out
}

// resolveBackendRetry is the policy's retry on its routes (nil without one).
func resolveBackendRetry(r *egv1a1.Retry) *ir.BackendRetry {
	if r == nil {
		return nil
	}
	out := &ir.BackendRetry{}
	if r.NumRetries != nil {
		n := uint32(*r.NumRetries)
		out.NumRetries = &n
	}
	if r.NumAttemptsPerPriority != nil {
		out.NumAttemptsPerPriority = *r.NumAttemptsPerPriority
	}
	if on := r.RetryOn; on != nil && (on.Triggers != nil || on.HTTPStatusCodes != nil) {
		retryOn := &ir.RetryOn{StatusCodes: make([]uint32, len(on.HTTPStatusCodes))}
		for _, t := range on.Triggers {
			retryOn.Triggers = append(retryOn.Triggers, string(t))
		}
		for i, c := range on.HTTPStatusCodes {
			retryOn.StatusCodes[i] = uint32(c)
		}
		out.RetryOn = retryOn
	}
	if pr := r.PerRetry; pr != nil {
		out.PerTryTimeout = ir.Duration(pr.Timeout)
		if bo := pr.BackOff; bo != nil {
			out.BackOffBase, out.BackOffMax = ir.Duration(bo.BaseInterval), ir.Duration(bo.MaxInterval)
		}
	}
	return out
}
