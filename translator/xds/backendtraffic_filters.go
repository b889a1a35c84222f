package xds

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	egv1a1 "github.com/envoyproxy/gateway/api/v1alpha1"
	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	routev3 "github.com/envoyproxy/go-control-plane/envoy/config/route/v3"
	brotliv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/compression/brotli/compressor/v3"
	gzipv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/compression/gzip/compressor/v3"
	zstdv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/compression/zstd/compressor/v3"
	faultcommonv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/common/fault/v3"
	bufferv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/http/buffer/v3"
	compressorv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/http/compressor/v3"
	faultv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/http/fault/v3"
	hcmv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/network/http_connection_manager/v3"
	typev3 "github.com/envoyproxy/go-control-plane/envoy/type/v3"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/durationpb"
	"google.golang.org/protobuf/types/known/wrapperspb"

	"github.com/egharness/egharness/translator/ir"
)

// The HTTP filters of a route's BackendTrafficPolicy (BTP-02), as EG v1.9 builds them
// (internal/xds/translator/fault.go, compressor.go, request_buffer.go): each filter is put
// on the connection manager once when any route needs it and configured per route.
const (
	faultFilter  = "envoy.filters.http.fault"
	bufferFilter = "envoy.filters.http.buffer"
)

// addTraffic configures the route for the traffic filters of its BackendTrafficPolicy.
func (s *httpFilterSet) addTraffic(out *routev3.Route, r *ir.HTTPRoute) error {
	bt := r.Policies.BackendTraffic
	if bt == nil || bt.Spec == nil {
		return nil
	}
	spec := bt.Spec
	if fi := spec.FaultInjection; fi != nil {
		if err := s.addFault(out, fi); err != nil {
			return err
		}
	}
	for _, c := range compressors(spec.Compression, spec.Compressor) {
		name := compressorFilterName(c.kind)
		if _, ok := s.named[name]; !ok {
			s.named[name] = compressorFilter(c)
		}
		// on for this route (the listener's filter is disabled), and the request's
		// accept-encoding removed so the backend does not compress too
		if err := setPerRoute(out, name, &compressorv3.CompressorPerRoute{Override: &compressorv3.CompressorPerRoute_Overrides{
			Overrides: &compressorv3.CompressorOverrides{ResponseDirectionConfig: &compressorv3.ResponseDirectionOverrides{}},
		}}); err != nil {
			return err
		}
		if !slices.Contains(out.RequestHeadersToRemove, "accept-encoding") {
			out.RequestHeadersToRemove = append(out.RequestHeadersToRemove, "accept-encoding")
		}
	}
	if err := s.addResponseOverride(out, r); err != nil {
		return err
	}
	if rb := spec.RequestBuffer; rb != nil {
		limit, ok := rb.Limit.AsInt64()
		if !ok || limit < 0 || limit > math.MaxUint32 {
			return fmt.Errorf("requestBuffer: limit %s is out of range, must be between 0 and %d", rb.Limit.String(), uint32(math.MaxUint32))
		}
		buf := &bufferv3.Buffer{MaxRequestBytes: wrapperspb.UInt32(uint32(limit))}
		if _, ok := s.named[bufferFilter]; !ok {
			// the first route's limit on the listener, disabled there
			f := typedFilter(bufferFilter, buf)
			f.Disabled = true
			s.named[bufferFilter] = f
		}
		if err := setPerRoute(out, bufferFilter, &bufferv3.BufferPerRoute{Override: &bufferv3.BufferPerRoute_Buffer{Buffer: buf}}); err != nil {
			return err
		}
		// A buffered request cannot upgrade (the filter waits for the whole body): EG
		// drops the route's WebSocket upgrade.
		if ra := out.GetRoute(); ra != nil {
			ra.UpgradeConfigs = nil
		}
	}
	return nil
}

// addFault puts the fault filter on the listener (enabled, with no fault of its own) and
// the policy's delay and abort on the route.
func (s *httpFilterSet) addFault(out *routev3.Route, fi *egv1a1.FaultInjection) error {
	if _, ok := s.named[faultFilter]; !ok {
		s.named[faultFilter] = typedFilter(faultFilter, &faultv3.HTTPFault{})
	}
	cfg := &faultv3.HTTPFault{}
	if d := fi.Delay; d != nil {
		cfg.Delay = &faultcommonv3.FaultDelay{}
		if d.Percentage != nil {
			cfg.Delay.Percentage = millionths(*d.Percentage)
		}
		if d.FixedDelay != nil {
			v, err := time.ParseDuration(string(*d.FixedDelay))
			if err != nil {
				// EG drops the whole fault injection of a policy whose delay does not parse
				return nil
			}
			cfg.Delay.FaultDelaySecifier = &faultcommonv3.FaultDelay_FixedDelay{FixedDelay: durationpb.New(v)}
		}
	}
	if a := fi.Abort; a != nil {
		cfg.Abort = &faultv3.FaultAbort{}
		if a.Percentage != nil {
			cfg.Abort.Percentage = millionths(*a.Percentage)
		}
		if a.HTTPStatus != nil {
			cfg.Abort.ErrorType = &faultv3.FaultAbort_HttpStatus{HttpStatus: uint32(*a.HTTPStatus)}
		}
		if a.GrpcStatus != nil {
			cfg.Abort.ErrorType = &faultv3.FaultAbort_GrpcStatus{GrpcStatus: uint32(*a.GrpcStatus)}
		}
	}
	if cfg.Delay == nil && cfg.Abort == nil {
		return nil
	}
	return setPerRoute(out, faultFilter, cfg)
}

// millionths is a percentage (accurate to 0.0001%) as Envoy's fraction of a million.
func millionths(p float32) *typev3.FractionalPercent {
	return &typev3.FractionalPercent{Numerator: uint32(p * 10000), Denominator: typev3.FractionalPercent_MILLION}
}

type compression struct {
	kind        egv1a1.CompressorType
	chooseFirst bool
	minLength   *uint32
}

// compressors are the policy's compressors: spec.compressor when it lists any (an entry
// counts only with its type's settings, e.g. gzip: {}), else the deprecated
// spec.compression; the first one is chosen first when a client accepts several.
func compressors(deprecated, current []*egv1a1.Compression) []compression {
	list, needSettings := current, true
	if len(current) == 0 {
		list, needSettings = deprecated, false
	}
	var out []compression
	for i, c := range list {
		if c == nil {
			continue
		}
		if needSettings && !((c.Type == egv1a1.GzipCompressorType && c.Gzip != nil) ||
			(c.Type == egv1a1.BrotliCompressorType && c.Brotli != nil) ||
			(c.Type == egv1a1.ZstdCompressorType && c.Zstd != nil)) {
			continue
		}
		cp := compression{kind: c.Type, chooseFirst: i == 0}
		if c.MinContentLength != nil {
			if v, ok := c.MinContentLength.AsInt64(); ok {
				n := uint32(v)
				cp.minLength = &n
			}
		}
		out = append(out, cp)
	}
	return out
}

func compressorFilterName(t egv1a1.CompressorType) string {
	return "envoy.filters.http.compressor." + strings.ToLower(string(t))
}

// compressorFilter is the listener's compressor of one type, disabled until a route
// turns it on; the library has Envoy's defaults.
func compressorFilter(c compression) *hcmv3.HttpFilter {
	var lib string
	var cfg proto.Message
	switch c.kind {
	case egv1a1.BrotliCompressorType:
		lib, cfg = "envoy.compression.brotli.compressor", &brotliv3.Brotli{}
	case egv1a1.ZstdCompressorType:
		lib, cfg = "envoy.compression.zstd.compressor", &zstdv3.Zstd{}
	default:
		lib, cfg = "envoy.compression.gzip.compressor", &gzipv3.Gzip{}
	}
	comp := &compressorv3.Compressor{
		CompressorLibrary: &corev3.TypedExtensionConfig{Name: lib, TypedConfig: mustAny(cfg)},
		ChooseFirst:       c.chooseFirst,
	}
	if c.minLength != nil {
		comp.ResponseDirectionConfig = &compressorv3.Compressor_ResponseDirectionConfig{
			CommonConfig: &compressorv3.Compressor_CommonDirectionConfig{MinContentLength: wrapperspb.UInt32(*c.minLength)},
		}
	}
	f := typedFilter(compressorFilterName(c.kind), comp)
	f.Disabled = true
	return f
}
