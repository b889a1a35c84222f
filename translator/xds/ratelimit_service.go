package xds

import (
	"sort"

	routev3 "github.com/envoyproxy/go-control-plane/envoy/config/route/v3"
	rlsconfv3 "github.com/envoyproxy/go-control-plane/ratelimit/config/ratelimit/v3"

	"github.com/egharness/egharness/translator/ir"
)

// RateLimitServiceConfigs is what EG hands its rate limit service for the global rules of
// x (BTP-02, BTP-03): one configuration per domain, in the format of envoyproxy/ratelimit
// (its xDS protos), sorted by domain. Each Envoy rate limit of a route (routeRateLimits:
// the same descriptors the route sends) becomes a chain of nested descriptors, one per
// action, whose last carries the rule's limit: a fixed entry (a generic key, a header or
// query value match, a client CIDR) has its value, a distinct one (a header's or query
// parameter's value, the client address) none, so each value the request brings is
// counted on its own. A rule's response cost uses the same chain (the counter is shared).
// Shared rules are keyed by the rule's name in the policy's domain, so every route of the
// policy counts against one counter.
func RateLimitServiceConfigs(x *ir.XDS) []*rlsconfv3.RateLimitConfig {
	if x == nil {
		return nil
	}
	byDomain := map[string]*rlsconfv3.RateLimitConfig{}
	for _, l := range x.HTTP {
		for _, r := range l.Routes {
			if r.RateLimit == nil || len(r.RateLimit.Global) == 0 {
				continue
			}
			for _, dl := range routeRateLimits(r, l.Name) {
				cfg := byDomain[dl.domain]
				if cfg == nil {
					cfg = &rlsconfv3.RateLimitConfig{Name: dl.domain, Domain: dl.domain}
					byDomain[dl.domain] = cfg
				}
				addDescriptorChain(&cfg.Descriptors, dl.limit.GetActions(), dl.rule)
			}
		}
	}
	domains := make([]string, 0, len(byDomain))
	for d := range byDomain {
		domains = append(domains, d)
	}
	sort.Strings(domains)
	out := make([]*rlsconfv3.RateLimitConfig, 0, len(domains))
	for _, d := range domains {
		out = append(out, byDomain[d])
	}
	return out
}

// addDescriptorChain merges the descriptors of one rate limit's actions into list, the
// rule's limit on the last.
func addDescriptorChain(list *[]*rlsconfv3.RateLimitDescriptor, actions []*routev3.RateLimit_Action,
	rule *ir.RateLimitRule) {
	for i, a := range actions {
		key, value := descriptorEntry(a)
		var d *rlsconfv3.RateLimitDescriptor
		for _, have := range *list {
			if have.GetKey() == key && have.GetValue() == value {
				d = have
				break
			}
		}
		if d == nil {
			d = &rlsconfv3.RateLimitDescriptor{Key: key, Value: value}
			*list = append(*list, d)
		}
		if i == len(actions)-1 {
			if rule.LimitFromMetadata == nil {
				d.RateLimit = &rlsconfv3.RateLimitPolicy{Unit: rateLimitUnit(rule.Limit.Unit), RequestsPerUnit: rule.Limit.Requests}
			}
			d.ShadowMode = rule.ShadowMode
			return
		}
		list = &d.Descriptors
	}
}

// descriptorEntry is the configuration's key and value for the entry an action produces:
// no value where the request's own value is the entry's (counted per value).
func descriptorEntry(a *routev3.RateLimit_Action) (key, value string) {
	switch v := a.GetActionSpecifier().(type) {
	case *routev3.RateLimit_Action_GenericKey_:
		return v.GenericKey.GetDescriptorKey(), v.GenericKey.GetDescriptorValue()
	case *routev3.RateLimit_Action_RequestHeaders_:
		return v.RequestHeaders.GetDescriptorKey(), ""
	case *routev3.RateLimit_Action_HeaderValueMatch_:
		return v.HeaderValueMatch.GetDescriptorKey(), v.HeaderValueMatch.GetDescriptorValue()
	case *routev3.RateLimit_Action_RemoteAddressMatch_:
		if v.RemoteAddressMatch.GetDescriptorValue() == remoteAddressFormatter {
			return v.RemoteAddressMatch.GetDescriptorKey(), ""
		}
		return v.RemoteAddressMatch.GetDescriptorKey(), v.RemoteAddressMatch.GetDescriptorValue()
	case *routev3.RateLimit_Action_QueryParameters_:
		return v.QueryParameters.GetDescriptorKey(), ""
	case *routev3.RateLimit_Action_QueryParameterValueMatch_:
		return v.QueryParameterValueMatch.GetDescriptorKey(), v.QueryParameterValueMatch.GetDescriptorValue()
	}
	return "", ""
}

func rateLimitUnit(unit string) rlsconfv3.RateLimitUnit {
	switch unit {
	case "Second":
		return rlsconfv3.RateLimitUnit_SECOND
	case "Minute":
		return rlsconfv3.RateLimitUnit_MINUTE
	case "Hour":
		return rlsconfv3.RateLimitUnit_HOUR
	case "Day":
		return rlsconfv3.RateLimitUnit_DAY
	case "Week":
		return rlsconfv3.RateLimitUnit_WEEK
	case "Month":
		return rlsconfv3.RateLimitUnit_MONTH
	case "Year":
		return rlsconfv3.RateLimitUnit_YEAR
	}
	return rlsconfv3.RateLimitUnit_UNKNOWN
}
