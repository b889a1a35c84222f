package check

import (
	"slices"

	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"

	"github.com/egharness/egharness/harness/scenario"
	"github.com/egharness/egharness/translator/result"
)

// clusterHealth compares a cluster's health checking with the expectation: the kinds of
// its active checks, and whether it has outlier detection.
func (c *collector) clusterHealth(where, what string, xds *result.XDS, x scenario.XDSExpect) {
	for _, cl := range xds.Clusters {
		if cl.GetName() != x.Name {
			continue
		}
		if len(x.HealthChecks) > 0 {
			got := healthCheckKinds(cl.GetHealthChecks())
			if !slices.Equal(got, x.HealthChecks) {
				c.failf("xds", where, "%s: active health checks are %v, expected %v", what, got, x.HealthChecks)
			}
		}
		if x.OutlierDetection != nil {
			if got := cl.GetOutlierDetection() != nil; got != *x.OutlierDetection {
				c.failf("xds", where, "%s: outlier detection is %v, expected %v", what, got, *x.OutlierDetection)
			}
		}
		return
	}
}

// healthCheckKinds names each active check by its checker; [none] when there is none.
func healthCheckKinds(hcs []*corev3.HealthCheck) []string {
	if len(hcs) == 0 {
		return []string{"none"}
	}
	out := make([]string, 0, len(hcs))
	for _, h := range hcs {
		switch h.GetHealthChecker().(type) {
		case *corev3.HealthCheck_HttpHealthCheck_:
			out = append(out, "HTTP")
		case *corev3.HealthCheck_TcpHealthCheck_:
			out = append(out, "TCP")
		case *corev3.HealthCheck_GrpcHealthCheck_:
			out = append(out, "GRPC")
		default:
			out = append(out, "other")
		}
	}
	return out
}
