package ir

import "time"

// HealthCheck is a BackendTrafficPolicy's healthCheck on a route's cluster, with the CRD's
// defaults filled in for what the policy leaves out (the API server writes them into the
// object).
type HealthCheck struct {
	Active  *ActiveHealthCheck  `json:"active,omitempty"`
	Passive *PassiveHealthCheck `json:"passive,omitempty"`
	// PanicThreshold is the healthy panic threshold, in percent.
	PanicThreshold *uint32 `json:"panicThreshold,omitempty"`
}

// ActiveHealthCheck is the check Envoy sends to each endpoint: at most one of HTTP, TCP and
// GRPC is set, none for a check EG cannot build (it then sends none).
type ActiveHealthCheck struct {
	Timeout            time.Duration    `json:"timeout"`
	Interval           time.Duration    `json:"interval"`
	UnhealthyThreshold uint32           `json:"unhealthyThreshold"`
	HealthyThreshold   uint32           `json:"healthyThreshold"`
	InitialJitter      *time.Duration   `json:"initialJitter,omitempty"`
	HTTP               *HTTPHealthCheck `json:"http,omitempty"`
	TCP                *TCPHealthCheck  `json:"tcp,omitempty"`
	GRPC               *GRPCHealthCheck `json:"grpc,omitempty"`
	// OverridePort, when set, sends the checks to this port of every endpoint.
	OverridePort *uint32 `json:"overridePort,omitempty"`
}

// HTTPHealthCheck is an HTTP check. Hostname "" is the hostname of the route the cluster
// was built for; Method is upper case, "" for Envoy's default; ExpectedStatuses has the
// CRD's default (200) when the policy names none.
type HTTPHealthCheck struct {
	Hostname          string              `json:"hostname,omitempty"`
	Path              string              `json:"path"`
	Method            string              `json:"method,omitempty"`
	ExpectedStatuses  []int64             `json:"expectedStatuses,omitempty"`
	RetriableStatuses []int64             `json:"retriableStatuses,omitempty"`
	ExpectedResponse  *HealthCheckPayload `json:"expectedResponse,omitempty"`
	RequestBody       *HealthCheckPayload `json:"requestBody,omitempty"`
}

// TCPHealthCheck is a TCP check: what to send and what to expect back.
type TCPHealthCheck struct {
	Send    *HealthCheckPayload `json:"send,omitempty"`
	Receive *HealthCheckPayload `json:"receive,omitempty"`
}

// GRPCHealthCheck is a gRPC health check of the named service ("" for the server).
type GRPCHealthCheck struct {
	ServiceName string `json:"serviceName,omitempty"`
}

// HealthCheckPayload is a payload given as text or bytes (at most one set; neither is an
// empty payload).
type HealthCheckPayload struct {
	Text   string `json:"text,omitempty"`
	Binary []byte `json:"binary,omitempty"`
}

// PassiveHealthCheck is outlier detection. MaxEjectionPercent 0 or below leaves Envoy's
// own; a nil ConsecutiveGatewayErrors or FailurePercentageThreshold leaves that detection
// off.
type PassiveHealthCheck struct {
	BaseEjectionTime               time.Duration `json:"baseEjectionTime"`
	Interval                       time.Duration `json:"interval"`
	SplitExternalLocalOriginErrors bool          `json:"splitExternalLocalOriginErrors,omitempty"`
	ConsecutiveLocalOriginFailures uint32        `json:"consecutiveLocalOriginFailures"`
	Consecutive5xxErrors           uint32        `json:"consecutive5xxErrors"`
	MaxEjectionPercent             int32         `json:"maxEjectionPercent"`
	ConsecutiveGatewayErrors       *uint32       `json:"consecutiveGatewayErrors,omitempty"`
	FailurePercentageThreshold     *uint32       `json:"failurePercentageThreshold,omitempty"`
	AlwaysEjectOneEndpoint         bool          `json:"alwaysEjectOneEndpoint,omitempty"`
}
