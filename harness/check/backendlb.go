package check

import (
	"fmt"

	routev3 "github.com/envoyproxy/go-control-plane/envoy/config/route/v3"
	statefulsessionv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/http/stateful_session/v3"
	cookiev3 "github.com/envoyproxy/go-control-plane/envoy/extensions/http/stateful_session/cookie/v3"

	"github.com/egharness/egharness/harness/scenario"
	"github.com/egharness/egharness/translator/result"
)

// circuitOpen: the cluster caps concurrent requests and the request finds the cap reached.
func circuitOpen(x *result.XDS, cluster string, inflight uint32) bool {
	if inflight == 0 {
		return false
	}
	for _, c := range x.Clusters {
		if c.GetName() != cluster {
			continue
		}
		for _, t := range c.GetCircuitBreakers().GetThresholds() {
			if m := t.GetMaxRequests(); m != nil && inflight >= m.GetValue() {
				return true
			}
		}
	}
	return false
}

// routeOf finds the route that answered.
func routeOf(x *result.XDS, rc, vh, name string) *routev3.Route {
	for _, c := range x.Routes {
		if c.GetName() != rc {
			continue
		}
		for _, v := range c.GetVirtualHosts() {
			if v.GetName() != vh {
				continue
			}
			for _, r := range v.GetRoutes() {
				if r.GetName() == name {
					return r
				}
			}
		}
	}
	return nil
}

// hashPolicy says what a route hashes on, in the words scenarios use.
func hashPolicy(r *routev3.Route) string {
	for _, h := range r.GetRoute().GetHashPolicy() {
		switch {
		case h.GetConnectionProperties().GetSourceIp():
			return "sourceIP"
		case h.GetHeader() != nil:
			return "header:" + h.GetHeader().GetHeaderName()
		}
	}
	return "none"
}

// sessionCookie is the cookie the route's stateful session keeps, or "none".
func sessionCookie(r *routev3.Route) string {
	a := r.GetTypedPerFilterConfig()["envoy.filters.http.stateful_session"]
	var per statefulsessionv3.StatefulSessionPerRoute
	if a == nil || a.UnmarshalTo(&per) != nil {
		return "none"
	}
	var c cookiev3.CookieBasedSessionState
	if per.GetStatefulSession().GetSessionState().GetTypedConfig().UnmarshalTo(&c) != nil {
		return "none"
	}
	return c.GetCookie().GetName()
}

func loadBalancer(x *result.XDS, cluster string) string {
	for _, c := range x.Clusters {
		if c.GetName() == cluster {
			for _, p := range c.GetLoadBalancingPolicy().GetPolicies() {
				return p.GetTypedExtensionConfig().GetName()
			}
		}
	}
	return ""
}

func backendLBDiffs(want scenario.TrafficResult, x *result.XDS, a Answer) []string {
	if want.HashPolicy == "" && want.SessionCookie == "" && want.LoadBalancer == "" {
		return nil
	}
	r := routeOf(x, a.RouteConfig, a.VirtualHost, a.Route)
	if r == nil {
		return []string{"load balancing expected, but no route answered"}
	}
	var diffs []string
	if got := hashPolicy(r); want.HashPolicy != "" && got != want.HashPolicy {
		diffs = append(diffs, fmt.Sprintf("hash policy %q, expected %q", got, want.HashPolicy))
	}
	if got := sessionCookie(r); want.SessionCookie != "" && got != want.SessionCookie {
		diffs = append(diffs, fmt.Sprintf("session cookie %q, expected %q", got, want.SessionCookie))
	}
	if got := loadBalancer(x, a.Cluster); want.LoadBalancer != "" && got != want.LoadBalancer {
		diffs = append(diffs, fmt.Sprintf("load balancer %q, expected %q", got, want.LoadBalancer))
	}
	return diffs
}
