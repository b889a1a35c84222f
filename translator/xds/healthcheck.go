package xds

import (
	"encoding/hex"
	"sort"

	clusterv3 "github.com/envoyproxy/go-control-plane/envoy/config/cluster/v3"
	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	endpointv3 "github.com/envoyproxy/go-control-plane/envoy/config/endpoint/v3"
	typev3 "github.com/envoyproxy/go-control-plane/envoy/type/v3"
	"google.golang.org/protobuf/types/known/durationpb"
	"google.golang.org/protobuf/types/known/wrapperspb"

	"github.com/egharness/egharness/translator/ir"
)

// The BackendTrafficPolicy's healthCheck at the cluster (BTP-02): active checks Envoy
// sends to each endpoint (HTTP, TCP or gRPC) and passive outlier detection. The policy
// stage filled in the CRD's defaults.

// applyHealthCheck puts the route's policy health checks on its backend cluster. The HTTP
// check's Host is the policy's hostname, else the hostname of the route the cluster was
// built for. An override port sends the active checks to another port of every endpoint.
func applyHealthCheck(c *clusterv3.Cluster, cla *endpointv3.ClusterLoadAssignment, r *ir.HTTPRoute) {
	traffic := r.Policies.BackendTrafficSettings
	if traffic == nil || traffic.HealthCheck == nil {
		return
	}
	hc := traffic.HealthCheck
	if hc.Active != nil {
		if h := activeHealthCheck(hc.Active, r.Hostname); h != nil {
			c.HealthChecks = []*corev3.HealthCheck{h}
		}
		if port := hc.Active.OverridePort; port != nil && cla != nil {
			for _, loc := range cla.Endpoints {
				for _, e := range loc.LbEndpoints {
					if ep := e.GetEndpoint(); ep != nil {
						ep.HealthCheckConfig = &endpointv3.Endpoint_HealthCheckConfig{PortValue: *port}
					}
				}
			}
		}
	}
	if hc.Passive != nil {
		c.OutlierDetection = outlierDetection(hc.Passive)
	}
	// 50% is Envoy's own default: EG leaves the field out then.
	if hc.PanicThreshold != nil && *hc.PanicThreshold != 50 {
		if c.CommonLbConfig == nil {
			c.CommonLbConfig = &clusterv3.Cluster_CommonLbConfig{}
		}
		c.CommonLbConfig.HealthyPanicThreshold = &typev3.Percent{Value: float64(*hc.PanicThreshold)}
	}
}

func activeHealthCheck(a *ir.ActiveHealthCheck, routeHost string) *corev3.HealthCheck {
	hc := &corev3.HealthCheck{
		Timeout:            durationpb.New(a.Timeout),
		Interval:           durationpb.New(a.Interval),
		UnhealthyThreshold: u32(a.UnhealthyThreshold),
		HealthyThreshold:   u32(a.HealthyThreshold),
		InitialJitter:      durationOrNil(a.InitialJitter),
	}
	switch {
	case a.HTTP != nil:
		h := a.HTTP
		check := &corev3.HealthCheck_HttpHealthCheck{Host: routeHost, Path: h.Path}
		if h.Hostname != "" {
			check.Host = h.Hostname
		}
		if h.Method != "" {
			check.Method = corev3.RequestMethod(corev3.RequestMethod_value[h.Method])
		}
		check.ExpectedStatuses = statusRanges(h.ExpectedStatuses)
		check.RetriableStatuses = statusRanges(h.RetriableStatuses)
		if p := healthCheckPayload(h.ExpectedResponse); p != nil {
			check.Receive = append(check.Receive, p)
		}
		check.Send = healthCheckPayload(h.RequestBody)
		hc.HealthChecker = &corev3.HealthCheck_HttpHealthCheck_{HttpHealthCheck: check}
	case a.TCP != nil:
		check := &corev3.HealthCheck_TcpHealthCheck{Send: healthCheckPayload(a.TCP.Send)}
		if p := healthCheckPayload(a.TCP.Receive); p != nil {
			check.Receive = append(check.Receive, p)
		}
		hc.HealthChecker = &corev3.HealthCheck_TcpHealthCheck_{TcpHealthCheck: check}
	case a.GRPC != nil:
		hc.HealthChecker = &corev3.HealthCheck_GrpcHealthCheck_{
			GrpcHealthCheck: &corev3.HealthCheck_GrpcHealthCheck{ServiceName: a.GRPC.ServiceName}}
	default:
		return nil
	}
	return hc
}

// statusRanges folds status codes into Envoy's half-open ranges: sorted, duplicates
// dropped, consecutive codes in one range.
func statusRanges(codes []int64) []*typev3.Int64Range {
	if len(codes) == 0 {
		return nil
	}
	cs := make([]int64, 0, len(codes))
	seen := map[int64]bool{}
	for _, c := range codes {
		if !seen[c] {
			seen[c] = true
			cs = append(cs, c)
		}
	}
	sort.Slice(cs, func(i, j int) bool { return cs[i] < cs[j] })
	var out []*typev3.Int64Range
	for _, c := range cs {
		if n := len(out); n > 0 && out[n-1].End == c {
			out[n-1].End++
			continue
		}
		out = append(out, &typev3.Int64Range{Start: c, End: c + 1})
	}
	return out
}

// healthCheckPayload is a payload to send or expect: text goes hex-encoded, as Envoy reads
// it.
func healthCheckPayload(p *ir.HealthCheckPayload) *corev3.HealthCheck_Payload {
	if p == nil {
		return nil
	}
	out := &corev3.HealthCheck_Payload{}
	switch {
	case p.Text != "":
		out.Payload = &corev3.HealthCheck_Payload_Text{Text: hex.EncodeToString([]byte(p.Text))}
	case len(p.Binary) > 0:
		out.Payload = &corev3.HealthCheck_Payload_Binary{Binary: append([]byte(nil), p.Binary...)}
	}
	return out
}

func outlierDetection(p *ir.PassiveHealthCheck) *clusterv3.OutlierDetection {
	od := &clusterv3.OutlierDetection{
		BaseEjectionTime:               durationpb.New(p.BaseEjectionTime),
		Interval:                       durationpb.New(p.Interval),
		SplitExternalLocalOriginErrors: p.SplitExternalLocalOriginErrors,
		ConsecutiveLocalOriginFailure:  u32(p.ConsecutiveLocalOriginFailures),
		Consecutive_5Xx:                u32(p.Consecutive5xxErrors),
		AlwaysEjectOneHost:             wrapperspb.Bool(p.AlwaysEjectOneEndpoint),
	}
	if p.MaxEjectionPercent > 0 {
		od.MaxEjectionPercent = u32(uint32(p.MaxEjectionPercent))
	}
	if p.ConsecutiveGatewayErrors != nil {
		od.EnforcingConsecutiveGatewayFailure = u32(100)
		od.ConsecutiveGatewayFailure = u32(*p.ConsecutiveGatewayErrors)
	}
	if p.FailurePercentageThreshold != nil {
		od.FailurePercentageThreshold = u32(*p.FailurePercentageThreshold)
		od.EnforcingFailurePercentage = u32(100)
	}
	return od
}
