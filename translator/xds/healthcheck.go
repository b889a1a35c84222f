package xds

import (
	"encoding/hex"
	"sort"
	"strings"
	"time"

	egv1a1 "github.com/envoyproxy/gateway/api/v1alpha1"
	clusterv3 "github.com/envoyproxy/go-control-plane/envoy/config/cluster/v3"
	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	endpointv3 "github.com/envoyproxy/go-control-plane/envoy/config/endpoint/v3"
	typev3 "github.com/envoyproxy/go-control-plane/envoy/type/v3"
	"google.golang.org/protobuf/types/known/durationpb"
	"google.golang.org/protobuf/types/known/wrapperspb"
	gwapiv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/egharness/egharness/translator/ir"
)

// The BackendTrafficPolicy's healthCheck at the cluster (BTP-02): active checks Envoy
// sends to each endpoint (HTTP, TCP or gRPC) and passive outlier detection. Fields the
// user leaves out take the CRD's defaults, which the API server writes into the object.

// CRD defaults of healthCheck (kubebuilder defaults of EG v1.9's API).
const (
	hcDefaultTimeout            = time.Second
	hcDefaultInterval           = 3 * time.Second
	hcDefaultUnhealthyThreshold = 3
	hcDefaultHealthyThreshold   = 1

	odDefaultInterval              = 3 * time.Second
	odDefaultBaseEjectionTime      = 30 * time.Second
	odDefaultConsecutiveLocalOrig  = 5
	odDefaultConsecutive5xx        = 5
	odDefaultMaxEjectionPercent    = 10
	odDefaultSplitExternalLocalErr = false
	odDefaultAlwaysEjectOne        = false
)

// applyHealthCheck puts the route's policy health checks on its backend cluster. The HTTP
// check's Host is the policy's hostname, else the hostname of the route the cluster was
// built for.
// overrides.port sends the active checks to another port of every endpoint.
func applyHealthCheck(c *clusterv3.Cluster, cla *endpointv3.ClusterLoadAssignment, r *ir.HTTPRoute) {
	bt := r.Policies.BackendTraffic
	if bt == nil || bt.Spec == nil || bt.Spec.HealthCheck == nil {
		return
	}
	hc := bt.Spec.HealthCheck
	if hc.Active != nil {
		if h := activeHealthCheck(hc.Active, r.Hostname); h != nil {
			c.HealthChecks = []*corev3.HealthCheck{h}
		}
		if o := hc.Active.Overrides; o != nil && cla != nil {
			for _, loc := range cla.Endpoints {
				for _, e := range loc.LbEndpoints {
					if ep := e.GetEndpoint(); ep != nil {
						ep.HealthCheckConfig = &endpointv3.Endpoint_HealthCheckConfig{PortValue: uint32(o.Port)}
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

func durationOr(d *gwapiv1.Duration, def time.Duration) time.Duration {
	if v := ir.Duration(d); v != nil {
		return *v
	}
	return def
}

func u32Or(v *uint32, def uint32) uint32 {
	if v != nil {
		return *v
	}
	return def
}

func activeHealthCheck(a *egv1a1.ActiveHealthCheck, routeHost string) *corev3.HealthCheck {
	hc := &corev3.HealthCheck{
		Timeout:            durationpb.New(durationOr(a.Timeout, hcDefaultTimeout)),
		Interval:           durationpb.New(durationOr(a.Interval, hcDefaultInterval)),
		UnhealthyThreshold: u32(u32Or(a.UnhealthyThreshold, hcDefaultUnhealthyThreshold)),
		HealthyThreshold:   u32(u32Or(a.HealthyThreshold, hcDefaultHealthyThreshold)),
	}
	if j := ir.Duration(a.InitialJitter); j != nil {
		hc.InitialJitter = durationpb.New(*j)
	}
	switch a.Type {
	case egv1a1.ActiveHealthCheckerTypeHTTP:
		h := a.HTTP
		if h == nil {
			return nil
		}
		check := &corev3.HealthCheck_HttpHealthCheck{Host: routeHost, Path: h.Path}
		if h.Hostname != nil && *h.Hostname != "" {
			check.Host = *h.Hostname
		}
		if h.Method != nil {
			check.Method = corev3.RequestMethod(corev3.RequestMethod_value[strings.ToUpper(*h.Method)])
		}
		expected := h.ExpectedStatuses
		if len(expected) == 0 {
			expected = []egv1a1.HTTPStatus{200}
		}
		check.ExpectedStatuses = statusRanges(expected)
		check.RetriableStatuses = statusRanges(h.RetriableStatuses)
		if p := hcPayload(h.ExpectedResponse); p != nil {
			check.Receive = append(check.Receive, p)
		}
		check.Send = hcPayload(h.RequestBody)
		hc.HealthChecker = &corev3.HealthCheck_HttpHealthCheck_{HttpHealthCheck: check}
	case egv1a1.ActiveHealthCheckerTypeTCP:
		check := &corev3.HealthCheck_TcpHealthCheck{}
		if a.TCP != nil {
			check.Send = hcPayload(a.TCP.Send)
			if p := hcPayload(a.TCP.Receive); p != nil {
				check.Receive = append(check.Receive, p)
			}
		}
		hc.HealthChecker = &corev3.HealthCheck_TcpHealthCheck_{TcpHealthCheck: check}
	case egv1a1.ActiveHealthCheckerTypeGRPC:
		check := &corev3.HealthCheck_GrpcHealthCheck{}
		if a.GRPC != nil && a.GRPC.Service != nil {
			check.ServiceName = *a.GRPC.Service
		}
		hc.HealthChecker = &corev3.HealthCheck_GrpcHealthCheck_{GrpcHealthCheck: check}
	default:
		return nil
	}
	return hc
}

// statusRanges folds status codes into Envoy's half-open ranges: sorted, duplicates
// dropped, consecutive codes in one range.
func statusRanges(codes []egv1a1.HTTPStatus) []*typev3.Int64Range {
	if len(codes) == 0 {
		return nil
	}
	cs := make([]int64, 0, len(codes))
	seen := map[int64]bool{}
	for _, c := range codes {
		if !seen[int64(c)] {
			seen[int64(c)] = true
			cs = append(cs, int64(c))
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

// hcPayload is a payload to send or expect: text goes hex-encoded, as Envoy reads it.
func hcPayload(p *egv1a1.ActiveHealthCheckPayload) *corev3.HealthCheck_Payload {
	if p == nil {
		return nil
	}
	out := &corev3.HealthCheck_Payload{}
	switch p.Type {
	case egv1a1.ActiveHealthCheckPayloadTypeText:
		if p.Text != nil && *p.Text != "" {
			out.Payload = &corev3.HealthCheck_Payload_Text{Text: hex.EncodeToString([]byte(*p.Text))}
		}
	case egv1a1.ActiveHealthCheckPayloadTypeBinary:
		if len(p.Binary) > 0 {
			out.Payload = &corev3.HealthCheck_Payload_Binary{Binary: append([]byte(nil), p.Binary...)}
		}
	}
	return out
}

func outlierDetection(p *egv1a1.PassiveHealthCheck) *clusterv3.OutlierDetection {
	od := &clusterv3.OutlierDetection{
		BaseEjectionTime:               durationpb.New(durationOr(p.BaseEjectionTime, odDefaultBaseEjectionTime)),
		Interval:                       durationpb.New(durationOr(p.Interval, odDefaultInterval)),
		SplitExternalLocalOriginErrors: odDefaultSplitExternalLocalErr,
		ConsecutiveLocalOriginFailure:  u32(u32Or(p.ConsecutiveLocalOriginFailures, odDefaultConsecutiveLocalOrig)),
		Consecutive_5Xx:                u32(u32Or(p.Consecutive5xxErrors, odDefaultConsecutive5xx)),
		AlwaysEjectOneHost:             wrapperspb.Bool(odDefaultAlwaysEjectOne),
	}
	if p.SplitExternalLocalOriginErrors != nil {
		od.SplitExternalLocalOriginErrors = *p.SplitExternalLocalOriginErrors
	}
	maxEject := int32(odDefaultMaxEjectionPercent)
	if p.MaxEjectionPercent != nil {
		maxEject = *p.MaxEjectionPercent
	}
	if maxEject > 0 {
		od.MaxEjectionPercent = u32(uint32(maxEject))
	}
	if p.ConsecutiveGatewayErrors != nil {
		od.EnforcingConsecutiveGatewayFailure = u32(100)
		od.ConsecutiveGatewayFailure = u32(*p.ConsecutiveGatewayErrors)
	}
	if p.FailurePercentageThreshold != nil {
		od.FailurePercentageThreshold = u32(*p.FailurePercentageThreshold)
		od.EnforcingFailurePercentage = u32(100)
	}
	if p.AlwaysEjectOneEndpoint != nil {
		od.AlwaysEjectOneHost = wrapperspb.Bool(*p.AlwaysEjectOneEndpoint)
	}
	return od
}
