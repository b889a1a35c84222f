package xds

import (
	"fmt"
	"strings"
	"time"

	cncfmatcherv3 "github.com/cncf/xds/go/xds/type/matcher/v3"
	clusterv3 "github.com/envoyproxy/go-control-plane/envoy/config/cluster/v3"
	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	listenerv3 "github.com/envoyproxy/go-control-plane/envoy/config/listener/v3"
	rbacconfigv3 "github.com/envoyproxy/go-control-plane/envoy/config/rbac/v3"
	routev3 "github.com/envoyproxy/go-control-plane/envoy/config/route/v3"
	dfpclusterv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/clusters/dynamic_forward_proxy/v3"
	dnscachev3 "github.com/envoyproxy/go-control-plane/envoy/extensions/common/dynamic_forward_proxy/v3"
	rbacv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/http/rbac/v3"
	networkrbacv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/network/rbac/v3"
	snidfpv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/network/sni_dynamic_forward_proxy/v3"
	clusterprovidedv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/load_balancing_policies/cluster_provided/v3"
	tlsv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/transport_sockets/tls/v3"
	httpv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/upstreams/http/v3"
	envoymatcherv3 "github.com/envoyproxy/go-control-plane/envoy/type/matcher/v3"
	"google.golang.org/protobuf/types/known/durationpb"

	"github.com/egharness/egharness/translator/ir"
)

// A dynamic resolver (an EG Backend of type DynamicResolver) forwards to whatever host the
// request names, or for a TLS passthrough route the connection's SNI. EG v1.9 gives its
// destination a dynamic forward proxy cluster, which resolves hosts through a DNS cache
// instead of taking endpoints, and keeps the proxy from being turned on itself: an HTTP
// route's requests for a loopback host are denied by an RBAC filter of their own, a TLS
// route's connections with a loopback SNI by a network RBAC filter. These are facts of
// EG v1.9.1's output (egctl x translate on EG's testdata httproute-dynamic-resolver-*,
// tlsroute-dynamic-resolver*).

const (
	dfpClusterType = "envoy.clusters.dynamic_forward_proxy"
	// dfpCachePrefix begins every DNS cache's name; the rest is the lookup family, the
	// refresh interval and where the settings came from, so that routes with the same
	// settings share one cache and others do not.
	dfpCachePrefix        = "envoy-gateway-dfp-cache"
	dfpDefaultRefresh     = 30 * time.Second
	clusterProvidedPolicy = "envoy.load_balancing_policies.cluster_provided"
	// dfpLoopbackFilter is an RBAC filter of its own (named under the RBAC kind, so it ranks
	// right after a SecurityPolicy's RBAC filter): empty on the listener, it denies per
	// route.
	dfpLoopbackFilter = ir.FilterRBAC + ".dfp_loopback_deny"
	sniDFPFilter      = "envoy.filters.network.sni_dynamic_forward_proxy"
	// sniDFPPort is where a TLS route's connections go: an SNI names a host, not a port.
	sniDFPPort = 443
)

// loopbackHostPatterns are the hosts (with an optional port) a dynamic resolver's HTTP
// route refuses to forward to, one RE2 pattern each, in EG's order.
var loopbackHostPatterns = []string{
	`^127\.0\.0\.1(?::\d+)?$`,
	`^localhost(?::\d+)?$`,
	`^localhost\.localdomain(?::\d+)?$`,
	`^ip6-localhost(?::\d+)?$`,
	`^ip6-loopback(?::\d+)?$`,
	`^\[::1\](?::\d+)?$`,
	`^::1(?::\d+)?$`,
}

// loopbackSNIPattern is the same for a TLS route's SNI, in one case-insensitive pattern
// that also takes a trailing dot.
const loopbackSNIPattern = `(?i)^(localhost|localhost\.localdomain|ip6-localhost|ip6-loopback|` +
	`127\.0\.0\.1|::1|\[::1\])\.?$`

// dnsLookupFamily is the address family a dynamic resolver asks DNS for: what the route's
// BackendTrafficPolicy sets, IPv4 first otherwise. (EG would let an EnvoyProxy's ipFamily
// override it, but a dynamic resolver's destination carries no ipFamily.)
func dnsLookupFamily(dns *ir.DNS) clusterv3.Cluster_DnsLookupFamily {
	if dns != nil {
		switch dns.LookupFamily {
		case "IPv4":
			return clusterv3.Cluster_V4_ONLY
		case "IPv6":
			return clusterv3.Cluster_V6_ONLY
		case "IPv6Preferred":
			return clusterv3.Cluster_AUTO
		case "IPv4AndIPv6":
			return clusterv3.Cluster_ALL
		}
	}
	return clusterv3.Cluster_V4_PREFERRED
}

func dnsRefresh(dns *ir.DNS) time.Duration {
	if dns != nil && dns.RefreshRate != nil && *dns.RefreshRate > 0 {
		return *dns.RefreshRate
	}
	return dfpDefaultRefresh
}

// dnsCacheConfig is the DNS cache of a route's dynamic resolver, shared by its cluster and,
// on a TLS route, its SNI proxy filter: named
// envoy-gateway-dfp-cache-<family>-<refresh in ms>ms-<policy namespace/name, or default>.
func dnsCacheConfig(dns *ir.DNS) *dnscachev3.DnsCacheConfig {
	family, refresh := dnsLookupFamily(dns), dnsRefresh(dns)
	origin := "default"
	if dns != nil && dns.Policy != "" {
		origin = dns.Policy
	}
	return &dnscachev3.DnsCacheConfig{
		Name: fmt.Sprintf("%s-%s-%dms-%s", dfpCachePrefix, strings.ToLower(family.String()),
			refresh.Milliseconds(), origin),
		DnsLookupFamily: family,
		DnsRefreshRate:  durationpb.New(refresh),
	}
}

// toDFPCluster turns a built cluster of a dynamic resolver's destination into a dynamic
// forward proxy cluster: no endpoints (its hosts come from the DNS cache), the cluster's
// own load balancing, and the lookup family on the cluster too. A backend that speaks TLS
// has its context as the cluster's transport socket (there are no endpoints to select it
// by), and since the host differs per request, Envoy sends it as SNI and checks the
// certificate against it (auto SNI, auto SAN validation in the HTTP options), not through
// the context's own SNI-based validation.
func toDFPCluster(c *clusterv3.Cluster, dns *ir.DNS) {
	c.EdsClusterConfig = nil
	c.LoadAssignment = nil
	c.DnsLookupFamily = dnsLookupFamily(dns)
	c.ClusterDiscoveryType = &clusterv3.Cluster_ClusterType{ClusterType: &clusterv3.Cluster_CustomClusterType{
		Name: dfpClusterType,
		TypedConfig: mustAny(&dfpclusterv3.ClusterConfig{
			ClusterImplementationSpecifier: &dfpclusterv3.ClusterConfig_DnsCacheConfig{DnsCacheConfig: dnsCacheConfig(dns)},
		}),
	}}
	c.LoadBalancingPolicy = &clusterv3.LoadBalancingPolicy{Policies: []*clusterv3.LoadBalancingPolicy_Policy{{
		TypedExtensionConfig: &corev3.TypedExtensionConfig{
			Name:        clusterProvidedPolicy,
			TypedConfig: mustAny(&clusterprovidedv3.ClusterProvided{}),
		},
	}}}
	if len(c.TransportSocketMatches) > 0 {
		socket := c.TransportSocketMatches[0].TransportSocket
		c.TransportSocketMatches = nil
		if c.TransportSocket == nil || c.TransportSocket.Name == "dummy.transport_socket" {
			c.TransportSocket = withoutAutoSANValidation(socket)
		}
	}
	if a := c.TypedExtensionProtocolOptions[httpProtocolOptionsKey]; a != nil {
		opts := &httpv3.HttpProtocolOptions{}
		if err := a.UnmarshalTo(opts); err == nil {
			opts.UpstreamHttpProtocolOptions = &corev3.UpstreamHttpProtocolOptions{AutoSni: true, AutoSanValidation: true}
			c.TypedExtensionProtocolOptions[httpProtocolOptionsKey] = mustAny(opts)
		}
	}
}

// withoutAutoSANValidation is an upstream TLS socket without the context's validation
// against the SNI it sends (a dynamic forward proxy cluster validates in its HTTP options).
func withoutAutoSANValidation(s *corev3.TransportSocket) *corev3.TransportSocket {
	ctx := &tlsv3.UpstreamTlsContext{}
	if s.GetTypedConfig().UnmarshalTo(ctx) != nil || !ctx.AutoSniSanValidation {
		return s
	}
	ctx.AutoSniSanValidation = false
	return &corev3.TransportSocket{Name: s.Name,
		ConfigType: &corev3.TransportSocket_TypedConfig{TypedConfig: mustAny(ctx)}}
}

// dynamicResolverRoute is an HTTP route that forwards to a dynamic resolver.
func dynamicResolverRoute(r *ir.HTTPRoute) bool {
	return r.DirectResponse == nil && r.Redirect == nil && r.Destination.DynamicResolver()
}

// addDynamicResolver configures a route that forwards to a dynamic resolver: its
// connection manager gets the (empty) loopback RBAC filter, and the route denies requests
// whose host, the one the proxy would resolve, is a loopback name or address. That host is
// :authority, or the header a host rewrite takes it from; a literal host rewrite is known
// here and needs no check. The backend's own host (auto host rewrite) means nothing for a
// dynamic resolver: the route keeps the request's host.
func (s *httpFilterSet) addDynamicResolver(out *routev3.Route, r *ir.HTTPRoute) error {
	if !dynamicResolverRoute(r) {
		return nil
	}
	if a := out.GetRoute(); a != nil {
		if _, auto := a.HostRewriteSpecifier.(*routev3.RouteAction_AutoHostRewrite); auto {
			a.HostRewriteSpecifier = nil
		}
	}
	if _, ok := s.named[dfpLoopbackFilter]; !ok {
		s.named[dfpLoopbackFilter] = typedFilter(dfpLoopbackFilter, &rbacv3.RBAC{})
	}
	rw := r.URLRewrite
	if rw != nil && rw.Hostname != nil {
		return nil
	}
	header := ":authority"
	if rw != nil && rw.Host != nil && rw.Host.Header != nil {
		header = *rw.Host.Header
	}
	return setPerRoute(out, dfpLoopbackFilter, loopbackDenial(header))
}

// loopbackDenial denies a request whose header (the host to resolve) matches any loopback
// pattern, and allows every other.
func loopbackDenial(header string) *rbacv3.RBACPerRoute {
	ps := make([]*predicate, 0, len(loopbackHostPatterns))
	for _, p := range loopbackHostPatterns {
		ps = append(ps, single("http_header", &envoymatcherv3.HttpRequestHeaderMatchInput{HeaderName: header}, "", nil,
			&cncfmatcherv3.StringMatcher{
				MatchPattern: &cncfmatcherv3.StringMatcher_SafeRegex{SafeRegex: &cncfmatcherv3.RegexMatcher{
					Regex:      p,
					EngineType: &cncfmatcherv3.RegexMatcher_GoogleRe2{GoogleRe2: &cncfmatcherv3.RegexMatcher_GoogleRE2{}},
				}}}))
	}
	m := &cncfmatcherv3.Matcher{
		MatcherType: &cncfmatcherv3.Matcher_MatcherList_{MatcherList: &cncfmatcherv3.Matcher_MatcherList{
			Matchers: []*cncfmatcherv3.Matcher_MatcherList_FieldMatcher{{
				Predicate: anyOf(ps),
				OnMatch:   decision("deny-loopback-host", rbacAction("DENY", rbacconfigv3.RBAC_DENY)),
			}},
		}},
		OnNoMatch: decision("default", rbacAction("ALLOW", rbacconfigv3.RBAC_ALLOW)),
	}
	return &rbacv3.RBACPerRoute{Rbac: &rbacv3.RBAC{Matcher: m}}
}

// sniDynamicResolver says whether a TCP listener's route forwards by SNI to a dynamic
// resolver: a TLS passthrough route (EG refuses a dynamic resolver behind a terminating
// listener, which would forward the decrypted stream).
func sniDynamicResolver(l *ir.TCPListener, r *ir.TCPRoute) bool {
	return l.Protocol == "TLS" && l.TLS == nil && r.Destination.DynamicResolver()
}

// anySNIDynamicResolver: the listener needs the TLS inspector for the SNI even where no
// filter chain matches server names.
func anySNIDynamicResolver(l *ir.TCPListener) bool {
	for _, r := range l.Routes {
		if sniDynamicResolver(l, r) {
			return true
		}
	}
	return false
}

// withSNIDynamicResolver puts a TLS passthrough route's dynamic resolver filters right
// before the chain's tcp_proxy (its last filter): a network RBAC filter that closes
// connections whose SNI is a loopback name or address, then the SNI proxy, which resolves
// the SNI through the route's DNS cache and points tcp_proxy at it on port 443.
func withSNIDynamicResolver(fc *listenerv3.FilterChain, l *ir.TCPListener, r *ir.TCPRoute, statPrefix string) {
	if !sniDynamicResolver(l, r) || len(fc.Filters) == 0 {
		return
	}
	deny := &listenerv3.Filter{
		Name: networkRBACFilter,
		ConfigType: &listenerv3.Filter_TypedConfig{TypedConfig: mustAny(&networkrbacv3.RBAC{
			StatPrefix: statPrefix,
			Rules: &rbacconfigv3.RBAC{
				Action: rbacconfigv3.RBAC_DENY,
				Policies: map[string]*rbacconfigv3.Policy{"deny-loopback-sni": {
					Permissions: []*rbacconfigv3.Permission{{Rule: &rbacconfigv3.Permission_RequestedServerName{
						RequestedServerName: &envoymatcherv3.StringMatcher{MatchPattern: &envoymatcherv3.StringMatcher_SafeRegex{
							SafeRegex: &envoymatcherv3.RegexMatcher{Regex: loopbackSNIPattern},
						}},
					}}},
					Principals: []*rbacconfigv3.Principal{{Identifier: &rbacconfigv3.Principal_Any{Any: true}}},
				}},
			},
		})},
	}
	proxy := &listenerv3.Filter{
		Name: sniDFPFilter,
		ConfigType: &listenerv3.Filter_TypedConfig{TypedConfig: mustAny(&snidfpv3.FilterConfig{
			DnsCacheConfig: dnsCacheConfig(r.Policies.DNS),
			PortSpecifier:  &snidfpv3.FilterConfig_PortValue{PortValue: sniDFPPort},
		})},
	}
	last := len(fc.Filters) - 1
	fc.Filters = append(fc.Filters[:last:last], deny, proxy, fc.Filters[last])
}
