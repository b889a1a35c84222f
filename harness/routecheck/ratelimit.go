package routecheck

import (
	"fmt"
	"net/netip"
	"sort"
	"strings"

	routev3 "github.com/envoyproxy/go-control-plane/envoy/config/route/v3"
	localrlv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/http/local_ratelimit/v3"
	ratelimitv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/http/ratelimit/v3"
	"google.golang.org/protobuf/types/known/anypb"
)

// Rate limit filters act on a request when one of the route's rate limits produces a
// descriptor for it: the request then counts against a limit. The route checker does not
// count (it sends one request); it reports which limits the request is subject to, so a
// scenario can say that a policy's rate limit reaches (or misses) a route.
//
// envoy.filters.http.ratelimit reads the route's RateLimitPerRoute for the filter, whose
// rate limits and domain replace the route action's and the filter's; without one it reads
// the route action's rateLimits (EG v1.8's place for shared rules) in the filter's domain.
// envoy.filters.http.local_ratelimit acts on a route with its own LocalRateLimit: the
// route's bucket always, and the descriptors its rate limits produce.

// evalRateLimit reports what a ratelimit filter sends the rate limit service for the
// request: Mode is the domain, Outcome the descriptors. It never answers (the checker has
// no rate limit service): acting is false when no descriptor is produced.
func evalRateLimit(f httpFilterEntry, per *anypb.Any, rs *requestState, eff *FilterEffect) (bool, error) {
	domain := ""
	if f.cfg != nil {
		cfg := &ratelimitv3.RateLimit{}
		if err := f.cfg.UnmarshalTo(cfg); err != nil {
			return false, err
		}
		domain = cfg.GetDomain()
	}
	limits := rs.matched.rateLimits
	if per != nil {
		pr := &ratelimitv3.RateLimitPerRoute{}
		if err := per.UnmarshalTo(pr); err != nil {
			return false, err
		}
		if pr.GetDomain() != "" {
			domain = pr.GetDomain()
		}
		if len(pr.GetRateLimits()) > 0 {
			limits = pr.GetRateLimits()
		}
	}
	descs, err := descriptors(limits, rs)
	if err != nil || len(descs) == 0 {
		return false, err
	}
	eff.Mode, eff.Outcome = domain, strings.Join(descs, "; ")
	return true, nil
}

// evalLocalRateLimit reports the buckets a route's local rate limit takes a token from.
func evalLocalRateLimit(per *anypb.Any, rs *requestState, eff *FilterEffect) (bool, error) {
	if per == nil {
		return false, nil
	}
	cfg := &localrlv3.LocalRateLimit{}
	if err := per.UnmarshalTo(cfg); err != nil {
		return false, err
	}
	buckets := []string{}
	if b := cfg.GetTokenBucket(); b != nil {
		buckets = append(buckets, fmt.Sprintf("route %d/%s", b.GetMaxTokens(), b.GetFillInterval().AsDuration()))
	}
	descs, err := descriptors(cfg.GetRateLimits(), rs)
	if err != nil {
		return false, err
	}
	buckets = append(buckets, descs...)
	if len(buckets) == 0 {
		return false, nil
	}
	eff.Mode, eff.Outcome = "local", strings.Join(buckets, "; ")
	return true, nil
}

// descriptors evaluates rate limits' actions on the request: a rate limit whose actions
// all produce an entry yields one descriptor (its entries key=value joined by commas).
func descriptors(limits []*routev3.RateLimit, rs *requestState) ([]string, error) {
	var out []string
	for _, rl := range limits {
		if rl.GetStage().GetValue() != 0 {
			continue
		}
		var entries []string
		complete := true
		for _, a := range rl.GetActions() {
			e, ok, err := actionEntry(a, rs)
			if err != nil {
				return nil, err
			}
			if !ok {
				complete = false
				break
			}
			entries = append(entries, e)
		}
		if complete && len(entries) > 0 {
			out = append(out, strings.Join(entries, ","))
		}
	}
	sort.Strings(out)
	return out, nil
}

// actionEntry is the descriptor entry one action produces, if it produces one.
func actionEntry(a *routev3.RateLimit_Action, rs *requestState) (string, bool, error) {
	switch v := a.GetActionSpecifier().(type) {
	case *routev3.RateLimit_Action_GenericKey_:
		key := v.GenericKey.GetDescriptorKey()
		if key == "" {
			key = "generic_key"
		}
		return key + "=" + v.GenericKey.GetDescriptorValue(), true, nil
	case *routev3.RateLimit_Action_RequestHeaders_:
		val, ok := rs.headers[asciiLower(v.RequestHeaders.GetHeaderName())]
		if !ok {
			return "", false, nil
		}
		return v.RequestHeaders.GetDescriptorKey() + "=" + val, true, nil
	case *routev3.RateLimit_Action_HeaderValueMatch_:
		hv := v.HeaderValueMatch
		all := true
		for _, h := range hv.GetHeaders() {
			hm, err := compileHeaderMatcher(h)
			if err != nil {
				return "", false, err
			}
			if !hm.matches(rs.headers) {
				all = false
				break
			}
		}
		expect := hv.GetExpectMatch() == nil || hv.GetExpectMatch().GetValue()
		if all != expect {
			return "", false, nil
		}
		key := hv.GetDescriptorKey()
		if key == "" {
			key = "header_match"
		}
		return key + "=" + hv.GetDescriptorValue(), true, nil
	case *routev3.RateLimit_Action_RemoteAddressMatch_:
		ram := v.RemoteAddressMatch
		if rs.req.ClientIP == "" {
			return "", false, nil // the request names no client address
		}
		ip, err := netip.ParseAddr(rs.req.ClientIP)
		if err != nil {
			return "", false, fmt.Errorf("clientIP %q: %v", rs.req.ClientIP, err)
		}
		in := false
		for _, r := range ram.GetAddressMatcher().GetRanges() {
			p, err := netip.ParsePrefix(fmt.Sprintf("%s/%d", r.GetAddressPrefix(), r.GetPrefixLen().GetValue()))
			if err != nil {
				return "", false, fmt.Errorf("address range %s: %v", r.GetAddressPrefix(), err)
			}
			in = in || p.Contains(ip)
		}
		if in == ram.GetAddressMatcher().GetInvertMatch() {
			return "", false, nil
		}
		val := ram.GetDescriptorValue()
		if val == "%DOWNSTREAM_REMOTE_ADDRESS_WITHOUT_PORT%" {
			val = ip.String()
		}
		return ram.GetDescriptorKey() + "=" + val, true, nil
	case *routev3.RateLimit_Action_QueryParameters_:
		val, ok := parseQuery(rs.path)[v.QueryParameters.GetQueryParameterName()]
		if !ok {
			return "", false, nil
		}
		return v.QueryParameters.GetDescriptorKey() + "=" + val, true, nil
	case *routev3.RateLimit_Action_QueryParameterValueMatch_:
		qv := v.QueryParameterValueMatch
		params := parseQuery(rs.path)
		all := true
		for _, q := range qv.GetQueryParameters() {
			qm, err := compileQueryMatcher(q)
			if err != nil {
				return "", false, err
			}
			if !qm.matches(params) {
				all = false
				break
			}
		}
		expect := qv.GetExpectMatch() == nil || qv.GetExpectMatch().GetValue()
		if all != expect {
			return "", false, nil
		}
		return qv.GetDescriptorKey() + "=" + qv.GetDescriptorValue(), true, nil
	}
	return "", false, fmt.Errorf("%w: rate limit action %T", ErrUnsupported, a.GetActionSpecifier())
}
