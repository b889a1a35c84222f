package policy

import (
	"math"
	"slices"
	"testing"

	egv1a1 "github.com/envoyproxy/gateway/api/v1alpha1"

	"github.com/egharness/egharness/translator/ir"
)

// A threshold left out takes the CRD's 1024, one Envoy cannot hold is left to the
// cluster, and a UDP route keeps the load balancer but no circuit breaker.
func TestBackendTrafficClusterSettings(t *testing.T) {
	tooBig, five := int64(math.MaxUint32+1), int64(5)
	spec := &egv1a1.BackendTrafficPolicySpec{ClusterSettings: egv1a1.ClusterSettings{
		CircuitBreaker: &egv1a1.CircuitBreaker{MaxConnections: &five, MaxPendingRequests: &tooBig},
		LoadBalancer:   &egv1a1.LoadBalancer{Type: egv1a1.RandomLoadBalancerType},
	}}
	a := &ir.Applied[egv1a1.BackendTrafficPolicySpec]{Spec: spec}
	cb := ResolveBackendTraffic(a, nil, false).Cluster.CircuitBreaker
	if *cb.MaxConnections != 5 || cb.MaxPendingRequests != nil || *cb.MaxParallelRequests != circuitBreakerDefault {
		t.Errorf("thresholds: got %d, %v, %d", *cb.MaxConnections, cb.MaxPendingRequests, *cb.MaxParallelRequests)
	}
	udp := ResolveBackendTraffic(a, nil, true).Cluster
	if udp.CircuitBreaker != nil || udp.LoadBalancer == nil || udp.LoadBalancer.Type != ir.LoadBalancerRandom {
		t.Errorf("UDP route: want the load balancer only, got %+v", udp)
	}
	if ResolveBackendTraffic(nil, nil, false) != nil {
		t.Error("no policy: want no settings")
	}
}

// EG keeps an external service's retry triggers as a set: sorted, each once.
func TestServiceRetryTriggersAreASet(t *testing.T) {
	cs := &egv1a1.ClusterSettings{Retry: &egv1a1.Retry{RetryOn: &egv1a1.RetryOn{Triggers: []egv1a1.TriggerEnum{
		egv1a1.Reset, egv1a1.ConnectFailure, egv1a1.Reset,
	}}}}
	got := resolveServiceRetry(cs).Triggers
	if want := []string{string(egv1a1.ConnectFailure), string(egv1a1.Reset)}; !slices.Equal(got, want) {
		t.Errorf("triggers %v, want %v", got, want)
	}
}
