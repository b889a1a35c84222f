package xds

import (
	"fmt"

	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	listenerv3 "github.com/envoyproxy/go-control-plane/envoy/config/listener/v3"
	routev3 "github.com/envoyproxy/go-control-plane/envoy/config/route/v3"
	healthcheckv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/http/health_check/v3"
	routerv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/http/router/v3"
	hcmv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/network/http_connection_manager/v3"
	matcherv3 "github.com/envoyproxy/go-control-plane/envoy/type/matcher/v3"
	"google.golang.org/protobuf/types/known/wrapperspb"

	"github.com/egharness/egharness/translator/ir"
)

// The readiness listener EG v1.9 adds to every proxy's LDS (internal/xds/translator/
// listener_ready.go): the kubelet's readiness probe asks GET /ready on port 19003, which
// the health_check filter answers itself (200 while Envoy is not draining); any other
// request reaches a route that answers 500.
const (
	readyPort  = 19003
	readyPath  = "/ready"
	readyRoute = "ready_route"
)

// ReadyListenerName is the listener's name for an address ("envoy-gateway-proxy-ready-0.0.0.0-19003").
func ReadyListenerName(address string) string {
	return fmt.Sprintf("envoy-gateway-proxy-ready-%s-%d", address, readyPort)
}

// readyListeners builds one listener per distinct address, in the order first met.
func readyListeners(ready []ir.ReadyListener) []*listenerv3.Listener {
	var out []*listenerv3.Listener
	seen := map[string]bool{}
	for _, r := range ready {
		name := ReadyListenerName(r.Address)
		if seen[name] {
			continue // the same listener of several proxies, in one combined snapshot
		}
		seen[name] = true
		out = append(out, readyListener(name, r))
	}
	return out
}

func readyListener(name string, r ir.ReadyListener) *listenerv3.Listener {
	hc := typedFilter("envoy.filters.http.health_check", &healthcheckv3.HealthCheck{
		PassThroughMode: wrapperspb.Bool(false),
		Headers: []*routev3.HeaderMatcher{{
			Name: ":path",
			HeaderMatchSpecifier: &routev3.HeaderMatcher_StringMatch{StringMatch: &matcherv3.StringMatcher{
				MatchPattern: &matcherv3.StringMatcher_Exact{Exact: readyPath},
			}},
		}},
	})
	router := typedFilter("envoy.filters.http.router", &routerv3.Router{SuppressEnvoyHeaders: true})
	hcm := &hcmv3.HttpConnectionManager{
		StatPrefix: "eg-ready-http",
		RouteSpecifier: &hcmv3.HttpConnectionManager_RouteConfig{RouteConfig: &routev3.RouteConfiguration{
			Name: readyRoute,
			VirtualHosts: []*routev3.VirtualHost{{
				Name:    readyRoute,
				Domains: []string{"*"},
				Routes: []*routev3.Route{{
					Match:  &routev3.RouteMatch{PathSpecifier: &routev3.RouteMatch_Prefix{Prefix: "/"}},
					Action: &routev3.Route_DirectResponse{DirectResponse: &routev3.DirectResponseAction{Status: 500}},
				}},
			}},
		}},
		HttpFilters: []*hcmv3.HttpFilter{hc, router},
	}
	return &listenerv3.Listener{
		Name: name,
		Address: &corev3.Address{Address: &corev3.Address_SocketAddress{SocketAddress: &corev3.SocketAddress{
			Address:       r.Address,
			PortSpecifier: &corev3.SocketAddress_PortValue{PortValue: readyPort},
			Protocol:      corev3.SocketAddress_TCP,
			Ipv4Compat:    r.IPv4Compat,
		}}},
		FilterChains: []*listenerv3.FilterChain{{Filters: []*listenerv3.Filter{{
			Name:       "envoy.filters.network.http_connection_manager",
			ConfigType: &listenerv3.Filter_TypedConfig{TypedConfig: mustAny(hcm)},
		}}}},
		BypassOverloadManager: true,
	}
}
