package policy

import (
	"strings"
	"time"

	egv1a1 "github.com/envoyproxy/gateway/api/v1alpha1"
	gwapiv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/egharness/egharness/translator/ir"
)

// A BackendTrafficPolicy's healthCheck (EG v1.9): active checks Envoy sends to each
// endpoint (HTTP, TCP or gRPC) and passive outlier detection, resolved into ir.HealthCheck.
// Fields the user leaves out take the CRD's defaults, which the API server writes into the
// object, so that a policy read from a file behaves as one read from a cluster.

// CRD defaults of healthCheck (kubebuilder defaults of EG v1.9's API).
const (
	healthCheckDefaultTimeout            = time.Second
	healthCheckDefaultInterval           = 3 * time.Second
	healthCheckDefaultUnhealthyThreshold = 3
	healthCheckDefaultHealthyThreshold   = 1

	outlierDefaultInterval                 = 3 * time.Second
	outlierDefaultBaseEjectionTime         = 30 * time.Second
	outlierDefaultConsecutiveLocalOrigin   = 5
	outlierDefaultConsecutive5xx           = 5
	outlierDefaultMaxEjectionPercent       = 10
	outlierDefaultSplitExternalLocalErrors = false
	outlierDefaultAlwaysEjectOne           = false
)

func resolveHealthCheck(hc *egv1a1.HealthCheck) *ir.HealthCheck {
	if hc == nil {
		return nil
	}
	out := &ir.HealthCheck{PanicThreshold: hc.PanicThreshold}
	if hc.Active != nil {
		out.Active = resolveActiveHealthCheck(hc.Active)
	}
	if hc.Passive != nil {
		out.Passive = resolvePassiveHealthCheck(hc.Passive)
	}
	return out
}

func durationOr(d *gwapiv1.Duration, def time.Duration) time.Duration {
	if v := ir.Duration(d); v != nil {
		return *v
	}
	return def
}

func uint32Or(v *uint32, def uint32) uint32 {
	if v != nil {
		return *v
	}
	return def
}

func resolveActiveHealthCheck(a *egv1a1.ActiveHealthCheck) *ir.ActiveHealthCheck {
	out := &ir.ActiveHealthCheck{
		Timeout:            durationOr(a.Timeout, healthCheckDefaultTimeout),
		Interval:           durationOr(a.Interval, healthCheckDefaultInterval),
		UnhealthyThreshold: uint32Or(a.UnhealthyThreshold, healthCheckDefaultUnhealthyThreshold),
		HealthyThreshold:   uint32Or(a.HealthyThreshold, healthCheckDefaultHealthyThreshold),
		InitialJitter:      ir.Duration(a.InitialJitter),
	}
	if o := a.Overrides; o != nil {
		port := uint32(o.Port)
		out.OverridePort = &port
	}
	switch a.Type {
	case egv1a1.ActiveHealthCheckerTypeHTTP:
		// a check of type HTTP without its settings cannot be built: none is sent
		if h := a.HTTP; h != nil {
			check := &ir.HTTPHealthCheck{Path: h.Path}
			if h.Hostname != nil {
				check.Hostname = *h.Hostname
			}
			if h.Method != nil {
				check.Method = strings.ToUpper(*h.Method)
			}
			check.ExpectedStatuses = statusCodes(h.ExpectedStatuses)
			if len(check.ExpectedStatuses) == 0 {
				check.ExpectedStatuses = []int64{200}
			}
			check.RetriableStatuses = statusCodes(h.RetriableStatuses)
			check.ExpectedResponse = healthCheckPayload(h.ExpectedResponse)
			check.RequestBody = healthCheckPayload(h.RequestBody)
			out.HTTP = check
		}
	case egv1a1.ActiveHealthCheckerTypeTCP:
		check := &ir.TCPHealthCheck{}
		if a.TCP != nil {
			check.Send, check.Receive = healthCheckPayload(a.TCP.Send), healthCheckPayload(a.TCP.Receive)
		}
		out.TCP = check
	case egv1a1.ActiveHealthCheckerTypeGRPC:
		check := &ir.GRPCHealthCheck{}
		if a.GRPC != nil && a.GRPC.Service != nil {
			check.ServiceName = *a.GRPC.Service
		}
		out.GRPC = check
	}
	return out
}

func statusCodes(codes []egv1a1.HTTPStatus) []int64 {
	if len(codes) == 0 {
		return nil
	}
	out := make([]int64, len(codes))
	for i, c := range codes {
		out[i] = int64(c)
	}
	return out
}

// healthCheckPayload is the text or bytes of a payload, whichever its type names.
func healthCheckPayload(p *egv1a1.ActiveHealthCheckPayload) *ir.HealthCheckPayload {
	if p == nil {
		return nil
	}
	out := &ir.HealthCheckPayload{}
	switch p.Type {
	case egv1a1.ActiveHealthCheckPayloadTypeText:
		if p.Text != nil {
			out.Text = *p.Text
		}
	case egv1a1.ActiveHealthCheckPayloadTypeBinary:
		out.Binary = p.Binary
	}
	return out
}

func resolvePassiveHealthCheck(p *egv1a1.PassiveHealthCheck) *ir.PassiveHealthCheck {
	out := &ir.PassiveHealthCheck{
		BaseEjectionTime:               durationOr(p.BaseEjectionTime, outlierDefaultBaseEjectionTime),
		Interval:                       durationOr(p.Interval, outlierDefaultInterval),
		SplitExternalLocalOriginErrors: outlierDefaultSplitExternalLocalErrors,
		ConsecutiveLocalOriginFailures: uint32Or(p.ConsecutiveLocalOriginFailures, outlierDefaultConsecutiveLocalOrigin),
		Consecutive5xxErrors:           uint32Or(p.Consecutive5xxErrors, outlierDefaultConsecutive5xx),
		MaxEjectionPercent:             outlierDefaultMaxEjectionPercent,
		ConsecutiveGatewayErrors:       p.ConsecutiveGatewayErrors,
		FailurePercentageThreshold:     p.FailurePercentageThreshold,
		AlwaysEjectOneEndpoint:         outlierDefaultAlwaysEjectOne,
	}
	if p.SplitExternalLocalOriginErrors != nil {
		out.SplitExternalLocalOriginErrors = *p.SplitExternalLocalOriginErrors
	}
	if p.MaxEjectionPercent != nil {
		out.MaxEjectionPercent = *p.MaxEjectionPercent
	}
	if p.AlwaysEjectOneEndpoint != nil {
		out.AlwaysEjectOneEndpoint = *p.AlwaysEjectOneEndpoint
	}
	return out
}
