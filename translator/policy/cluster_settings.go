package policy

import (
	"math"
	"slices"
	"time"

	egv1a1 "github.com/envoyproxy/gateway/api/v1alpha1"
	gwapiv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/egharness/egharness/translator/ir"
)

// EG v1.9's ClusterSettings, shared by a BackendTrafficPolicy (on its routes' clusters) and
// the backendSettings of a policy's external service (ext_authz, ext_proc, an OIDC
// provider), resolved into ir.ClusterSettings and ir.ServiceRetry.

// circuitBreakerDefault is the CRD's default for each circuit breaker threshold, which the
// API server (and egctl) fill in.
const circuitBreakerDefault = 1024

// resolveClusterSettings is the circuit breaker and load balancer of cs (nil for none).
func resolveClusterSettings(cs *egv1a1.ClusterSettings) *ir.ClusterSettings {
	if cs == nil {
		return nil
	}
	return &ir.ClusterSettings{CircuitBreaker: resolveCircuitBreaker(cs.CircuitBreaker),
		LoadBalancer: resolveLoadBalancer(cs.LoadBalancer)}
}

func resolveCircuitBreaker(cb *egv1a1.CircuitBreaker) *ir.ClusterCircuitBreaker {
	if cb == nil {
		return nil
	}
	out := &ir.ClusterCircuitBreaker{
		MaxConnections:      threshold(cb.MaxConnections),
		MaxPendingRequests:  threshold(cb.MaxPendingRequests),
		MaxParallelRequests: threshold(cb.MaxParallelRequests),
		MaxParallelRetries:  threshold(cb.MaxParallelRetries),
	}
	if cb.PerEndpoint != nil {
		out.PerEndpoint = &ir.CircuitBreakerPerEndpoint{MaxConnections: threshold(cb.PerEndpoint.MaxConnections)}
	}
	return out
}

// threshold is a circuit breaker threshold: the CRD default when unset, nil when Envoy
// cannot take it (EG leaves such a value out).
func threshold(v *int64) *uint32 {
	var n uint32
	switch {
	case v == nil:
		n = circuitBreakerDefault
	case *v >= 0 && *v <= math.MaxUint32:
		n = uint32(*v)
	default:
		return nil
	}
	return &n
}

func resolveLoadBalancer(lb *egv1a1.LoadBalancer) *ir.LoadBalancer {
	if lb == nil {
		return nil
	}
	out := &ir.LoadBalancer{Type: string(lb.Type)}
	if lb.SlowStart != nil {
		out.SlowStartWindow = ir.Duration(lb.SlowStart.Window)
	}
	if bu := lb.BackendUtilization; bu != nil {
		out.BackendUtilization = &ir.BackendUtilization{
			BlackoutPeriod:                     positiveDuration(bu.BlackoutPeriod),
			WeightExpirationPeriod:             positiveDuration(bu.WeightExpirationPeriod),
			WeightUpdatePeriod:                 positiveDuration(bu.WeightUpdatePeriod),
			ErrorUtilizationPenaltyPercent:     bu.ErrorUtilizationPenaltyPercent,
			MetricNamesForComputingUtilization: append([]string(nil), bu.MetricNamesForComputingUtilization...),
		}
		if oob := bu.OutOfBand; oob != nil {
			report := &ir.OutOfBandLoadReport{ReportingPeriod: ir.Duration(oob.ReportingPeriod), Authority: oob.Authority}
			if oob.Port != nil {
				port := uint32(*oob.Port)
				report.Port = &port
			}
			out.BackendUtilization.OutOfBand = report
		}
	}
	return out
}

// positiveDuration is d when set and above zero (EG drops zero and negative periods).
func positiveDuration(d *gwapiv1.Duration) *time.Duration {
	if v := ir.Duration(d); v != nil && *v > 0 {
		return v
	}
	return nil
}

// resolveServiceRetry is the retry of calls to an external service, from its
// backendSettings (nil without a retry).
func resolveServiceRetry(cs *egv1a1.ClusterSettings) *ir.ServiceRetry {
	if cs == nil || cs.Retry == nil {
		return nil
	}
	r := cs.Retry
	out := &ir.ServiceRetry{}
	if r.NumRetries != nil {
		n := uint32(*r.NumRetries)
		out.NumRetries = &n
	}
	if r.RetryOn != nil && len(r.RetryOn.Triggers) > 0 {
		// EG keeps the triggers as a set: sorted, each once.
		triggers := make([]string, 0, len(r.RetryOn.Triggers))
		for _, t := range r.RetryOn.Triggers {
			triggers = append(triggers, string(t))
		}
		slices.Sort(triggers)
		out.Triggers = slices.Compact(triggers)
	}
	if pr := r.PerRetry; pr != nil && pr.BackOff != nil {
		base, max := ir.Duration(pr.BackOff.BaseInterval), ir.Duration(pr.BackOff.MaxInterval)
		if base != nil && max != nil {
			out.BackOffBase, out.BackOffMax = base, max
		}
	}
	return out
}
