package ratelimitsvc

import (
	"context"
	"testing"

	commonrlv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/common/ratelimit/v3"
	rlsv3 "github.com/envoyproxy/go-control-plane/envoy/service/ratelimit/v3"
	rlsconfv3 "github.com/envoyproxy/go-control-plane/ratelimit/config/ratelimit/v3"
)

func entries(kv ...string) []*commonrlv3.RateLimitDescriptor_Entry {
	var out []*commonrlv3.RateLimitDescriptor_Entry
	for i := 0; i+1 < len(kv); i += 2 {
		out = append(out, &commonrlv3.RateLimitDescriptor_Entry{Key: kv[i], Value: kv[i+1]})
	}
	return out
}

func limits(t *testing.T) *Limits {
	t.Helper()
	l, err := Load([]*rlsconfv3.RateLimitConfig{{
		Name: "d", Domain: "d",
		Descriptors: []*rlsconfv3.RateLimitDescriptor{{
			Key: "route", Value: "r",
			Descriptors: []*rlsconfv3.RateLimitDescriptor{
				{Key: "user", RateLimit: &rlsconfv3.RateLimitPolicy{Unit: rlsconfv3.RateLimitUnit_MINUTE, RequestsPerUnit: 2}},
				{Key: "tier", Value: "free", ShadowMode: true,
					RateLimit: &rlsconfv3.RateLimitPolicy{Unit: rlsconfv3.RateLimitUnit_SECOND, RequestsPerUnit: 1}},
			},
		}},
	}})
	if err != nil {
		t.Fatal(err)
	}
	return l
}

func TestLookupAsTheRateLimitService(t *testing.T) {
	l := limits(t)
	if lim, ok := l.Lookup("d", entries("route", "r", "user", "alice")); !ok || lim.Requests != 2 || lim.Unit != "MINUTE" {
		t.Errorf("a distinct key takes any value: %+v %v", lim, ok)
	}
	if _, ok := l.Lookup("d", entries("route", "r")); ok {
		t.Error("a descriptor that stops short of a limit has none")
	}
	if _, ok := l.Lookup("d", entries("route", "x", "user", "alice")); ok {
		t.Error("a fixed value must match")
	}
	if _, ok := l.Lookup("other", entries("route", "r", "user", "alice")); ok {
		t.Error("another domain has no limits")
	}
	if _, err := Load([]*rlsconfv3.RateLimitConfig{{Name: "x"}}); err == nil {
		t.Error("a configuration without a domain is refused")
	}
}

func TestShouldRateLimitCountsPerValue(t *testing.T) {
	s := NewServer()
	s.SetLimits(limits(t))
	ask := func(kv ...string) rlsv3.RateLimitResponse_Code {
		r, err := s.ShouldRateLimit(context.Background(),
			&rlsv3.RateLimitRequest{Domain: "d", Descriptors: []*commonrlv3.RateLimitDescriptor{{Entries: entries(kv...)}}})
		if err != nil {
			t.Fatal(err)
		}
		return r.GetOverallCode()
	}
	for i, want := range []rlsv3.RateLimitResponse_Code{rlsv3.RateLimitResponse_OK, rlsv3.RateLimitResponse_OK,
		rlsv3.RateLimitResponse_OVER_LIMIT} {
		if got := ask("route", "r", "user", "alice"); got != want {
			t.Errorf("alice's request %d: %v, want %v", i+1, got, want)
		}
	}
	if got := ask("route", "r", "user", "bob"); got != rlsv3.RateLimitResponse_OK {
		t.Errorf("bob has a counter of his own: %v", got)
	}
	for i := 0; i < 3; i++ {
		if got := ask("route", "r", "tier", "free"); got != rlsv3.RateLimitResponse_OK {
			t.Errorf("shadow mode counts, never enforces: %v", got)
		}
	}
	if got := ask("route", "r"); got != rlsv3.RateLimitResponse_OK {
		t.Errorf("no limit: %v", got)
	}
	calls := s.Calls()
	if len(calls) != 8 || calls[0].String() != "d: route=r,user=alice" {
		t.Errorf("calls %v", calls)
	}
	s.Reset()
	if got := ask("route", "r", "user", "alice"); got != rlsv3.RateLimitResponse_OK || len(s.Calls()) != 1 {
		t.Errorf("after Reset: %v, %d calls", got, len(s.Calls()))
	}
}
