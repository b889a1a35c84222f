package xds

import (
	"time"

	clusterv3 "github.com/envoyproxy/go-control-plane/envoy/config/cluster/v3"
	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	listenerv3 "github.com/envoyproxy/go-control-plane/envoy/config/listener/v3"
	routev3 "github.com/envoyproxy/go-control-plane/envoy/config/route/v3"
	statefulsessionv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/http/stateful_session/v3"
	hcmv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/network/http_connection_manager/v3"
	cookiev3 "github.com/envoyproxy/go-control-plane/envoy/extensions/http/stateful_session/cookie/v3"
	commonv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/load_balancing_policies/common/v3"
	maglevv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/load_balancing_policies/maglev/v3"
	randomv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/load_balancing_policies/random/v3"
	roundrobinv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/load_balancing_policies/round_robin/v3"
	httptypev3 "github.com/envoyproxy/go-control-plane/envoy/type/http/v3"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/anypb"
	"google.golang.org/protobuf/types/known/durationpb"

	"github.com/egharness/egharness/translator/ir"
)

// statefulSessionFilter keeps a client on the backend its cookie names (session persistence).
const statefulSessionFilter = "envoy.filters.http.stateful_session"

// withClusterLB applies a BackendLBPolicy to its backend cluster (BLP-03, BLP-04): the load
// balancing policy (weighted round robin when the policy names none; Maglev for consistent
// hashing) and the circuit breaker's cap on concurrent requests.
func withClusterLB(c *clusterv3.Cluster, lb *ir.BackendLB) {
	if lb == nil {
		return
	}
	if b := lb.LoadBalancing; b != nil {
		weighted := &commonv3.LocalityLbConfig{LocalityConfigSpecifier: &commonv3.LocalityLbConfig_LocalityWeightedLbConfig_{
			LocalityWeightedLbConfig: &commonv3.LocalityLbConfig_LocalityWeightedLbConfig{},
		}}
		var name string
		var cfg proto.Message
		switch b.Type {
		case "ConsistentHash":
			name, cfg = "envoy.load_balancing_policies.maglev", &maglevv3.Maglev{}
		case "Random":
			name, cfg = "envoy.load_balancing_policies.random", &randomv3.Random{LocalityLbConfig: weighted}
		case "LeastRequest":
			name = leastRequestExtension
			cfg = nil // the cluster's default already
		default:
			name, cfg = "envoy.load_balancing_policies.round_robin", &roundrobinv3.RoundRobin{LocalityLbConfig: weighted}
		}
		if cfg != nil {
			c.LoadBalancingPolicy = &clusterv3.LoadBalancingPolicy{Policies: []*clusterv3.LoadBalancingPolicy_Policy{{
				TypedExtensionConfig: &corev3.TypedExtensionConfig{Name: name, TypedConfig: mustAny(cfg)},
			}}}
		}
	}
	if cb := lb.CircuitBreaker; cb != nil {
		if c.CircuitBreakers == nil || len(c.CircuitBreakers.Thresholds) == 0 {
			c.CircuitBreakers = &clusterv3.CircuitBreakers{Thresholds: []*clusterv3.CircuitBreakers_Thresholds{{}}}
		}
		c.CircuitBreakers.Thresholds[0].MaxRequests = u32(cb.MaxInflightRequests)
	}
}

// withRouteLB adds what a route does for its cluster's policy: the hash key of consistent
// hashing and the session cookie.
func withRouteLB(route *routev3.Route, r *ir.HTTPRoute) *routev3.Route {
	if r.Destination == nil || r.Destination.BackendLB == nil || route.GetRoute() == nil {
		return route
	}
	lb := r.Destination.BackendLB
	if b := lb.LoadBalancing; b != nil && b.Type == "ConsistentHash" {
		var hp *routev3.RouteAction_HashPolicy
		switch b.HashKey {
		case "SourceIP":
			hp = &routev3.RouteAction_HashPolicy{PolicySpecifier: &routev3.RouteAction_HashPolicy_ConnectionProperties_{
				ConnectionProperties: &routev3.RouteAction_HashPolicy_ConnectionProperties{SourceIp: true}}}
		case "Header":
			hp = &routev3.RouteAction_HashPolicy{PolicySpecifier: &routev3.RouteAction_HashPolicy_Header_{
				Header: &routev3.RouteAction_HashPolicy_Header{HeaderName: b.HashHeader}}}
		case "Hostname":
			hp = &routev3.RouteAction_HashPolicy{PolicySpecifier: &routev3.RouteAction_HashPolicy_Header_{
				Header: &routev3.RouteAction_HashPolicy_Header{HeaderName: ":authority"}}}
		}
		if hp != nil {
			route.GetRoute().HashPolicy = append(route.GetRoute().HashPolicy, hp)
		}
	}
	if sp := lb.SessionPersistence; sp != nil {
		cookie := &httptypev3.Cookie{Name: sp.CookieName, Path: "/"}
		if sp.Permanent && sp.AbsoluteTimeout != "" {
			if d, err := time.ParseDuration(sp.AbsoluteTimeout); err == nil {
				cookie.Ttl = durationpb.New(d)
			}
		}
		if route.TypedPerFilterConfig == nil {
			route.TypedPerFilterConfig = map[string]*anypb.Any{}
		}
		route.TypedPerFilterConfig[statefulSessionFilter] = mustAny(&statefulsessionv3.StatefulSessionPerRoute{
			Override: &statefulsessionv3.StatefulSessionPerRoute_StatefulSession{
				StatefulSession: &statefulsessionv3.StatefulSession{
					SessionState: &corev3.TypedExtensionConfig{
						Name:        "envoy.http.stateful_session.cookie",
						TypedConfig: mustAny(&cookiev3.CookieBasedSessionState{Cookie: cookie}),
					},
				}},
		})
	}
	return route
}

// addSessionFilters puts the stateful session filter (off unless a route turns it on) before
// the router of every connection manager whose routes use session persistence.
func addSessionFilters(listeners []*listenerv3.Listener, routeConfigs []*routev3.RouteConfiguration) {
	uses := map[string]bool{}
	for _, rc := range routeConfigs {
		for _, vh := range rc.GetVirtualHosts() {
			for _, r := range vh.GetRoutes() {
				if _, ok := r.GetTypedPerFilterConfig()[statefulSessionFilter]; ok {
					uses[rc.GetName()] = true
				}
			}
		}
	}
	if len(uses) == 0 {
		return
	}
	for _, l := range listeners {
		chains := append([]*listenerv3.FilterChain{}, l.GetFilterChains()...)
		if l.GetDefaultFilterChain() != nil {
			chains = append(chains, l.GetDefaultFilterChain())
		}
		for _, fc := range chains {
			for _, f := range fc.GetFilters() {
				var hcm hcmv3.HttpConnectionManager
				if f.GetTypedConfig() == nil || f.GetTypedConfig().UnmarshalTo(&hcm) != nil ||
					!uses[hcm.GetRds().GetRouteConfigName()] {
					continue
				}
				filter := &hcmv3.HttpFilter{Name: statefulSessionFilter, Disabled: false,
					ConfigType: &hcmv3.HttpFilter_TypedConfig{TypedConfig: mustAny(&statefulsessionv3.StatefulSession{})}}
				n := len(hcm.HttpFilters)
				hcm.HttpFilters = append(hcm.HttpFilters[:n-1:n-1], filter, hcm.HttpFilters[n-1])
				f.ConfigType = &listenerv3.Filter_TypedConfig{TypedConfig: mustAny(&hcm)}
			}
		}
	}
}
