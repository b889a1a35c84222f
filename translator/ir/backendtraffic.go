package ir

import "time"

// BackendTraffic is what the BackendTrafficPolicy in force on a route sets besides its
// filters (backendtraffic_filters.go) and rate limits (ratelimit.go): set by the policy
// stage whenever such a policy applies, nil otherwise.
type BackendTraffic struct {
	// RequestTimeout and StreamIdleTimeout are timeout.http's, nil when unset or not a
	// duration. The HTTPRoute rule's own timeout wins over RequestTimeout.
	RequestTimeout    *time.Duration `json:"requestTimeout,omitempty"`
	StreamIdleTimeout *time.Duration `json:"streamIdleTimeout,omitempty"`
	// Retry is the policy's retry (the rule's own retry wins).
	Retry *BackendRetry `json:"retry,omitempty"`
	// Cluster is what the policy sets on the route's cluster. On a UDP route it holds the
	// load balancer only, as EG applies no circuit breaker there.
	Cluster *ClusterSettings `json:"cluster,omitempty"`
	// HealthCheck is the policy's healthCheck (healthcheck.go).
	HealthCheck *HealthCheck `json:"healthCheck,omitempty"`
	// RemoveLoadReportHeaders: the route balances by backend utilization and does not keep
	// the backends' load report headers, which EG then removes from responses.
	RemoveLoadReportHeaders bool `json:"removeLoadReportHeaders,omitempty"`
	// ResponseOverride is the policy's responseOverride (backendtraffic_response.go).
	ResponseOverride *ResponseOverride `json:"responseOverride,omitempty"`
}

// BackendRetry is a BackendTrafficPolicy's retry on a route, on top of EG's default retry
// policy: each field set replaces the default's.
type BackendRetry struct {
	NumRetries *uint32 `json:"numRetries,omitempty"`
	// NumAttemptsPerPriority, when positive, is the update frequency of the
	// previous_priorities retry priority.
	NumAttemptsPerPriority int32 `json:"numAttemptsPerPriority,omitempty"`
	// RetryOn is set when the policy names triggers or status codes.
	RetryOn       *RetryOn       `json:"retryOn,omitempty"`
	PerTryTimeout *time.Duration `json:"perTryTimeout,omitempty"`
	// BackOffBase and BackOffMax are nil when unset or not durations.
	BackOffBase *time.Duration `json:"backOffBase,omitempty"`
	BackOffMax  *time.Duration `json:"backOffMax,omitempty"`
}

// RetryOn replaces the default retriable status codes with StatusCodes (possibly none) and,
// when it has any, the default triggers with Triggers.
type RetryOn struct {
	Triggers    []string `json:"triggers,omitempty"`
	StatusCodes []uint32 `json:"statusCodes,omitempty"`
}
