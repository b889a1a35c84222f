package xds

import (
	"sort"

	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	tracev3 "github.com/envoyproxy/go-control-plane/envoy/config/trace/v3"
	hcmv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/network/http_connection_manager/v3"
	resourcedetectorsv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/tracers/opentelemetry/resource_detectors/v3"
	samplersv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/tracers/opentelemetry/samplers/v3"
	tracingtypev3 "github.com/envoyproxy/go-control-plane/envoy/type/tracing/v3"
	typev3 "github.com/envoyproxy/go-control-plane/envoy/type/v3"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/wrapperspb"
	gwapiv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/egharness/egharness/translator/ir"
)

// The tracers EG v1.9 names (internal/xds/translator/tracing.go; Zipkin's name is EG's, with
// "traces").
const (
	openTelemetryTracer = "envoy.tracers.opentelemetry"
	zipkinTracer        = "envoy.traces.zipkin"
	datadogTracer       = "envoy.tracers.datadog"
)

// hcmTracing is the connection manager's tracing for the proxy's EnvoyProxy tracing, as EG's
// buildHCMTracing writes it: the provider (OpenTelemetry over gRPC to the tracing cluster,
// with its authority, headers, service name, resource attributes and sampler; Zipkin's
// JSON v2 endpoint; Datadog's collector), client sampling 0 unless given, overall 100 unless
// given, random sampling the sampling rate (100 when an OpenTelemetry sampler decides), the
// custom tags sorted by name, an upstream span, and the span names.
func hcmTracing(t *ir.Tracing) *hcmv3.HttpConnectionManager_Tracing {
	if t == nil {
		return nil
	}
	var name string
	var cfg proto.Message
	switch t.Provider {
	case ir.TracingProviderDatadog:
		name = datadogTracer
		cfg = &tracev3.DatadogConfig{ServiceName: t.ServiceName, CollectorCluster: t.Destination.Name}
	case ir.TracingProviderOpenTelemetry:
		name = openTelemetryTracer
		var metadata []*corev3.HeaderValue
		for _, h := range t.Headers {
			metadata = append(metadata, &corev3.HeaderValue{Key: h.Key, Value: h.Value})
		}
		cfg = &tracev3.OpenTelemetryConfig{
			GrpcService: &corev3.GrpcService{
				TargetSpecifier: &corev3.GrpcService_EnvoyGrpc_{EnvoyGrpc: &corev3.GrpcService_EnvoyGrpc{
					ClusterName: t.Destination.Name,
					Authority:   t.Authority,
				}},
				InitialMetadata: metadata,
			},
			ServiceName:       t.ServiceName,
			ResourceDetectors: resourceDetectors(t.ResourceAttributes),
			Sampler:           otelSampler(t.Sampler),
		}
	case ir.TracingProviderZipkin:
		name = zipkinTracer
		z := &tracev3.ZipkinConfig{
			CollectorCluster:         t.Destination.Name,
			CollectorEndpoint:        "/api/v2/spans",
			SharedSpanContext:        wrapperspb.Bool(true),
			CollectorEndpointVersion: tracev3.ZipkinConfig_HTTP_JSON,
		}
		z.TraceId_128Bit = t.Zipkin128BitTraceID
		z.SharedSpanContext = wrapperspb.Bool(!t.ZipkinNoSharedSpanContext)
		cfg = z
	default:
		return nil
	}
	client := 0.0
	if t.ClientSamplingRate != nil {
		client = *t.ClientSamplingRate
	}
	overall := 100.0
	if t.OverallSamplingRate != nil {
		overall = *t.OverallSamplingRate
	}
	random := t.SamplingRate
	if t.Provider == ir.TracingProviderOpenTelemetry && t.SamplerDecides {
		random = 100
	}
	out := &hcmv3.HttpConnectionManager_Tracing{
		ClientSampling:  &typev3.Percent{Value: client},
		OverallSampling: &typev3.Percent{Value: overall},
		RandomSampling:  &typev3.Percent{Value: random},
		Provider: &tracev3.Tracing_Http{
			Name:       name,
			ConfigType: &tracev3.Tracing_Http_TypedConfig{TypedConfig: mustAny(cfg)},
		},
		CustomTags:        customTags(t.CustomTags, t.Tags),
		SpawnUpstreamSpan: wrapperspb.Bool(true),
	}
	if s := t.SpanName; s != nil {
		out.Operation, out.UpstreamOperation = s.Client, s.Server
	}
	return out
}

// customTags are the spans' custom tags: literal, environment and request header ones, then
// plain tags (which replace a custom tag of their name), sorted by name.
func customTags(custom map[string]ir.TracingCustomTag, tags map[string]string) []*tracingtypev3.CustomTag {
	byName := map[string]*tracingtypev3.CustomTag{}
	for k, v := range custom {
		switch {
		case v.Literal != nil:
			byName[k] = &tracingtypev3.CustomTag{Tag: k,
				Type: &tracingtypev3.CustomTag_Literal_{Literal: &tracingtypev3.CustomTag_Literal{Value: *v.Literal}}}
		case v.Environment != nil:
			e := v.Environment
			byName[k] = &tracingtypev3.CustomTag{Tag: k,
				Type: &tracingtypev3.CustomTag_Environment_{Environment: &tracingtypev3.CustomTag_Environment{Name: e.Name,
					DefaultValue: e.Default}}}
		case v.RequestHeader != nil:
			h := v.RequestHeader
			byName[k] = &tracingtypev3.CustomTag{Tag: k,
				Type: &tracingtypev3.CustomTag_RequestHeader{RequestHeader: &tracingtypev3.CustomTag_Header{Name: h.Name,
					DefaultValue: h.Default}}}
		}
	}
	for k, v := range tags {
		byName[k] = &tracingtypev3.CustomTag{Tag: k, Type: &tracingtypev3.CustomTag_Value{Value: v}}
	}
	out := make([]*tracingtypev3.CustomTag, 0, len(byName))
	for _, t := range byName {
		out = append(out, t)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Tag < out[j].Tag })
	return out
}

// resourceDetectors gives an OpenTelemetry tracer its resource attributes through the static
// config resource detector.
func resourceDetectors(attrs map[string]string) []*corev3.TypedExtensionConfig {
	if len(attrs) == 0 {
		return nil
	}
	return []*corev3.TypedExtensionConfig{{
		Name:        "envoy.tracers.opentelemetry.resource_detectors.static_config",
		TypedConfig: mustAny(&resourcedetectorsv3.StaticConfigResourceDetectorConfig{Attributes: attrs}),
	}}
}

// otelSampler is an OpenTelemetry tracer's sampler: always on, or a trace ID ratio (100%
// without a percentage), wrapped in the parent based sampler when the type is ParentBased.
func otelSampler(s *ir.TracingSampler) *corev3.TypedExtensionConfig {
	if s == nil {
		return nil
	}
	sampler := ratioSampler(s.Ratio)
	if s.AlwaysOn {
		sampler = alwaysOnSampler()
	}
	if s.ParentBased {
		return parentBasedSampler(sampler)
	}
	return sampler
}

func alwaysOnSampler() *corev3.TypedExtensionConfig {
	return &corev3.TypedExtensionConfig{Name: "envoy.tracers.opentelemetry.samplers.always_on",
		TypedConfig: mustAny(&samplersv3.AlwaysOnSamplerConfig{})}
}

func ratioSampler(f *gwapiv1.Fraction) *corev3.TypedExtensionConfig {
	p := &typev3.FractionalPercent{Numerator: 100, Denominator: typev3.FractionalPercent_HUNDRED}
	if f != nil {
		p = fractionalPercent(f)
	}
	return &corev3.TypedExtensionConfig{Name: "envoy.tracers.opentelemetry.samplers.trace_id_ratio_based",
		TypedConfig: mustAny(&samplersv3.TraceIdRatioBasedSamplerConfig{SamplingPercentage: p})}
}

func parentBasedSampler(wrapped *corev3.TypedExtensionConfig) *corev3.TypedExtensionConfig {
	return &corev3.TypedExtensionConfig{Name: "envoy.tracers.opentelemetry.samplers.parent_based",
		TypedConfig: mustAny(&samplersv3.ParentBasedSamplerConfig{WrappedSampler: wrapped})}
}

// fractionalPercent is EG's fractionalpercent.FromFraction: denominators 100, 10000 and
// 1000000 as they are (none: 100), 1000 and 100000 scaled up by ten, others in millionths.
func fractionalPercent(f *gwapiv1.Fraction) *typev3.FractionalPercent {
	if f.Denominator == nil {
		return &typev3.FractionalPercent{Numerator: uint32(f.Numerator), Denominator: typev3.FractionalPercent_HUNDRED}
	}
	switch *f.Denominator {
	case 100:
		return &typev3.FractionalPercent{Numerator: uint32(f.Numerator), Denominator: typev3.FractionalPercent_HUNDRED}
	case 1000:
		return &typev3.FractionalPercent{Numerator: uint32(f.Numerator * 10),
			Denominator: typev3.FractionalPercent_TEN_THOUSAND}
	case 10000:
		return &typev3.FractionalPercent{Numerator: uint32(f.Numerator), Denominator: typev3.FractionalPercent_TEN_THOUSAND}
	case 100000:
		return &typev3.FractionalPercent{Numerator: uint32(f.Numerator * 10), Denominator: typev3.FractionalPercent_MILLION}
	case 1000000:
		return &typev3.FractionalPercent{Numerator: uint32(f.Numerator), Denominator: typev3.FractionalPercent_MILLION}
	}
	return &typev3.FractionalPercent{Numerator: uint32(int64(f.Numerator) * 1000000 / int64(*f.Denominator)),
		Denominator: typev3.FractionalPercent_MILLION}
}
