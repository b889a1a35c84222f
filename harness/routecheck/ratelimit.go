package routecheck

import (
	"github.com/egharness/egharness/harness/ratelimitsvc"
	commonrlv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/common/ratelimit/v3"

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
// request: Mode is the domain, Outcome the descriptors. acting is false when no descriptor
// is produced. The service's answer is modelled only for a request sent After others: with
// the service's limits (Table.UseRateLimitService), a descriptor whose limit those requests
// and this one exceed makes the filter answer 429 (shadow-mode limits never do); without
// them that is ErrUnsupported. A single request is under any limit.
func evalRateLimit(f httpFilterEntry, per *anypb.Any, state *requestState, eff *FilterEffect) (bool, int, error) {
	domain := ""
	if f.cfg != nil {
		cfg := &ratelimitv3.RateLimit{}
		if err := f.cfg.UnmarshalTo(cfg); err != nil {
			return false, 0, err
		}
		domain = cfg.GetDomain()
	}
	limits := state.matched.rateLimits
	if per != nil {
		pr := &ratelimitv3.RateLimitPerRoute{}
		if err := per.UnmarshalTo(pr); err != nil {
			return false, 0, err
		}
		if pr.GetDomain() != "" {
			domain = pr.GetDomain()
		}
		if len(pr.GetRateLimits()) > 0 {
			limits = pr.GetRateLimits()
		}
	}
	descs, err := descriptorEntries(limits, state)
	if err != nil || len(descs) == 0 {
		return false, 0, err
	}
	eff.Mode, eff.Outcome = domain, joinDescriptors(descs)
	if state.req.After == 0 {
		return true, 0, nil
	}
	if state.rls == nil {
		return true, 0,
			fmt.Errorf("%w: a request after %d others on a global rate limit needs the rate limit service's limits",
				ErrUnsupported, state.req.After)
	}
	for _, d := range descs {
		lim, ok := state.rls.Lookup(domain, d.entries)
		if !ok || lim.Shadow || d.onDone {
			continue
		}
		if uint64(state.req.After+1)*d.hits > uint64(lim.Requests) {
			eff.Outcome += " (over the limit)"
			return true, 429, nil
		}
	}
	return true, 0, nil
}

// evalLocalRateLimit reports the buckets a route's local rate limit takes a token from.
// A request sent After others finds the route's bucket empty once those took its tokens
// (the bucket refills every fill interval; scenarios keep the requests well inside one):
// local_ratelimit answers 429. Counting a descriptor's bucket over requests is
// ErrUnsupported.
func evalLocalRateLimit(per *anypb.Any, state *requestState, eff *FilterEffect) (bool, int, error) {
	if per == nil {
		return false, 0, nil
	}
	cfg := &localrlv3.LocalRateLimit{}
	if err := per.UnmarshalTo(cfg); err != nil {
		return false, 0, err
	}
	buckets := []string{}
	b := cfg.GetTokenBucket()
	if b != nil {
		buckets = append(buckets, fmt.Sprintf("route %d/%s", b.GetMaxTokens(), b.GetFillInterval().AsDuration()))
	}
	descs, err := descriptorEntries(cfg.GetRateLimits(), state)
	if err != nil {
		return false, 0, err
	}
	for _, d := range descs {
		buckets = append(buckets, d.String())
	}
	if len(buckets) == 0 {
		return false, 0, nil
	}
	sort.Strings(buckets[min(1, len(buckets)):])
	eff.Mode, eff.Outcome = "local", strings.Join(buckets, "; ")
	if state.req.After == 0 {
		return true, 0, nil
	}
	if len(descs) > 0 {
		return true, 0,
			fmt.Errorf("%w: local rate limit descriptors counted over %d requests", ErrUnsupported, state.req.After)
	}
	if b != nil && state.req.After+1 > b.GetMaxTokens() {
		eff.Outcome += " (empty)"
		return true, 429, nil
	}
	return true, 0, nil
}

// descriptor is one descriptor a rate limit produces for the request, and the hits it adds.
type descriptor struct {
	entries []*commonrlv3.RateLimitDescriptor_Entry
	hits    uint64
	// onDone: sent when the stream completes (a response cost), after the answer.
	onDone bool
}

// String is the entries as key=value joined by commas.
func (d descriptor) String() string { return ratelimitsvc.DescriptorString(d.entries) }

func joinDescriptors(ds []descriptor) string {
	out := make([]string, len(ds))
	for i, d := range ds {
		out[i] = d.String()
	}
	sort.Strings(out)
	return strings.Join(out, "; ")
}

// descriptorEntries evaluates rate limits' actions on the request: a rate limit whose
// actions all produce an entry yields one descriptor.
func descriptorEntries(limits []*routev3.RateLimit, state *requestState) ([]descriptor, error) {
	var out []descriptor
	for _, rl := range limits {
		if rl.GetStage().GetValue() != 0 {
			continue
		}
		var entries []*commonrlv3.RateLimitDescriptor_Entry
		complete := true
		for _, a := range rl.GetActions() {
			e, ok, err := actionEntry(a, state)
			if err != nil {
				return nil, err
			}
			if !ok {
				complete = false
				break
			}
			k, v, _ := strings.Cut(e, "=")
			entries = append(entries, &commonrlv3.RateLimitDescriptor_Entry{Key: k, Value: v})
		}
		if complete && len(entries) > 0 {
			hits := uint64(1)
			if n := rl.GetHitsAddend().GetNumber().GetValue(); n > 0 {
				hits = n
			}
			out = append(out, descriptor{entries: entries, hits: hits, onDone: rl.GetApplyOnStreamDone()})
		}
	}
	return out, nil
}

// actionEntry is the descriptor entry one action produces, if it produces one.
func actionEntry(a *routev3.RateLimit_Action, state *requestState) (string, bool, error) {
	switch v := a.GetActionSpecifier().(type) {
	case *routev3.RateLimit_Action_GenericKey_:
		key := v.GenericKey.GetDescriptorKey()
		if key == "" {
			key = "generic_key"
		}
		return key + "=" + v.GenericKey.GetDescriptorValue(), true, nil
	case *routev3.RateLimit_Action_RequestHeaders_:
		val, ok := state.headers[asciiLower(v.RequestHeaders.GetHeaderName())]
		if !ok {
			return "", false, nil
		}
		return v.RequestHeaders.GetDescriptorKey() + "=" + val, true, nil
	case *routev3.RateLimit_Action_HeaderValueMatch_:
		hv := v.HeaderValueMatch
		all, err := allHeadersMatch(hv.GetHeaders(), state.headers)
		if err != nil {
			return "", false, err
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
		if state.req.ClientIP == "" {
			return "", false, nil // the request names no client address
		}
		ip, err := netip.ParseAddr(state.req.ClientIP)
		if err != nil {
			return "", false, fmt.Errorf("clientIP %q: %v", state.req.ClientIP, err)
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
		val, ok := parseQuery(state.path)[v.QueryParameters.GetQueryParameterName()]
		if !ok {
			return "", false, nil
		}
		return v.QueryParameters.GetDescriptorKey() + "=" + val, true, nil
	case *routev3.RateLimit_Action_QueryParameterValueMatch_:
		qv := v.QueryParameterValueMatch
		params := parseQuery(state.path)
		all := true
		for _, q := range qv.GetQueryParameters() {
			queryMatch, err := compileQueryMatcher(q)
			if err != nil {
				return "", false, err
			}
			if !queryMatch.matches(params) {
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
