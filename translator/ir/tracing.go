package ir

import egv1a1 "github.com/envoyproxy/gateway/api/v1alpha1"

// Tracing is the tracing of a Gateway's proxy, from its EnvoyProxy's telemetry.tracing (EG
// v1.9 internal/gatewayapi/listener.go processTracing): every HTTP connection manager of the
// proxy reports its spans to the provider behind Destination.
type Tracing struct {
	// Provider is OpenTelemetry, Zipkin or Datadog.
	Provider string `json:"provider"`
	// Destination is the provider: named tracing, its backends (the provider's backendRefs,
	// or its host and port).
	Destination *Destination `json:"destination"`
	// Owner is the EnvoyProxy (the cluster's metadata).
	Owner PolicyRef `json:"owner"`
	// Authority is the :authority of an OpenTelemetry provider's export calls.
	Authority string `json:"authority,omitempty"`
	// ServiceName is the provider's serviceName, else <gateway name>.<gateway namespace>
	// (the GatewayClass's name with mergeGateways).
	ServiceName string `json:"serviceName"`
	// SamplingRate is the percentage of requests sampled (samplingRate, else
	// samplingFraction, else 100); Client and Overall the optional client and overall
	// sampling fractions as percentages.
	SamplingRate        float64  `json:"samplingRate"`
	ClientSamplingRate  *float64 `json:"clientSamplingRate,omitempty"`
	OverallSamplingRate *float64 `json:"overallSamplingRate,omitempty"`
	// CustomTags and Tags become the spans' custom tags (a tag replaces a custom tag of its
	// name), sorted by name.
	CustomTags map[string]egv1a1.CustomTag `json:"customTags,omitempty"`
	Tags       map[string]string           `json:"tags,omitempty"`
	// The OpenTelemetry provider's resource attributes, export headers and sampler.
	ResourceAttributes map[string]string             `json:"resourceAttributes,omitempty"`
	Headers            []KeyValue                    `json:"headers,omitempty"`
	Sampler            *egv1a1.OTelSampler           `json:"sampler,omitempty"`
	Zipkin             *egv1a1.ZipkinTracingProvider `json:"zipkin,omitempty"`
	SpanName           *egv1a1.TracingSpanName       `json:"spanName,omitempty"`
}
