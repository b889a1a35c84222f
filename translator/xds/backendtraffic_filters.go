package xds

import (
	"errors"
	"slices"
	"strings"

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
	if r.Policies.BackendTrafficSettings == nil { // no BackendTrafficPolicy in force
		return nil
	}
	if fi := r.Policies.Fault; fi != nil {
		if err := s.addFault(out, fi); err != nil {
			return err
		}
	}
	for _, c := range r.Policies.Compressors {
		name := compressorFilterName(c.Type)
		if _, ok := s.named[name]; !ok {
			s.named[name] = compressorFilter(c)
		}
		// on for this route (the listener's filter is disabled), and the request's
		// accept-encoding removed so the backend does not compress too
		if err := setPerRoute(out, name,
			&compressorv3.CompressorPerRoute{Override: &compressorv3.CompressorPerRoute_Overrides{
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
	if rb := r.Policies.RequestBuffer; rb != nil {
		if rb.OutOfRange != "" {
			return errors.New(rb.OutOfRange)
		}
		buf := &bufferv3.Buffer{MaxRequestBytes: wrapperspb.UInt32(rb.MaxRequestBytes)}
		if _, ok := s.named[bufferFilter]; !ok {
			// the first route's limit on the listener, disabled there
			f := typedFilter(bufferFilter, buf)
			f.Disabled = true
			s.named[bufferFilter] = f
		}
		if err := setPerRoute(out, bufferFilter,
			&bufferv3.BufferPerRoute{Override: &bufferv3.BufferPerRoute_Buffer{Buffer: buf}}); err != nil {
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
func (s *httpFilterSet) addFault(out *routev3.Route, fi *ir.Fault) error {
	if _, ok := s.named[faultFilter]; !ok {
		s.named[faultFilter] = typedFilter(faultFilter, &faultv3.HTTPFault{})
	}
	cfg := &faultv3.HTTPFault{}
	if d := fi.Delay; d != nil {
		cfg.Delay = &faultcommonv3.FaultDelay{}
		if d.Percentage != nil {
			cfg.Delay.Percentage = millionths(*d.Percentage)
		}
		if d.Fixed != nil {
			cfg.Delay.FaultDelaySecifier = &faultcommonv3.FaultDelay_FixedDelay{FixedDelay: durationpb.New(*d.Fixed)}
		}
	}
	if a := fi.Abort; a != nil {
		cfg.Abort = &faultv3.FaultAbort{}
		if a.Percentage != nil {
			cfg.Abort.Percentage = millionths(*a.Percentage)
		}
		if a.HTTPStatus != nil {
			cfg.Abort.ErrorType = &faultv3.FaultAbort_HttpStatus{HttpStatus: *a.HTTPStatus}
		}
		if a.GRPCStatus != nil {
			cfg.Abort.ErrorType = &faultv3.FaultAbort_GrpcStatus{GrpcStatus: *a.GRPCStatus}
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

func compressorFilterName(t string) string {
	return "envoy.filters.http.compressor." + strings.ToLower(t)
}

// compressorFilter is the listener's compressor of one type, disabled until a route
// turns it on; the library has Envoy's defaults.
func compressorFilter(c ir.Compressor) *hcmv3.HttpFilter {
	var lib string
	var cfg proto.Message
	switch c.Type {
	case ir.CompressorBrotli:
		lib, cfg = "envoy.compression.brotli.compressor", &brotliv3.Brotli{}
	case ir.CompressorZstd:
		lib, cfg = "envoy.compression.zstd.compressor", &zstdv3.Zstd{}
	default:
		lib, cfg = "envoy.compression.gzip.compressor", &gzipv3.Gzip{}
	}
	comp := &compressorv3.Compressor{
		CompressorLibrary: &corev3.TypedExtensionConfig{Name: lib, TypedConfig: mustAny(cfg)},
		ChooseFirst:       c.ChooseFirst,
	}
	if c.MinContentLength != nil {
		comp.ResponseDirectionConfig = &compressorv3.Compressor_ResponseDirectionConfig{
			CommonConfig: &compressorv3.Compressor_CommonDirectionConfig{MinContentLength: wrapperspb.UInt32(
				*c.MinContentLength)},
		}
	}
	f := typedFilter(compressorFilterName(c.Type), comp)
	f.Disabled = true
	return f
}
