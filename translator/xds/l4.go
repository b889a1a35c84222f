package xds

import (
	"fmt"

	xdscorev3 "github.com/cncf/xds/go/xds/core/v3"
	matcherv3 "github.com/cncf/xds/go/xds/type/matcher/v3"
	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	listenerv3 "github.com/envoyproxy/go-control-plane/envoy/config/listener/v3"
	tlsinspectorv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/listener/tls_inspector/v3"
	tcpproxyv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/network/tcp_proxy/v3"
	udpproxyv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/udp/udp_proxy/v3"
	tlsv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/transport_sockets/tls/v3"
	"google.golang.org/protobuf/types/known/durationpb"

	"github.com/egharness/egharness/translator/ir"
)

// Filter names of the layer-4 proxies.
const (
	tcpProxyFilter = "envoy.filters.network.tcp_proxy"
	udpProxyFilter = "envoy.filters.udp_listener.udp_proxy"
	// emptyCluster is EG's hostless cluster behind TCP listeners that have no route yet.
	emptyCluster = "EmptyCluster"
)

// buildTCPListener is a TCP or TLS Gateway listener: one tcp_proxy filter chain per route,
// chosen by SNI where the route has server names (TLSRoutes, or a TCPRoute behind a
// terminating listener with a hostname).
func (t Translator) buildTCPListener(ls []*ir.TCPListener) *listenerv3.Listener {
	first := ls[0]
	lis := &listenerv3.Listener{
		Name:                                 t.Naming.TCPListener(first),
		Address:                              listenAddress(first.Address, first.Port, first.IPv4Compat),
		AccessLog:                            accessLogs(first.AccessLog, logAtListener),
		MaxConnectionsToAcceptPerSocketEvent: u32(1),
		PerConnectionBufferLimitBytes:        u32(bufferLimitBytes),
	}
	applyListenerConnection(lis, connectionOf(first.Policies.ClientHTTP))
	defer proxyProtocolFirst(lis, connectionOf(first.Policies.ClientHTTP)) // before the TLS inspector
	sni, emptyChain := false, false
	for _, l := range ls {
		sni = sni || anySNI(l.Routes) || anySNIDynamicResolver(l)
	}
	if sni {
		lis.ListenerFilters = []*listenerv3.ListenerFilter{{
			Name:       tlsInspector,
			ConfigType: &listenerv3.ListenerFilter_TypedConfig{TypedConfig: mustAny(&tlsinspectorv3.TlsInspector{})},
		}}
	}
	for _, l := range ls {
		routes := l.Routes
		if len(routes) == 0 {
			if emptyChain {
				continue // one placeholder chain per Envoy listener
			}
			emptyChain = true
			routes = []*ir.TCPRoute{{Name: emptyCluster, Destination: &ir.Destination{Name: emptyCluster}}}
		}
		for _, r := range routes {
			lis.FilterChains = append(lis.FilterChains, tcpFilterChain(l, r))
		}
	}
	return lis
}

// tcpFilterChain is one route's filter chain on its Gateway listener's settings (the
// placeholder chain of a listener without routes is plain TCP).
func tcpFilterChain(l *ir.TCPListener, r *ir.TCPRoute) *listenerv3.FilterChain {
	stat := tcpStatPrefix(l)
	if len(l.Routes) == 0 {
		stat = fmt.Sprintf("tcp-%d", l.Port) // EG's placeholder chain is plain TCP
	}
	fc := &listenerv3.FilterChain{
		Name: r.Name,
		Filters: []*listenerv3.Filter{{
			Name: tcpProxyFilter,
			ConfigType: &listenerv3.Filter_TypedConfig{TypedConfig: mustAny(&tcpproxyv3.TcpProxy{
				StatPrefix:       stat,
				ClusterSpecifier: &tcpproxyv3.TcpProxy_Cluster{Cluster: r.Destination.ClusterName()},
				AccessLog:        accessLogs(l.AccessLog, logAtRoute),
				IdleTimeout:      tcpIdleTimeout(l),
			})},
		}},
	}
	handshakeTimeout(fc, connectionOf(l.Policies.ClientHTTP))
	withSNIDynamicResolver(fc, l, r, stat)
	if cl := connectionLimit(connectionOf(l.Policies.ClientHTTP), stat); cl != nil {
		fc.Filters = append([]*listenerv3.Filter{cl}, fc.Filters...)
	}
	if authz := tcpAuthorizationFilter(stat, r.Policies.Authorization); authz != nil {
		fc.Filters = append([]*listenerv3.Filter{authz}, fc.Filters...)
	}
	if len(r.SNIs) > 0 {
		fc.FilterChainMatch = &listenerv3.FilterChainMatch{ServerNames: r.SNIs}
	}
	if l.TLS != nil && len(l.Routes) > 0 {
		// EG's placeholder chain is a route of its own without TLS: it terminates nothing
		// (egctl v1.9.1 on EG's testdata tlsroute-dynamic-resolver-with-tls-terminate).
		fc.TransportSocket = terminatingTLS(l.TLS, nil, l.Policies.ClientTLS)
	}
	return fc
}

func tcpStatPrefix(l *ir.TCPListener) string {
	switch {
	case l.Protocol != "TLS":
		return fmt.Sprintf("tcp-%d", l.Port)
	case l.TLS != nil:
		return fmt.Sprintf("tls-terminate-%d", l.Port)
	}
	return fmt.Sprintf("tls-passthrough-%d", l.Port)
}

// terminatingTLS is a DownstreamTlsContext serving the certificates over SDS, with the
// given ALPN (none for raw TCP), changed by the listener's ClientTrafficPolicy when it has
// one (ctp: protocol versions, ciphers, ALPN, client validation, session resumption).
func terminatingTLS(cfg *ir.TLSConfig, alpn []string, ctp *ir.DownstreamTLS) *corev3.TransportSocket {
	return &corev3.TransportSocket{
		Name:       tlsTransportSocket,
		ConfigType: &corev3.TransportSocket_TypedConfig{TypedConfig: mustAny(downstreamTLSContext(cfg, alpn, ctp))},
	}
}

func downstreamTLSContext(cfg *ir.TLSConfig, alpn []string, ctp *ir.DownstreamTLS) *tlsv3.DownstreamTlsContext {
	ctx := &tlsv3.DownstreamTlsContext{
		CommonTlsContext:                 &tlsv3.CommonTlsContext{AlpnProtocols: alpn},
		DisableStatefulSessionResumption: true,
		SessionTicketKeysType: &tlsv3.DownstreamTlsContext_DisableStatelessSessionResumption{
			DisableStatelessSessionResumption: true,
		},
	}
	for _, c := range cfg.Certificates {
		ctx.CommonTlsContext.TlsCertificateSdsSecretConfigs = append(ctx.CommonTlsContext.TlsCertificateSdsSecretConfigs,
			certificateSDS(c))
	}
	applyClientTLS(ctx, ctp)
	applyClientValidation(ctx, clientValidation(cfg, ctp))
	return ctx
}

// tcpIdleTimeout is the ClientTrafficPolicy's TCP idle timeout for the listener's proxies.
func tcpIdleTimeout(l *ir.TCPListener) *durationpb.Duration {
	if c := connectionOf(l.Policies.ClientHTTP); c != nil && c.TCPIdleTimeout != nil {
		return durationpb.New(*c.TCPIdleTimeout)
	}
	return nil
}

// buildUDPListener is a UDP Gateway listener: the udp_proxy listener filter sends every
// datagram to the route's cluster.
func (t Translator) buildUDPListener(l *ir.UDPListener) *listenerv3.Listener {
	addr := listenAddress(l.Address, l.Port, l.IPv4Compat)
	addr.GetSocketAddress().Protocol = corev3.SocketAddress_UDP
	cfg := &udpproxyv3.UdpProxyConfig{
		StatPrefix: "service",
		AccessLog:  accessLogs(l.AccessLog, logAtRoute),
		RouteSpecifier: &udpproxyv3.UdpProxyConfig_Matcher{Matcher: &matcherv3.Matcher{
			OnNoMatch: &matcherv3.Matcher_OnMatch{
				OnMatch: &matcherv3.Matcher_OnMatch_Action{Action: &xdscorev3.TypedExtensionConfig{
					Name:        "route",
					TypedConfig: mustAny(&udpproxyv3.Route{Cluster: l.Route.Destination.ClusterName()}),
				}}},
		}},
	}
	return &listenerv3.Listener{
		Name:      t.Naming.UDPListener(l),
		Address:   addr,
		AccessLog: accessLogs(l.AccessLog, logAtListener),
		ListenerFilters: []*listenerv3.ListenerFilter{{
			Name:       udpProxyFilter,
			ConfigType: &listenerv3.ListenerFilter_TypedConfig{TypedConfig: mustAny(cfg)},
		}},
	}
}

// anySNI: the TLS inspector is needed only where a filter chain matches server names.
func anySNI(routes []*ir.TCPRoute) bool {
	for _, r := range routes {
		if len(r.SNIs) > 0 {
			return true
		}
	}
	return false
}
