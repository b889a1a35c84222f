package xds

import (
	routev3 "github.com/envoyproxy/go-control-plane/envoy/config/route/v3"
	bwlimitv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/http/bandwidth_limit/v3"
	"google.golang.org/protobuf/types/known/wrapperspb"

	"github.com/egharness/egharness/translator/ir"
)

// A BackendTrafficPolicy's bandwidthLimit: two bandwidth_limit filters on the connection
// manager, one for requests and one for responses, disabled there; each route with a limit
// turns the one it needs on with its own rate.

const (
	bandwidthLimitRequestFilter  = ir.FilterBandwidthLimit + "/request"
	bandwidthLimitResponseFilter = ir.FilterBandwidthLimit + "/response"
	bandwidthLimitStatPrefix     = "http_bandwidth_limiter"
)

// addBandwidthLimit configures the route's limits and records the filters they need.
func (s *httpFilterSet) addBandwidthLimit(out *routev3.Route, bl *ir.BandwidthLimit) error {
	if bl == nil {
		return nil
	}
	err := s.limitBandwidth(out, bandwidthLimitRequestFilter, bwlimitv3.BandwidthLimit_REQUEST, bl.Request)
	if err != nil {
		return err
	}
	return s.limitBandwidth(out, bandwidthLimitResponseFilter, bwlimitv3.BandwidthLimit_RESPONSE, bl.Response)
}

// limitBandwidth turns the listener filter of one direction (mode) on for the route with
// the rate of limit, and records the filter; a nil limit leaves that direction alone.
func (s *httpFilterSet) limitBandwidth(out *routev3.Route, filter string, mode bwlimitv3.BandwidthLimit_EnableMode,
	limit *ir.BandwidthLimitConfig) error {
	if limit == nil {
		return nil
	}
	s.bandwidthFilter(filter)
	perRoute := &bwlimitv3.BandwidthLimit{
		StatPrefix: bandwidthLimitStatPrefix, EnableMode: mode,
		LimitKbps: wrapperspb.UInt64(limit.KiBps),
	}
	if mode == bwlimitv3.BandwidthLimit_RESPONSE {
		// Only responses carry the delay trailers.
		perRoute.EnableResponseTrailers, perRoute.ResponseTrailerPrefix = limit.Trailers, limit.TrailerPrefix
	}
	return setPerRoute(out, filter, perRoute)
}

// bandwidthFilter records one of the two listener filters, limiting nothing by itself.
func (s *httpFilterSet) bandwidthFilter(name string) {
	if _, ok := s.named[name]; ok {
		return
	}
	f := typedFilter(name,
		&bwlimitv3.BandwidthLimit{StatPrefix: bandwidthLimitStatPrefix, EnableMode: bwlimitv3.BandwidthLimit_DISABLED})
	f.Disabled = true
	s.named[name] = f
}
