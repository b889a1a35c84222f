package xds

import (
	"time"

	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	routev3 "github.com/envoyproxy/go-control-plane/envoy/config/route/v3"
	commonrlv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/common/ratelimit/v3"
	localrlv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/http/local_ratelimit/v3"
	hcmv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/network/http_connection_manager/v3"
	typev3 "github.com/envoyproxy/go-control-plane/envoy/type/v3"
	"google.golang.org/protobuf/types/known/durationpb"
	"google.golang.org/protobuf/types/known/wrapperspb"

	"github.com/egharness/egharness/translator/ir"
)

// Local rate limiting (BTP-02): the connection manager carries one
// envoy.filters.http.local_ratelimit filter without buckets; each rate-limited route
// configures its own through typedPerFilterConfig: the route's default bucket, and a
// descriptor with a bucket per rule with client selectors.

const (
	localRateLimitFilter     = ir.FilterLocalRateLimit
	localRateLimitStatPrefix = "http_local_rate_limiter"
	localMaxDescriptors      = 10000
)

func localRateLimitHCMFilter() *hcmv3.HttpFilter {
	return typedFilter(localRateLimitFilter, &localrlv3.LocalRateLimit{
		StatPrefix:            localRateLimitStatPrefix,
		MaxDynamicDescriptors: u32(localMaxDescriptors),
	})
}

// addLocalRateLimit configures a forwarding route's local buckets.
func (s *httpFilterSet) addLocalRateLimit(out *routev3.Route, r *ir.HTTPRoute, l *ir.HTTPListener) error {
	if r.RateLimit == nil || r.RateLimit.Local == nil {
		return nil
	}
	s.local = true
	if out.GetRoute() == nil {
		return nil
	}
	local := r.RateLimit.Local
	headers := commonrlv3.XRateLimitHeadersRFCVersion_DRAFT_VERSION_03
	if local.DefaultXRateLimitHeaders == ir.XRateLimitHeadersOff {
		headers = commonrlv3.XRateLimitHeadersRFCVersion_OFF
	}
	if _, off := listenerHeaderSettings(l); off {
		headers = commonrlv3.XRateLimitHeadersRFCVersion_OFF
	}
	hundred := &corev3.RuntimeFractionalPercent{DefaultValue: &typev3.FractionalPercent{Numerator: 100,
		Denominator: typev3.FractionalPercent_HUNDRED}}
	cfg := &localrlv3.LocalRateLimit{
		StatPrefix:                      localRateLimitStatPrefix,
		TokenBucket:                     tokenBucket(local.Default),
		FilterEnabled:                   hundred,
		FilterEnforced:                  hundred,
		EnableXRatelimitHeaders:         headers,
		AlwaysConsumeDefaultTokenBucket: wrapperspb.Bool(false),
		Descriptors:                     []*commonrlv3.LocalRateLimitDescriptor{},
		RateLimits:                      []*routev3.RateLimit{},
	}
	for i, rule := range local.Rules {
		methods := rule.Methods
		if len(methods) == 0 {
			methods = []*ir.RateLimitMatch{nil}
		}
		for _, m := range methods {
			actions := ruleActions(rule, i, m, true)
			cfg.RateLimits = append(cfg.RateLimits,
				&routev3.RateLimit{Actions: actions, XRatelimitOption: xRateLimitOption(rule.XRateLimitHeaders)})
			cfg.Descriptors = append(cfg.Descriptors, &commonrlv3.LocalRateLimitDescriptor{
				Entries:     descriptorEntries(actions),
				TokenBucket: tokenBucket(rule.Limit),
				ShadowMode:  rule.ShadowMode,
			})
		}
	}
	return setPerRoute(out, localRateLimitFilter, cfg)
}

// descriptorEntries are the entries the actions produce: a fixed value where the action
// has one, only the key where each request's value counts apart (distinct headers, query
// parameters and client addresses).
func descriptorEntries(actions []*routev3.RateLimit_Action) []*commonrlv3.RateLimitDescriptor_Entry {
	out := make([]*commonrlv3.RateLimitDescriptor_Entry, 0, len(actions))
	for _, a := range actions {
		e := &commonrlv3.RateLimitDescriptor_Entry{}
		switch v := a.ActionSpecifier.(type) {
		case *routev3.RateLimit_Action_RequestHeaders_:
			e.Key = v.RequestHeaders.DescriptorKey
		case *routev3.RateLimit_Action_HeaderValueMatch_:
			e.Key, e.Value = v.HeaderValueMatch.DescriptorKey, v.HeaderValueMatch.DescriptorValue
		case *routev3.RateLimit_Action_QueryParameters_:
			e.Key = v.QueryParameters.DescriptorKey
		case *routev3.RateLimit_Action_QueryParameterValueMatch_:
			e.Key, e.Value = v.QueryParameterValueMatch.DescriptorKey, v.QueryParameterValueMatch.DescriptorValue
		case *routev3.RateLimit_Action_RemoteAddressMatch_:
			e.Key = v.RemoteAddressMatch.DescriptorKey
			if v.RemoteAddressMatch.DescriptorValue != remoteAddressFormatter {
				e.Value = v.RemoteAddressMatch.DescriptorValue
			}
		}
		out = append(out, e)
	}
	return out
}

func tokenBucket(v ir.RateLimitValue) *typev3.TokenBucket {
	return &typev3.TokenBucket{
		MaxTokens:     v.Requests,
		TokensPerFill: u32(v.Requests),
		FillInterval:  durationpb.New(time.Duration(v.Seconds) * time.Second),
	}
}
