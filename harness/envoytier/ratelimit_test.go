package envoytier

import (
	"strings"
	"testing"

	"github.com/egharness/egharness/harness/check"
	"github.com/egharness/egharness/harness/live"
	"github.com/egharness/egharness/harness/ratelimitsvc"
	"github.com/egharness/egharness/harness/routecheck"
)

// What Envoy asked the rate limit service is compared domain by domain with the ratelimit
// filters the route checker says act.
func TestCompareRateLimitCalls(t *testing.T) {
	exp := live.Expectation{Answer: check.Answer{Filters: []routecheck.FilterEffect{
		{Kind: "ratelimit", Mode: "default/eg/http", Outcome: "r=r,rule-0-match-0=alice (over the limit)"},
		{Kind: "ratelimit", Mode: "default/platform", Outcome: "a=a; b=b"},
		{Kind: "local_ratelimit", Mode: "local", Outcome: "route 50/1s"},
	}}}
	agree := []ratelimitsvc.Call{
		{Domain: "default/platform", Descriptors: []string{"b=b", "a=a"}},
		{Domain: "default/eg/http", Descriptors: []string{"r=r,rule-0-match-0=alice"}},
	}
	if d := compareRateLimitCalls(exp, agree); len(d) != 0 {
		t.Errorf("the same calls disagree: %v", d)
	}
	for name, calls := range map[string][]ratelimitsvc.Call{
		"a domain not asked": agree[:1],
		"another descriptor": {agree[0], {Domain: "default/eg/http", Descriptors: []string{"r=r,rule-0-match-0=bob"}}},
		"a domain not expected": append(append([]ratelimitsvc.Call{}, agree...),
			ratelimitsvc.Call{Domain: "x", Descriptors: []string{"k=v"}}),
	} {
		d := compareRateLimitCalls(exp, calls)
		if len(d) != 1 || !strings.Contains(d[0], "rate limit service") {
			t.Errorf("%s: %v", name, d)
		}
	}
}
