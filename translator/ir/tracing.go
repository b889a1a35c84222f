package ir

import (
	egv1a1 "github.com/envoyproxy/gateway/api/v1alpha1"
	gwapiv1 "sigs.k8s.io/gateway-api/apis/v1"
)

// The tracing providers, as EG spells them in Tracing.Provider.
const (
	TracingProviderOpenTelemetry = string(egv1a1.TracingProviderTypeOpenTelemetry)
	TracingProviderZipkin        = string(egv1a1.TracingProviderTypeZipkin)
	TracingProviderDatadog       = string(egv1a1.TracingProviderTypeDatadog)
)

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
	// name), sorted by name. A custom tag whose type names a value it does not carry is
	// left out.
	CustomTags map[string]TracingCustomTag `json:"customTags,omitempty"`
	Tags       map[string]string           `json:"tags,omitempty"`
	// The OpenTelemetry provider's resource attributes, export headers and sampler.
	ResourceAttributes map[string]string `json:"resourceAttributes,omitempty"`
	Headers            []KeyValue        `json:"headers,omitempty"`
	// SamplerDecides is set when the OpenTelemetry provider names a sampler: the sampler,
	// not the random sampling rate, decides (the rate becomes 100). Sampler is that sampler,
	// nil for a type Envoy has no sampler for.
	SamplerDecides bool            `json:"samplerDecides,omitempty"`
	Sampler        *TracingSampler `json:"sampler,omitempty"`
	// The Zipkin provider's 128-bit trace IDs, and its shared span context turned off.
	Zipkin128BitTraceID       bool `json:"zipkin128BitTraceID,omitempty"`
	ZipkinNoSharedSpanContext bool `json:"zipkinNoSharedSpanContext,omitempty"`
	// SpanName names the client and server spans (the operation and upstream operation).
	SpanName *TracingSpanName `json:"spanName,omitempty"`
}

// TracingCustomTag is one custom tag: a literal value, or the value of an environment
// variable or request header (Source), with its default.
type TracingCustomTag struct {
	Literal       *string           `json:"literal,omitempty"`
	Environment   *TracingTagSource `json:"environment,omitempty"`
	RequestHeader *TracingTagSource `json:"requestHeader,omitempty"`
}

// TracingTagSource is the environment variable or request header a tag reads, and the
// value when it is absent.
type TracingTagSource struct {
	Name    string `json:"name"`
	Default string `json:"default,omitempty"`
}

// TracingSampler is an OpenTelemetry sampler: every trace (AlwaysOn) or a trace ID ratio
// (Ratio, nil for 100%), inside the parent based sampler when ParentBased.
type TracingSampler struct {
	AlwaysOn    bool              `json:"alwaysOn,omitempty"`
	Ratio       *gwapiv1.Fraction `json:"ratio,omitempty"`
	ParentBased bool              `json:"parentBased,omitempty"`
}

// TracingSpanName is the name of the client span and of the server (upstream) span.
type TracingSpanName struct {
	Client string `json:"client"`
	Server string `json:"server"`
}
