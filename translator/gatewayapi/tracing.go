package gatewayapi

import (
	egv1a1 "github.com/envoyproxy/gateway/api/v1alpha1"
	gwapiv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/egharness/egharness/translator/ir"
)

// The parts of an EnvoyProxy's telemetry.tracing that become typed IR values here, so that
// the xDS stage reads no EG API type: custom tags, the OpenTelemetry sampler, Zipkin's
// switches and the span names.

// tracingCustomTags keeps each custom tag by what its type names; a tag whose type names a
// value it does not carry gets no tag, as EG's buildTracingTags leaves it out.
func tracingCustomTags(custom map[string]egv1a1.CustomTag) map[string]ir.TracingCustomTag {
	if custom == nil {
		return nil
	}
	out := make(map[string]ir.TracingCustomTag, len(custom))
	for name, tag := range custom {
		switch tag.Type {
		case egv1a1.CustomTagTypeLiteral:
			if tag.Literal != nil {
				value := tag.Literal.Value
				out[name] = ir.TracingCustomTag{Literal: &value}
			}
		case egv1a1.CustomTagTypeEnvironment:
			if e := tag.Environment; e != nil {
				out[name] = ir.TracingCustomTag{Environment: &ir.TracingTagSource{Name: e.Name, Default: valueOr(e.DefaultValue)}}
			}
		case egv1a1.CustomTagTypeRequestHeader:
			if h := tag.RequestHeader; h != nil {
				out[name] = ir.TracingCustomTag{RequestHeader: &ir.TracingTagSource{Name: h.Name, Default: valueOr(h.DefaultValue)}}
			}
		}
	}
	return out
}

// tracingSampler is an OpenTelemetry sampler type as Envoy's samplers express it: always
// off is a 0% trace ID ratio; nil for a type with no Envoy sampler.
func tracingSampler(s *egv1a1.OTelSampler) *ir.TracingSampler {
	never := &gwapiv1.Fraction{Numerator: 0}
	switch s.Type {
	case egv1a1.OTelSamplerTypeAlwaysOn:
		return &ir.TracingSampler{AlwaysOn: true}
	case egv1a1.OTelSamplerTypeAlwaysOff:
		return &ir.TracingSampler{Ratio: never}
	case egv1a1.OTelSamplerTypeTraceIDRatio:
		return &ir.TracingSampler{Ratio: s.SamplingPercentage}
	case egv1a1.OTelSamplerTypeParentBasedAlwaysOn:
		return &ir.TracingSampler{AlwaysOn: true, ParentBased: true}
	case egv1a1.OTelSamplerTypeParentBasedAlwaysOff:
		return &ir.TracingSampler{Ratio: never, ParentBased: true}
	case egv1a1.OTelSamplerTypeParentBasedTraceIDRatio:
		return &ir.TracingSampler{Ratio: s.SamplingPercentage, ParentBased: true}
	}
	return nil
}

// setZipkin copies the Zipkin provider's two switches (unset is false).
func setZipkin(out *ir.Tracing, z *egv1a1.ZipkinTracingProvider) {
	if z == nil {
		return
	}
	out.Zipkin128BitTraceID = z.Enable128BitTraceID != nil && *z.Enable128BitTraceID
	out.ZipkinNoSharedSpanContext = z.DisableSharedSpanContext != nil && *z.DisableSharedSpanContext
}

// tracingSpanName is the client and server span names, when given.
func tracingSpanName(s *egv1a1.TracingSpanName) *ir.TracingSpanName {
	if s == nil {
		return nil
	}
	return &ir.TracingSpanName{Client: s.Client, Server: s.Server}
}

// valueOr is *s, or "" when unset.
func valueOr(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}
