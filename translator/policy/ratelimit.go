package policy

import (
	"errors"
	"fmt"
	"math"
	"net"
	"regexp"
	"strings"

	egv1a1 "github.com/envoyproxy/gateway/api/v1alpha1"
	gwapiv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/egharness/egharness/translator/ir"
)

// A BackendTrafficPolicy's rateLimit, built into ir.RateLimit (BTP-02, BTP-03, MRG-06).
// EG names every rule after the policy that declares it (<namespace>/<name>/rule/<index>);
// a shared global rule counts in a domain of that policy's own, so after a merge each rule
// must keep its own policy's name, which the merged spec alone cannot say.

// errGlobalRateLimitOff is EG's refusal of global rules while its configuration names no
// rate limit service.
var errGlobalRateLimitOff = errors.New("enable Ratelimit in the EnvoyGateway config to configure global rateLimit")

// validateRateLimit is the verdict on an effective BackendTrafficPolicy spec: EG reports a
// rateLimit it cannot build as "RateLimit: <why>".
func validateRateLimit(spec *egv1a1.BackendTrafficPolicySpec, globalOn bool) error {
	if spec == nil || spec.RateLimit == nil {
		return nil
	}
	if _, err := buildRateLimit(ir.PolicyRef{}, spec.RateLimit, globalOn); err != nil {
		return fmt.Errorf("RateLimit: %w", err)
	}
	return nil
}

// resolveRateLimits puts on every HTTP route the rate limits (and bandwidth limits) of the
// BackendTrafficPolicy in force there. A policy whose rateLimit, bandwidthLimit or
// requestBuffer cannot be built, or whose byte quantities are out of range, leaves its routes
// answering 500
// without any of the policy's traffic features, as EG does; its status says why (the
// engine's validate hook). specs are the policies' own specs, by policy.
func resolveRateLimits(x *ir.XDS, specs map[ir.PolicyRef]*pol[egv1a1.BackendTrafficPolicySpec], globalOn bool) {
	for _, l := range x.HTTP {
		for _, r := range l.Routes {
			a := r.Policies.BackendTraffic
			if a == nil || a.Spec == nil {
				continue
			}
			bl, blErr := buildBandwidthLimit(a.Spec.BandwidthLimit)
			if validateRateLimit(a.Spec, globalOn) != nil || blErr != nil || validateRequestBuffer(a.Spec) != nil ||
				validateQuantities(a.Spec) != nil {
				r.DirectResponse = &ir.DirectResponse{Status: 500}
				r.Policies.BackendTraffic = nil
				continue
			}
			r.RateLimit = effectiveRateLimit(a, specs, globalOn)
			r.BandwidthLimit = bl
		}
	}
}

// effectiveRateLimit is the route's rate limiting. Without a merge it is the policy's own.
// After a merge EG builds the parent's and the child's rules apart, each named after its
// policy, and merges those with the child's mergeType; when only the parent has a
// rateLimit, the parent's rules keep the parent's name.
func effectiveRateLimit(a *ir.Applied[egv1a1.BackendTrafficPolicySpec],
	specs map[ir.PolicyRef]*pol[egv1a1.BackendTrafficPolicySpec], globalOn bool) *ir.RateLimit {
	own := func() *ir.RateLimit {
		if a.Spec.RateLimit == nil {
			return nil
		}
		rl, _ := buildRateLimit(a.Policy, a.Spec.RateLimit, globalOn)
		return rl
	}
	if len(a.MergedWith) == 0 {
		return own()
	}
	child, parent := specs[a.Policy], specs[a.MergedWith[0]]
	if child == nil || parent == nil || child.mergeType == nil {
		return own()
	}
	build := func(p *pol[egv1a1.BackendTrafficPolicySpec]) *ir.RateLimit {
		rl, err := buildRateLimit(p.ref, p.spec.RateLimit, globalOn)
		if err != nil {
			return nil
		}
		return rl
	}
	switch {
	case child.spec.RateLimit != nil && parent.spec.RateLimit != nil:
		pr, cr := build(parent), build(child)
		if pr == nil || cr == nil {
			return own()
		}
		return mergeRateLimits(pr, cr, *child.mergeType)
	case child.spec.RateLimit == nil && parent.spec.RateLimit != nil:
		if pr := build(parent); pr != nil {
			return pr
		}
	}
	return own()
}

// mergeRateLimits merges a child's built rate limits into its parent's. Strategic merge
// joins the rule lists by rule name, the child's rules first; JSON merge replaces a list
// the child sets. The child's local default bucket wins; its X-RateLimit setting for that
// bucket wins when it has one. A side without rules leaves the other's.
func mergeRateLimits(parent, child *ir.RateLimit, mt egv1a1.MergeType) *ir.RateLimit {
	out := &ir.RateLimit{Global: mergeRules(parent.Global, child.Global, mt)}
	switch {
	case child.Local == nil:
		out.Local = parent.Local
	case parent.Local == nil:
		out.Local = child.Local
	default:
		l := *child.Local
		if l.DefaultXRateLimitHeaders == "" {
			l.DefaultXRateLimitHeaders = parent.Local.DefaultXRateLimitHeaders
		}
		l.Rules = mergeRules(parent.Local.Rules, child.Local.Rules, mt)
		out.Local = &l
	}
	return out
}

func mergeRules(parent, child []*ir.RateLimitRule, mt egv1a1.MergeType) []*ir.RateLimitRule {
	if len(child) == 0 {
		return parent
	}
	if len(parent) == 0 || mt == egv1a1.JSONMerge {
		return child
	}
	out := append([]*ir.RateLimitRule{}, child...)
	seen := map[string]bool{}
	for _, r := range child {
		seen[r.Name] = true
	}
	for _, r := range parent {
		if !seen[r.Name] {
			out = append(out, r)
		}
	}
	return out
}

// buildRateLimit builds a policy's rateLimit: the deprecated type picks one of global and
// local, otherwise both are built when set.
func buildRateLimit(ref ir.PolicyRef, spec *egv1a1.RateLimitSpec, globalOn bool) (*ir.RateLimit, error) {
	out := &ir.RateLimit{}
	doGlobal, doLocal := spec.Global != nil, spec.Local != nil
	if spec.Type != nil {
		switch *spec.Type {
		case egv1a1.GlobalRateLimitType:
			doGlobal, doLocal = true, false
		case egv1a1.LocalRateLimitType:
			doGlobal, doLocal = false, true
		default:
			return nil, fmt.Errorf("invalid rateLimit type: %s", *spec.Type)
		}
	}
	if doLocal {
		l, err := buildLocal(ref, spec.Local)
		if err != nil {
			return nil, err
		}
		out.Local = l
	}
	if doGlobal {
		if spec.Global == nil {
			return nil, errors.New("global configuration empty for rateLimit")
		}
		if !globalOn {
			return nil, errGlobalRateLimitOff
		}
		for i := range spec.Global.Rules {
			r, err := buildRule(&spec.Global.Rules[i])
			if err != nil {
				return nil, err
			}
			r.Name = ruleName(ref, i)
			out.Global = append(out.Global, r)
		}
	}
	return out, nil
}

// buildLocal builds the local token buckets. Envoy's local rate limit needs a bucket for
// the whole route: the one rule without client selectors, or an unlimited one. Every
// rule's unit must be a multiple of that bucket's.
func buildLocal(ref ir.PolicyRef, spec *egv1a1.LocalRateLimit) (*ir.LocalRateLimit, error) {
	if spec == nil {
		return nil, errors.New("local configuration empty for rateLimit")
	}
	out := &ir.LocalRateLimit{}
	haveDefault := false
	for _, r := range spec.Rules {
		if len(r.ClientSelectors) > 0 {
			continue
		}
		if haveDefault {
			return nil, errors.New("local rateLimit can not have more than one rule without clientSelectors")
		}
		haveDefault = true
		out.Default = limitValue(r.Limit)
		if r.XRateLimitHeaders != nil {
			out.DefaultXRateLimitHeaders = string(*r.XRateLimitHeaders)
		}
	}
	if !haveDefault {
		out.Default = ir.RateLimitValue{Requests: math.MaxUint32, Unit: string(egv1a1.RateLimitUnitSecond), Seconds: 1}
	}
	for _, r := range spec.Rules {
		s := unitSeconds(r.Limit.Unit)
		if out.Default.Seconds == 0 || s%out.Default.Seconds != 0 {
			return nil, errors.New("local rateLimit rule limit unit must be a multiple of the default limit unit")
		}
	}
	for i := range spec.Rules {
		if len(spec.Rules[i].ClientSelectors) == 0 {
			continue
		}
		r, err := buildRule(&spec.Rules[i])
		if err != nil {
			return nil, err
		}
		r.Name = ruleName(ref, i)
		out.Rules = append(out.Rules, r)
	}
	return out, nil
}

func ruleName(ref ir.PolicyRef, i int) string {
	return fmt.Sprintf("%s/%s/rule/%d", ref.Namespace, ref.Name, i)
}

// unitSeconds is a rate limit unit's length; a month is 30 days, a year 365.
func unitSeconds(u egv1a1.RateLimitUnit) int64 {
	const day = 24 * 3600
	switch u {
	case egv1a1.RateLimitUnitSecond:
		return 1
	case egv1a1.RateLimitUnitMinute:
		return 60
	case egv1a1.RateLimitUnitHour:
		return 3600
	case egv1a1.RateLimitUnitDay:
		return day
	case egv1a1.RateLimitUnitWeek:
		return 7 * day
	case egv1a1.RateLimitUnitMonth:
		return 30 * day
	case egv1a1.RateLimitUnitYear:
		return 365 * day
	}
	return 0
}

func limitValue(v egv1a1.RateLimitValue) ir.RateLimitValue {
	return ir.RateLimitValue{Requests: v.Requests, Unit: string(v.Unit), Seconds: unitSeconds(v.Unit)}
}

// buildRule reads one rule's client selectors. Headers, methods and query parameters of
// all selectors add up; a later selector's path or source CIDR replaces an earlier one's,
// as in EG.
func buildRule(rule *egv1a1.RateLimitRule) (*ir.RateLimitRule, error) {
	out := &ir.RateLimitRule{
		Limit:      limitValue(rule.Limit),
		Shared:     rule.Shared != nil && *rule.Shared,
		ShadowMode: rule.ShadowMode != nil && *rule.ShadowMode,
	}
	if rule.XRateLimitHeaders != nil {
		out.XRateLimitHeaders = string(*rule.XRateLimitHeaders)
	}
	if md := rule.Limit.FromMetadata; md != nil {
		out.LimitFromMetadata = &ir.MetadataKey{Namespace: md.Namespace, Key: md.Key}
	}
	for _, sel := range rule.ClientSelectors {
		if len(sel.Headers) == 0 && len(sel.Methods) == 0 && sel.Path == nil && sel.SourceCIDR == nil &&
			len(sel.QueryParams) == 0 {
			return nil, errors.New(
				"unable to translate rateLimit. At least one of the header or method or path or sourceCIDR or " +
					"queryParameters must be specified")
		}
		for _, h := range sel.Headers {
			m, err := headerMatch(h)
			if err != nil {
				return nil, err
			}
			out.Headers = append(out.Headers, m)
		}
		for _, mm := range sel.Methods {
			v := string(mm.Value)
			out.Methods = append(out.Methods,
				&ir.RateLimitMatch{StringMatch: ir.StringMatch{Exact: &v}, Invert: isTrue(mm.Invert)})
		}
		if p := sel.Path; p != nil {
			m, err := pathMatch(p)
			if err != nil {
				return nil, err
			}
			out.Path = m
		}
		if c := sel.SourceCIDR; c != nil {
			_, n, err := net.ParseCIDR(c.Value)
			if err != nil {
				return nil, fmt.Errorf("unable to translate rateLimit: %w", err)
			}
			ones, _ := n.Mask.Size()
			out.CIDR = &ir.CIDRMatch{
				CIDR: n.String(), Prefix: n.IP.String(), MaskLen: uint32(ones),
				Distinct: c.Type != nil && *c.Type == egv1a1.SourceMatchDistinct,
				Invert:   isTrue(c.Invert),
			}
		}
		for _, q := range sel.QueryParams {
			m, err := queryMatch(q)
			if err != nil {
				return nil, err
			}
			out.QueryParams = append(out.QueryParams, m)
		}
	}
	if c := rule.Cost; c != nil {
		out.RequestCost = cost(c.Request)
		out.ResponseCost = cost(c.Response)
	}
	return out, nil
}

func isTrue(b *bool) bool { return b != nil && *b }

func headerMatch(h egv1a1.HeaderMatch) (*ir.RateLimitMatch, error) {
	typ := egv1a1.HeaderMatchExact
	if h.Type != nil {
		typ = *h.Type
	}
	switch {
	case typ == egv1a1.HeaderMatchExact && h.Value != nil:
		return &ir.RateLimitMatch{StringMatch: ir.StringMatch{Name: h.Name, Exact: h.Value}, Invert: isTrue(h.Invert)}, nil
	case typ == egv1a1.HeaderMatchRegularExpression && h.Value != nil:
		if _, err := regexp.Compile(*h.Value); err != nil {
			return nil, fmt.Errorf("regex %q is invalid: %w", *h.Value, err)
		}
		return &ir.RateLimitMatch{StringMatch: ir.StringMatch{Name: h.Name, SafeRegex: h.Value}, Invert: isTrue(h.Invert)},
			nil
	case typ == egv1a1.HeaderMatchDistinct && h.Value == nil:
		if isTrue(h.Invert) {
			return nil, errors.New("unable to translate rateLimit.Invert is not applicable for distinct header match type")
		}
		return &ir.RateLimitMatch{StringMatch: ir.StringMatch{Name: h.Name}, Distinct: true}, nil
	}
	return nil, errors.New(
		"unable to translate rateLimit. Either the header.Type is not valid or the header is missing a value")
}

// pathMatch matches :path. A prefix other than "/" matches whole segments, which Envoy's
// header matcher cannot say but a regular expression can.
func pathMatch(p *egv1a1.PathMatch) (*ir.RateLimitMatch, error) {
	typ := gwapiv1.PathMatchPathPrefix
	if p.Type != nil {
		typ = *p.Type
	}
	v := p.Value
	m := &ir.RateLimitMatch{Invert: isTrue(p.Invert)}
	switch typ {
	case gwapiv1.PathMatchPathPrefix:
		if v == "/" {
			m.Prefix = &v
		} else {
			re := "^" + regexp.QuoteMeta(strings.TrimSuffix(v, "/")) + `(/.*|\?.*|#.*|;.*|$)`
			m.SafeRegex = &re
		}
	case gwapiv1.PathMatchExact:
		m.Exact = &v
	case gwapiv1.PathMatchRegularExpression:
		if _, err := regexp.Compile(v); err != nil {
			return nil, fmt.Errorf("regex %q is invalid: %w", v, err)
		}
		m.SafeRegex = &v
	default:
		return nil, errors.New("unable to translate rateLimit: invalid path type.")
	}
	return m, nil
}

func queryMatch(q egv1a1.QueryParamMatch) (*ir.RateLimitMatch, error) {
	if q.Name == "" {
		return nil, errors.New("name is required when QueryParamMatch is specified")
	}
	typ := egv1a1.QueryParamMatchExact
	if q.Type != nil {
		typ = *q.Type
	}
	switch typ {
	case egv1a1.QueryParamMatchExact:
		if q.Value == nil || *q.Value == "" {
			return nil, errors.New("value is required for Exact query parameter match")
		}
		return &ir.RateLimitMatch{StringMatch: ir.StringMatch{Name: q.Name, Exact: q.Value}, Invert: isTrue(q.Invert)}, nil
	case egv1a1.QueryParamMatchRegularExpression:
		if q.Value == nil || *q.Value == "" {
			return nil, errors.New("value is required for RegularExpression query parameter match")
		}
		if _, err := regexp.Compile(*q.Value); err != nil {
			return nil, fmt.Errorf("regex %q is invalid: %w", *q.Value, err)
		}
		return &ir.RateLimitMatch{StringMatch: ir.StringMatch{Name: q.Name, SafeRegex: q.Value}, Invert: isTrue(q.Invert)},
			nil
	case egv1a1.QueryParamMatchDistinct:
		if isTrue(q.Invert) {
			return nil, errors.New(
				"unable to translate rateLimit.Invert is not applicable for distinct query parameter match type")
		}
		if q.Value != nil {
			return nil, errors.New(
				"unable to translate rateLimit.Value is not applicable for distinct query parameter match type")
		}
		return &ir.RateLimitMatch{StringMatch: ir.StringMatch{Name: q.Name}, Distinct: true}, nil
	}
	return nil, fmt.Errorf("invalid query parameter match type: %s", typ)
}

func cost(c *egv1a1.RateLimitCostSpecifier) *ir.RateLimitCost {
	if c == nil {
		return nil
	}
	out := &ir.RateLimitCost{Number: c.Number}
	if c.Metadata != nil {
		f := fmt.Sprintf("%%DYNAMIC_METADATA(%s:%s)%%", c.Metadata.Namespace, c.Metadata.Key)
		out.Format = &f
	}
	return out
}
