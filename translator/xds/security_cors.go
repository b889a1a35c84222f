package xds

import (
	"regexp"
	"strconv"
	"strings"

	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	corsv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/http/cors/v3"
	csrfv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/http/csrf/v3"
	hcmv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/network/http_connection_manager/v3"
	matcherv3 "github.com/envoyproxy/go-control-plane/envoy/type/matcher/v3"
	typev3 "github.com/envoyproxy/go-control-plane/envoy/type/v3"
	"google.golang.org/protobuf/types/known/wrapperspb"
	gwapiv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/egharness/egharness/translator/ir"
)

const (
	corsFilterName = ir.FilterCORS
	csrfFilterName = ir.FilterCSRF
)

// corsFilter is the listener's CORS filter: empty, every route brings its own policy.
func corsFilter() *hcmv3.HttpFilter { return typedFilter(corsFilterName, &corsv3.Cors{}) }

// corsPolicy is a route's CORS policy (SP-03). Origins with "*" become regexes; a "*"
// among methods or headers allows all of them; preflights that match no origin are
// answered by the filter rather than forwarded.
func corsPolicy(c *ir.CORS) *corsv3.CorsPolicy {
	p := &corsv3.CorsPolicy{
		AllowMethods:                 joinOrStar(c.AllowMethods),
		AllowHeaders:                 joinOrStar(c.AllowHeaders),
		ExposeHeaders:                strings.Join(c.ExposeHeaders, ", "),
		AllowCredentials:             wrapperspb.Bool(c.AllowCredentials),
		ForwardNotMatchingPreflights: wrapperspb.Bool(false),
	}
	p.AllowOriginStringMatch = make([]*matcherv3.StringMatcher, 0, len(c.AllowOrigins))
	for _, o := range c.AllowOrigins {
		p.AllowOriginStringMatch = append(p.AllowOriginStringMatch, wildcardMatcher(o))
	}
	if c.MaxAge != nil {
		p.MaxAge = strconv.Itoa(int(c.MaxAge.Seconds()))
	}
	return p
}

func joinOrStar(vs []string) string {
	for _, v := range vs {
		if v == "*" {
			return "*"
		}
	}
	return strings.Join(vs, ", ")
}

// wildcardMatcher matches a value exactly, or, when it holds "*", as a regex in which each
// "*" matches anything and every other character stands for itself.
func wildcardMatcher(v string) *matcherv3.StringMatcher {
	if !strings.Contains(v, "*") {
		return &matcherv3.StringMatcher{MatchPattern: &matcherv3.StringMatcher_Exact{Exact: v}}
	}
	re := strings.ReplaceAll(regexp.QuoteMeta(v), `\*`, ".*")
	return &matcherv3.StringMatcher{
		MatchPattern: &matcherv3.StringMatcher_SafeRegex{SafeRegex: &matcherv3.RegexMatcher{Regex: re}}}
}

// csrfFilter is the listener's CSRF filter, enforcing nothing by itself (0%): only routes
// with a policy turn it on.
func csrfFilter() *hcmv3.HttpFilter {
	return typedFilter(csrfFilterName, &csrfv3.CsrfPolicy{
		FilterEnabled: &corev3.RuntimeFractionalPercent{DefaultValue: percent(0)},
	})
}

// csrfPolicy is a route's CSRF policy (SP-04). Without shadowFraction every request is
// enforced; with it, that fraction is only evaluated in shadow (the rest enforced), so
// 100% records csrf.request_valid / request_invalid and lets everything through. Envoy
// compares host and port of the Origin, so additional origins lose their scheme.
func csrfPolicy(c *ir.CSRF) *csrfv3.CsrfPolicy {
	p := &csrfv3.CsrfPolicy{FilterEnabled: &corev3.RuntimeFractionalPercent{DefaultValue: percent(100)}}
	if f := c.ShadowFraction; f != nil {
		den := int32(100)
		if f.Denominator != nil {
			den = *f.Denominator
		}
		p.FilterEnabled.DefaultValue = fractionPercent(gwapiv1.Fraction{Numerator: den - f.Numerator, Denominator: &den})
		p.ShadowEnabled = &corev3.RuntimeFractionalPercent{DefaultValue: percent(100)}
	}
	for _, o := range c.AdditionalOrigins {
		s := o
		if _, hostPort, ok := strings.Cut(s, "://"); ok {
			s = hostPort
		}
		p.AdditionalOrigins = append(p.AdditionalOrigins, wildcardMatcher(s))
	}
	return p
}

func percent(n uint32) *typev3.FractionalPercent {
	return &typev3.FractionalPercent{Numerator: n, Denominator: typev3.FractionalPercent_HUNDRED}
}

// fractionPercent is a Gateway API fraction in one of the denominators Envoy knows
// (100, 10 000, 1 000 000), exact where the denominator allows, else in millionths
// rounded down.
func fractionPercent(f gwapiv1.Fraction) *typev3.FractionalPercent {
	den := int64(100)
	if f.Denominator != nil {
		den = int64(*f.Denominator)
	}
	num := int64(f.Numerator)
	switch den {
	case 100:
		return &typev3.FractionalPercent{Numerator: uint32(num), Denominator: typev3.FractionalPercent_HUNDRED}
	case 1000:
		return &typev3.FractionalPercent{Numerator: uint32(num * 10), Denominator: typev3.FractionalPercent_TEN_THOUSAND}
	case 10000:
		return &typev3.FractionalPercent{Numerator: uint32(num), Denominator: typev3.FractionalPercent_TEN_THOUSAND}
	case 100000:
		return &typev3.FractionalPercent{Numerator: uint32(num * 10), Denominator: typev3.FractionalPercent_MILLION}
	case 1000000:
		return &typev3.FractionalPercent{Numerator: uint32(num), Denominator: typev3.FractionalPercent_MILLION}
	}
	if den <= 0 {
		return percent(0)
	}
	return &typev3.FractionalPercent{Numerator: uint32(num * 1000000 / den), Denominator: typev3.FractionalPercent_MILLION}
}
