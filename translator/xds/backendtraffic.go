package xds

import (
	"slices"
	"strings"
	"time"

	clusterv3 "github.com/envoyproxy/go-control-plane/envoy/config/cluster/v3"
	routev3 "github.com/envoyproxy/go-control-plane/envoy/config/route/v3"
	previousprioritiesv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/retry/priority/previous_priorities/v3"
	"google.golang.org/protobuf/types/known/durationpb"

	"github.com/egharness/egharness/translator/ir"
)

// The BackendTrafficPolicy in force on a route (BTP-02): what it sets on the route.

// requestTimeout is the route's request timeout: the HTTPRoute rule's own timeouts win
// over the BackendTrafficPolicy's timeout.http.requestTimeout, as in EG.
func requestTimeout(r *ir.HTTPRoute) *time.Duration {
	if r.Timeout != nil {
		return r.Timeout
	}
	if traffic := r.Policies.BackendTrafficSettings; traffic != nil {
		return traffic.RequestTimeout
	}
	return nil
}

// streamIdleTimeout is the policy's timeout.http.streamIdleTimeout, which replaces the
// idle timeout derived from the request timeout.
func streamIdleTimeout(r *ir.HTTPRoute) *time.Duration {
	if traffic := r.Policies.BackendTrafficSettings; traffic != nil {
		return traffic.StreamIdleTimeout
	}
	return nil
}

// btpRetryPolicy is the policy's retry, when the HTTPRoute rule has none of its own (the
// rule's retry wins, as in EG): EG's defaults, then what the policy sets.
func btpRetryPolicy(r *ir.HTTPRoute) *routev3.RetryPolicy {
	traffic := r.Policies.BackendTrafficSettings
	if r.Retry != nil || traffic == nil || traffic.Retry == nil {
		return nil
	}
	retry := traffic.Retry
	rp := retryPolicy(&ir.Retry{})
	if retry.NumRetries != nil {
		rp.NumRetries = u32(*retry.NumRetries)
	}
	if retry.NumAttemptsPerPriority > 0 {
		rp.RetryPriority = &routev3.RetryPolicy_RetryPriority{
			Name: "envoy.retry_priorities.previous_priorities",
			ConfigType: &routev3.RetryPolicy_RetryPriority_TypedConfig{
				TypedConfig: mustAny(&previousprioritiesv3.PreviousPrioritiesConfig{
					UpdateFrequency: retry.NumAttemptsPerPriority,
				})},
		}
	}
	if on := retry.RetryOn; on != nil {
		if len(on.Triggers) > 0 {
			rp.RetryOn = strings.Join(on.Triggers, ",")
		}
		rp.RetriableStatusCodes = on.StatusCodes
	}
	if retry.PerTryTimeout != nil {
		rp.PerTryTimeout = durationpb.New(*retry.PerTryTimeout)
	}
	if retry.BackOffBase != nil || retry.BackOffMax != nil {
		backOff := &routev3.RetryPolicy_RetryBackOff{}
		if retry.BackOffBase != nil {
			backOff.BaseInterval = durationpb.New(*retry.BackOffBase)
		}
		if retry.BackOffMax != nil {
			backOff.MaxInterval = durationpb.New(*retry.BackOffMax)
		}
		rp.RetryBackOff = backOff
	}
	return rp
}

// applyBackendTrafficCluster puts the cluster settings of the route's policy on the
// cluster of its backends (BTP-02).
func applyBackendTrafficCluster(c *clusterv3.Cluster, r *ir.HTTPRoute) {
	if traffic := r.Policies.BackendTrafficSettings; traffic != nil {
		applyClusterSettings(c, traffic.Cluster)
	}
}

// loadReportHeaders are the response headers a backend reports its load in (ORCA), which EG
// removes on the routes of a BackendUtilization load balancer unless keepResponseHeaders.
var loadReportHeaders = []string{"endpoint-load-metrics", "endpoint-load-metrics-bin"}

// removedResponseHeaders is the route's response headers to remove: its filters', then the
// load report headers when its BackendTrafficPolicy says so (backendtrafficpolicy.go, after
// the traffic features are set).
func removedResponseHeaders(r *ir.HTTPRoute) []string {
	out := r.RemoveResponseHeaders
	if traffic := r.Policies.BackendTrafficSettings; traffic == nil || !traffic.RemoveLoadReportHeaders {
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
