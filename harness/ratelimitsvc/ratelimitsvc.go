// Package ratelimitsvc stands in for EG's rate limit service (envoyproxy/ratelimit): it
// reads the configuration EG hands that service (translator/xds.RateLimitServiceConfigs,
// envoyproxy/ratelimit's own xDS protos) and finds a descriptor's limit with
// envoyproxy/ratelimit's own configuration code, so a descriptor matches a limit exactly as
// in EG's service. Server answers Envoy's RateLimitService/ShouldRateLimit calls
// (go-control-plane's protos): it records each call's domain and descriptors and counts
// hits per descriptor (with its values), answering OVER_LIMIT past the limit. Counters
// live until Reset, not per time window: a caller that resets before each exchange never
// sees a window end in the middle of one.
package ratelimitsvc

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"

	commonrlv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/common/ratelimit/v3"
	rlsv3 "github.com/envoyproxy/go-control-plane/envoy/service/ratelimit/v3"
	rlsconfv3 "github.com/envoyproxy/go-control-plane/ratelimit/config/ratelimit/v3"
	"github.com/envoyproxy/ratelimit/src/config"
	"github.com/envoyproxy/ratelimit/src/settings"
	"github.com/envoyproxy/ratelimit/src/stats"
	gostats "github.com/lyft/gostats"
)

// Limits are the rate limit service's configuration, loaded.
type Limits struct {
	cfg config.RateLimitConfig
}

// Limit is what the configuration says of one descriptor.
type Limit struct {
	Requests uint32
	Unit     string // SECOND, MINUTE...
	Shadow   bool   // counted, never enforced
}

// Load loads the configurations (one per domain). A configuration envoyproxy/ratelimit
// refuses is an error.
func Load(cfgs []*rlsconfv3.RateLimitConfig) (l *Limits, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("the rate limit service refuses the configuration: %v", r)
		}
	}()
	toLoad := make([]config.RateLimitConfigToLoad, 0, len(cfgs))
	for _, c := range cfgs {
		toLoad = append(toLoad, config.RateLimitConfigToLoad{Name: c.GetName(), ConfigYaml: config.ConfigXdsProtoToYaml(c)})
	}
	mgr := stats.NewStatManager(gostats.NewStore(gostats.NewNullSink(), false), settings.Settings{})
	return &Limits{cfg: config.NewRateLimitConfigImpl(toLoad, mgr, false)}, nil
}

// Lookup is the limit of a descriptor (its entries in order) in domain; false when the
// configuration has none (the service then lets the request through).
func (l *Limits) Lookup(domain string, entries []*commonrlv3.RateLimitDescriptor_Entry) (Limit, bool) {
	if l == nil {
		return Limit{}, false
	}
	rl := l.cfg.GetLimit(context.Background(), domain, &commonrlv3.RateLimitDescriptor{Entries: entries})
	if rl == nil || rl.Unlimited || rl.Limit == nil {
		return Limit{}, false
	}
	return Limit{Requests: rl.Limit.GetRequestsPerUnit(), Unit: rl.Limit.GetUnit().String(), Shadow: rl.ShadowMode}, true
}

// Call is one ShouldRateLimit call as Envoy made it: the domain and each descriptor as
// key=value entries joined by commas.
type Call struct {
	Domain      string
	Descriptors []string
}

// String is "domain: descriptor; descriptor" with the descriptors sorted.
func (c Call) String() string {
	d := slices.Clone(c.Descriptors)
	slices.Sort(d)
	return c.Domain + ": " + strings.Join(d, "; ")
}

// DescriptorString is a descriptor's entries as key=value joined by commas, the form the
// route checker reports.
func DescriptorString(entries []*commonrlv3.RateLimitDescriptor_Entry) string {
	parts := make([]string, len(entries))
	for i, e := range entries {
		parts[i] = e.GetKey() + "=" + e.GetValue()
	}
	return strings.Join(parts, ",")
}

// Server is the gRPC rate limit service.
type Server struct {
	rlsv3.UnimplementedRateLimitServiceServer

	mu     sync.Mutex
	limits *Limits
	hits   map[string]uint64
	calls  []Call
}

// NewServer serves no limits until SetLimits.
func NewServer() *Server { return &Server{hits: map[string]uint64{}} }

// SetLimits replaces the configuration and resets counters and calls.
func (s *Server) SetLimits(l *Limits) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.limits = l
	s.hits, s.calls = map[string]uint64{}, nil
}

// Reset sets every counter back to zero and forgets the calls.
func (s *Server) Reset() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.hits, s.calls = map[string]uint64{}, nil
}

// ForgetCalls forgets the calls and keeps the counters.
func (s *Server) ForgetCalls() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.calls = nil
}

// Calls are the calls since the last Reset or ForgetCalls, in order.
func (s *Server) Calls() []Call {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.calls)
}

// ShouldRateLimit counts each descriptor's hits (the request's hits_addend, or the
// descriptor's own, default 1) against its limit: OVER_LIMIT when one is past its limit and
// not in shadow mode, OK otherwise (also for descriptors without a limit).
func (s *Server) ShouldRateLimit(_ context.Context, req *rlsv3.RateLimitRequest) (*rlsv3.RateLimitResponse, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	call := Call{Domain: req.GetDomain()}
	resp := &rlsv3.RateLimitResponse{OverallCode: rlsv3.RateLimitResponse_OK}
	for _, d := range req.GetDescriptors() {
		desc := DescriptorString(d.GetEntries())
		call.Descriptors = append(call.Descriptors, desc)
		st := &rlsv3.RateLimitResponse_DescriptorStatus{Code: rlsv3.RateLimitResponse_OK}
		resp.Statuses = append(resp.Statuses, st)
		lim, ok := s.limits.Lookup(req.GetDomain(), d.GetEntries())
		if !ok {
			continue
		}
		hits := uint64(1)
		if n := req.GetHitsAddend(); n > 0 {
			hits = uint64(n)
		}
		if n := d.GetHitsAddend().GetValue(); n > 0 {
			hits = n
		}
		key := req.GetDomain() + "|" + desc
		s.hits[key] += hits
		st.CurrentLimit = &rlsv3.RateLimitResponse_RateLimit{RequestsPerUnit: lim.Requests,
			Unit: rlsv3.RateLimitResponse_RateLimit_Unit(rlsv3.RateLimitResponse_RateLimit_Unit_value[lim.Unit])}
		if s.hits[key] > uint64(lim.Requests) {
			if !lim.Shadow {
				st.Code = rlsv3.RateLimitResponse_OVER_LIMIT
				resp.OverallCode = rlsv3.RateLimitResponse_OVER_LIMIT
			}
			continue
		}
		st.LimitRemaining = lim.Requests - uint32(s.hits[key])
	}
	s.calls = append(s.calls, call)
	return resp, nil
}
