package ir

import (
	"time"

	egv1a1 "github.com/envoyproxy/gateway/api/v1alpha1"
)

// ClusterSettings are what a policy sets on an upstream cluster: a BackendTrafficPolicy on
// its routes' clusters, a policy's backendSettings on the cluster of its external service
// (ext_authz, ext_proc, an OIDC provider). Nil parts leave the cluster as built.
type ClusterSettings struct {
	CircuitBreaker *ClusterCircuitBreaker `json:"circuitBreaker,omitempty"`
	LoadBalancer   *LoadBalancer          `json:"loadBalancer,omitempty"`
}

// ClusterCircuitBreaker is the cluster's default-priority thresholds, the CRD's default (1024)
// filled in for those left out. A nil threshold is one Envoy cannot take (beyond 32 bits),
// which EG leaves out too.
type ClusterCircuitBreaker struct {
	MaxConnections      *uint32 `json:"maxConnections,omitempty"`
	MaxPendingRequests  *uint32 `json:"maxPendingRequests,omitempty"`
	MaxParallelRequests *uint32 `json:"maxParallelRequests,omitempty"`
	MaxParallelRetries  *uint32 `json:"maxParallelRetries,omitempty"`
	// PerEndpoint, when set, adds per-host thresholds.
	PerEndpoint *CircuitBreakerPerEndpoint `json:"perEndpoint,omitempty"`
}

// CircuitBreakerPerEndpoint is the per-host connection limit (same defaulting as above).
type CircuitBreakerPerEndpoint struct {
	MaxConnections *uint32 `json:"maxConnections,omitempty"`
}

// LoadBalancer is the cluster's load balancing policy: Type is one of the
// LoadBalancer… values (another type leaves the cluster's default policy); SlowStartWindow
// is nil without a slow start (or one whose window does not parse).
type LoadBalancer struct {
	Type               string              `json:"type"`
	SlowStartWindow    *time.Duration      `json:"slowStartWindow,omitempty"`
	BackendUtilization *BackendUtilization `json:"backendUtilization,omitempty"`
}

// The load balancer types the xDS stage builds a policy for, as EG spells them.
const (
	LoadBalancerRoundRobin         = string(egv1a1.RoundRobinLoadBalancerType)
	LoadBalancerRandom             = string(egv1a1.RandomLoadBalancerType)
	LoadBalancerLeastRequest       = string(egv1a1.LeastRequestLoadBalancerType)
	LoadBalancerBackendUtilization = string(egv1a1.BackendUtilizationLoadBalancerType)
)

// BackendUtilization is client-side weighted round robin. The periods are nil unless set
// and positive (EG drops the others); the penalty is a percentage.
type BackendUtilization struct {
	BlackoutPeriod                     *time.Duration `json:"blackoutPeriod,omitempty"`
	WeightExpirationPeriod             *time.Duration `json:"weightExpirationPeriod,omitempty"`
	WeightUpdatePeriod                 *time.Duration `json:"weightUpdatePeriod,omitempty"`
	ErrorUtilizationPenaltyPercent     *uint32        `json:"errorUtilizationPenaltyPercent,omitempty"`
	MetricNamesForComputingUtilization []string       `json:"metricNamesForComputingUtilization,omitempty"`
	// OutOfBand, when set, asks backends for out-of-band load reports.
	OutOfBand *OutOfBandLoadReport `json:"outOfBand,omitempty"`
}

// OutOfBandLoadReport is where and how often backends report their load out of band;
// ReportingPeriod is nil when unset or not a duration.
type OutOfBandLoadReport struct {
	ReportingPeriod *time.Duration `json:"reportingPeriod,omitempty"`
	Port            *uint32        `json:"port,omitempty"`
	Authority       *string        `json:"authority,omitempty"`
}

// ServiceRetry is how Envoy retries a call to a policy's external service (its
// backendSettings.retry). Triggers are sorted and each once (EG keeps them as a set), empty
// for EG's own; the back-off is set only when both intervals are.
type ServiceRetry struct {
	NumRetries  *uint32        `json:"numRetries,omitempty"`
	Triggers    []string       `json:"triggers,omitempty"`
	BackOffBase *time.Duration `json:"backOffBase,omitempty"`
	BackOffMax  *time.Duration `json:"backOffMax,omitempty"`
}
