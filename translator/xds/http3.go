package xds

import (
	"fmt"

	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	listenerv3 "github.com/envoyproxy/go-control-plane/envoy/config/listener/v3"
	routev3 "github.com/envoyproxy/go-control-plane/envoy/config/route/v3"
	hcmv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/network/http_connection_manager/v3"
	quicv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/transport_sockets/quic/v3"
	"google.golang.org/protobuf/types/known/wrapperspb"

	"github.com/egharness/egharness/translator/ir"
)

// HTTP/3 of a ClientTrafficPolicy (CTP-02). When one HTTPS listener of a port asks for it,
// the port gets a UDP (QUIC) Envoy listener beside its TCP one, with a filter chain per HTTPS
// listener of the port (the same connection manager with the HTTP/3 codec, TLS over QUIC
// offering h3), and every route of the port advertises it with an alt-svc response header.

const quicTransportSocket = "envoy.transport_sockets.quic"

// wantsHTTP3 reports whether the listener's policy turned HTTP/3 on.
func wantsHTTP3(l *ir.HTTPListener) bool {
	h := clientHTTPOf(l)
	return h != nil && h.HTTP3
}

// quicListenerName is the TCP listener's name with -quic (udp-<port> under the v2 scheme).
func (n Naming) quicListenerName(l *ir.HTTPListener) string {
	if n.V2 {
		return fmt.Sprintf("udp-%d", l.GatewayPort)
	}
	return l.Name + "-quic"
}

// altSvc advertises HTTP/3 on the Gateway port for a day.
func altSvc(gatewayPort uint32) *corev3.HeaderValueOption {
	return &corev3.HeaderValueOption{
		Append: wrapperspb.Bool(true),
		Header: &corev3.HeaderValue{Key: "alt-svc", Value: fmt.Sprintf(`h3=":%d"; ma=86400`, gatewayPort)},
	}
}

func addAltSvc(r *routev3.Route, gatewayPort uint32) {
	r.ResponseHeadersToAdd = append(r.ResponseHeadersToAdd, altSvc(gatewayPort))
}

// buildQUICListener is the UDP listener of an HTTP/3 port.
func (t Translator) buildQUICListener(el *envoyListener) *listenerv3.Listener {
	addr := listenAddress(el.first.Address, el.first.Port, el.first.IPv4Compat)
	addr.GetSocketAddress().Protocol = corev3.SocketAddress_UDP
	lis := &listenerv3.Listener{
		Name:      t.Naming.quicListenerName(el.first),
		Address:   addr,
		AccessLog: accessLogs(el.first.AccessLog, logAtListener),
		UdpListenerConfig: &listenerv3.UdpListenerConfig{
			DownstreamSocketConfig: &corev3.UdpSocketConfig{},
			QuicOptions:            &listenerv3.QuicProtocolOptions{},
		},
		DrainType: listenerv3.Listener_MODIFY_ONLY,
	}
	for _, c := range el.chains {
		hcm := hcmOf(c.rc.Name, t.Naming.StatPrefix(c.l), c.l.GRPC, c.filters.filters(), c.l)
		hcm.CodecType = hcmv3.HttpConnectionManager_HTTP3
		hcm.Http3ProtocolOptions = &corev3.Http3ProtocolOptions{}
		ctx := downstreamTLSContext(c.l.TLS, []string{"h3"}, c.l.Policies.ClientTLS)
		ctx.CommonTlsContext.AlpnProtocols = []string{"h3"} // QUIC offers h3 whatever ALPN TCP offers
		fc := &listenerv3.FilterChain{
			Name:    c.l.Name,
			Filters: withConnectionLimit(connectionOf(clientHTTPOf(c.l)), t.Naming.StatPrefix(c.l), wrapHCM(hcm)),
			TransportSocket: &corev3.TransportSocket{
				Name: quicTransportSocket,
				ConfigType: &corev3.TransportSocket_TypedConfig{TypedConfig: mustAny(
					&quicv3.QuicDownstreamTransport{DownstreamTlsContext: ctx})},
			},
		}
		if h := c.l.Hostnames[0]; h != "*" {
			fc.FilterChainMatch = &listenerv3.FilterChainMatch{ServerNames: []string{h}}
		}
		handshakeTimeout(fc, connectionOf(clientHTTPOf(c.l)))
		lis.FilterChains = append(lis.FilterChains, fc)
		// EG patches the QUIC listener as it does the TCP one.
		proxyProtocolFirst(lis, connectionOf(clientHTTPOf(c.l)))
	}
	return lis
}
