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
	if c := bl.Request; c != nil {
		s.bandwidthFilter(bandwidthLimitRequestFilter)
		if err := setPerRoute(out, bandwidthLimitRequestFilter, &bwlimitv3.BandwidthLimit{
			StatPrefix: bandwidthLimitStatPrefix, EnableMode: bwlimitv3.BandwidthLimit_REQUEST,
			LimitKbps: wrapperspb.UInt64(c.KiBps),
		}); err != nil {
			return err
		}
	}
	if c := bl.Response; c != nil {
		s.bandwidthFilter(bandwidthLimitResponseFilter)
		if err := setPerRoute(out, bandwidthLimitResponseFilter, &bwlimitv3.BandwidthLimit{
			StatPrefix: bandwidthLimitStatPrefix, EnableMode: bwlimitv3.BandwidthLimit_RESPONSE,
			LimitKbps:              wrapperspb.UInt64(c.KiBps),
			EnableResponseTrailers: c.Trailers, ResponseTrailerPrefix: c.TrailerPrefix,
		}); err != nil {
			return err
		}
	}
	return nil
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
