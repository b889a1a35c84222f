package xds

import (
	clusterv3 "github.com/envoyproxy/go-control-plane/envoy/config/cluster/v3"
	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	listenerv3 "github.com/envoyproxy/go-control-plane/envoy/config/listener/v3"
	routerv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/http/router/v3"
	proxyprotocolv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/listener/proxy_protocol/v3"
	connlimitv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/network/connection_limit/v3"
	hcmv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/network/http_connection_manager/v3"
	preservecasev3 "github.com/envoyproxy/go-control-plane/envoy/extensions/http/header_formatters/preserve_case/v3"
	httpv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/upstreams/http/v3"
	typev3 "github.com/envoyproxy/go-control-plane/envoy/type/v3"
	"google.golang.org/protobuf/types/known/anypb"
	"google.golang.org/protobuf/types/known/durationpb"
	"google.golang.org/protobuf/types/known/wrapperspb"

	"github.com/egharness/egharness/translator/ir"
)

// A ClientTrafficPolicy's HTTP and connection settings (CTP-02) on the connection manager,
// the filter chain and the Envoy listener.

const connectionLimitFilter = "envoy.filters.network.connection_limit"

func clientHTTPOf(l *ir.HTTPListener) *ir.ClientHTTP {
	if l == nil {
		return nil
	}
	return l.Policies.ClientHTTP
}

// applyClientHTTP changes the connection manager after the listener's resolved policy.
func applyClientHTTP(hcm *hcmv3.HttpConnectionManager, h *ir.ClientHTTP) {
	if h == nil {
		return
	}
	if o := h.HTTP1; o != nil && (o.EnableTrailers || o.PreserveHeaderCase || o.HTTP10 || len(o.IgnoredUpgradeTypes) > 0) {
		p := http1Options(o)
		for i := range o.IgnoredUpgradeTypes {
			p.IgnoreHttp_11Upgrade = append(p.IgnoreHttp_11Upgrade, stringMatcher(&o.IgnoredUpgradeTypes[i]))
		}
		hcm.HttpProtocolOptions = p
	}
	if o := h.HTTP2; o != nil {
		p := hcm.Http2ProtocolOptions
		if o.MaxConcurrentStreams != nil {
			p.MaxConcurrentStreams = u32(*o.MaxConcurrentStreams)
		}
		if o.InitialStreamWindowSize != nil {
			p.InitialStreamWindowSize = u32(*o.InitialStreamWindowSize)
		}
		if o.InitialConnectionWindowSize != nil {
			p.InitialConnectionWindowSize = u32(*o.InitialConnectionWindowSize)
		}
		if o.ResetStreamOnError != nil {
			p.OverrideStreamErrorOnInvalidHttpMessage = wrapperspb.Bool(*o.ResetStreamOnError)
		}
		if k := o.Keepalive; k != nil {
			ka := &corev3.KeepaliveSettings{}
			if k.Interval != nil {
				ka.Interval = durationpb.New(*k.Interval)
			}
			if k.Timeout != nil {
				ka.Timeout = durationpb.New(*k.Timeout)
			}
			if k.IntervalJitter != nil {
				ka.IntervalJitter = &typev3.Percent{Value: float64(*k.IntervalJitter)}
			}
			if k.IdleInterval != nil {
				ka.ConnectionIdleInterval = durationpb.New(*k.IdleInterval)
			}
			p.ConnectionKeepalive = ka
		}
	}
	if h.MatchBackendScheme {
		hcm.SchemeHeaderTransformation = &corev3.SchemeHeaderTransformation{MatchUpstream: true}
	}
	if hd := h.Headers; hd != nil {
		applyClientHeaders(hcm, hd)
	}
	if c := h.Connection; c != nil {
		common := hcm.CommonHttpProtocolOptions
		if c.MaxConnectionDuration != nil {
			common.MaxConnectionDuration = durationpb.New(*c.MaxConnectionDuration)
			hcm.Http1SafeMaxConnectionDuration = h.HTTP1 == nil || !h.HTTP1.DisableSafeMaxConnectionDuration
		}
		if c.MaxRequestsPerConnection != nil {
			common.MaxRequestsPerConnection = u32(*c.MaxRequestsPerConnection)
		}
		if c.MaxStreamDuration != nil {
			common.MaxStreamDuration = durationpb.New(*c.MaxStreamDuration)
		}
	}
}

var (
	underscoresActions = map[string]corev3.HttpProtocolOptions_HeadersWithUnderscoresAction{
		"Allow": corev3.HttpProtocolOptions_ALLOW, "RejectRequest": corev3.HttpProtocolOptions_REJECT_REQUEST,
		"DropHeader": corev3.HttpProtocolOptions_DROP_HEADER,
	}
	xfccModes = map[string]hcmv3.HttpConnectionManager_ForwardClientCertDetails{
		"Sanitize": hcmv3.HttpConnectionManager_SANITIZE, "ForwardOnly": hcmv3.HttpConnectionManager_FORWARD_ONLY,
		"AppendForward": hcmv3.HttpConnectionManager_APPEND_FORWARD, "SanitizeSet": hcmv3.HttpConnectionManager_SANITIZE_SET,
		"AlwaysForwardOnly": hcmv3.HttpConnectionManager_ALWAYS_FORWARD_ONLY,
	}
)

func applyClientHeaders(hcm *hcmv3.HttpConnectionManager, hd *ir.ClientHeaders) {
	if a, ok := underscoresActions[hd.WithUnderscoresAction]; ok {
		hcm.CommonHttpProtocolOptions.HeadersWithUnderscoresAction = a
	}
	if m, ok := xfccModes[hd.XFCCMode]; ok {
		hcm.ForwardClientCertDetails = m
	}
	if len(hd.XFCCDetails) > 0 {
		d := &hcmv3.HttpConnectionManager_SetCurrentClientCertDetails{}
		for _, x := range hd.XFCCDetails {
			switch x {
			case "Cert":
				d.Cert = true
			case "Chain":
				d.Chain = true
			case "DNS":
				d.Dns = true
			case "Subject":
				d.Subject = wrapperspb.Bool(true)
			case "URI":
				d.Uri = true
			}
		}
		hcm.SetCurrentClientCertDetails = d
	}
	switch hd.RequestID {
	case "PreserveOrGenerate":
		hcm.GenerateRequestId, hcm.PreserveExternalRequestId = wrapperspb.Bool(true), true
	case "Preserve":
		hcm.GenerateRequestId, hcm.PreserveExternalRequestId = wrapperspb.Bool(false), true
	case "Disable":
		hcm.GenerateRequestId, hcm.PreserveExternalRequestId = wrapperspb.Bool(false), false
	case "Generate":
		hcm.GenerateRequestId, hcm.PreserveExternalRequestId = wrapperspb.Bool(true), false
	}
	hcm.StripTrailingHostDot = hd.StripTrailingHostDot
	if hd.MaxRequestHeadersKB != nil {
		hcm.MaxRequestHeadersKb = wrapperspb.UInt32(*hd.MaxRequestHeadersKB)
	}
	if hd.EnableEnvoyHeaders {
		for _, f := range hcm.HttpFilters {
			if f.GetName() == routerFilter {
				f.ConfigType = &hcmv3.HttpFilter_TypedConfig{TypedConfig: mustAny(&routerv3.Router{SuppressEnvoyHeaders: false})}
			}
		}
	}
}

// connectionLimit is the connection_limit network filter EG puts before the connection
// manager (or TCP proxy) when the policy caps open connections; nil otherwise.
func connectionLimit(c *ir.ClientConnection, statPrefix string) *listenerv3.Filter {
	if c == nil || c.MaxConnections == nil {
		return nil
	}
	cfg := &connlimitv3.ConnectionLimit{StatPrefix: statPrefix, MaxConnections: wrapperspb.UInt64(*c.MaxConnections)}
	if c.CloseDelay != nil {
		cfg.Delay = durationpb.New(*c.CloseDelay)
	}
	return &listenerv3.Filter{Name: connectionLimitFilter,
		ConfigType: &listenerv3.Filter_TypedConfig{TypedConfig: mustAny(cfg)}}
}

// withConnectionLimit puts the connection limit, if any, before the chain's filters.
func withConnectionLimit(c *ir.ClientConnection, statPrefix string,
	filters ...*listenerv3.Filter) []*listenerv3.Filter {
	if f := connectionLimit(c, statPrefix); f != nil {
		return append([]*listenerv3.Filter{f}, filters...)
	}
	return filters
}

// applyListenerConnection sets the Envoy listener's buffer and accept limits, TCP keepalive
// and inspection timeout after the policy of the Gateway listener it was built from (the
// first on its port).
func applyListenerConnection(lis *listenerv3.Listener, c *ir.ClientConnection) {
	if c == nil {
		return
	}
	if k := c.TCPKeepalive; k != nil {
		lis.SocketOptions = keepaliveOptions(k)
	}
	if c.ConnectionInspectionTimeout != nil {
		lis.ListenerFiltersTimeout = durationpb.New(*c.ConnectionInspectionTimeout)
	}
	if c.BufferLimitBytes != nil {
		lis.PerConnectionBufferLimitBytes = u32(*c.BufferLimitBytes)
	}
	if c.MaxAcceptPerSocketEvent != nil {
		lis.MaxConnectionsToAcceptPerSocketEvent = nil // 0: no limit
		if *c.MaxAcceptPerSocketEvent > 0 {
			lis.MaxConnectionsToAcceptPerSocketEvent = u32(*c.MaxAcceptPerSocketEvent)
		}
	}
}

func connectionOf(h *ir.ClientHTTP) *ir.ClientConnection {
	if h == nil {
		return nil
	}
	return h.Connection
}

// http1Options are the HTTP/1.1 options of a listener's policy that the connection manager
// and the clusters of its routes both take: trailers, header case and HTTP/1.0.
func http1Options(o *ir.ClientHTTP1) *corev3.Http1ProtocolOptions {
	p := &corev3.Http1ProtocolOptions{EnableTrailers: o.EnableTrailers}
	if o.PreserveHeaderCase {
		p.HeaderKeyFormat = &corev3.Http1ProtocolOptions_HeaderKeyFormat{
			HeaderFormat: &corev3.Http1ProtocolOptions_HeaderKeyFormat_StatefulFormatter{
				StatefulFormatter: &corev3.TypedExtensionConfig{Name: "preserve_case",
					TypedConfig: mustAny(&preservecasev3.PreserveCaseFormatterConfig{})},
			},
		}
	}
	if o.HTTP10 {
		p.AcceptHttp_10, p.DefaultHostForHttp_10 = true, o.DefaultHost
	}
	return p
}

const upstreamHTTPOptions = "envoy.extensions.upstreams.http.v3.HttpProtocolOptions"

// applyListenerHTTP1Cluster carries the listener's HTTP/1.1 options (trailers, header case,
// HTTP/1.0) to the upstream side of a cluster its routes create, as EG does: an HTTP/1.1
// cluster gets them as its explicit protocol, one that picks the protocol by ALPN gets them
// for its HTTP/1.1 side, an HTTP/2 cluster is left alone.
func applyListenerHTTP1Cluster(c *clusterv3.Cluster, l *ir.HTTPListener) {
	h := clientHTTPOf(l)
	if h == nil || h.HTTP1 == nil || !(h.HTTP1.EnableTrailers || h.HTTP1.PreserveHeaderCase || h.HTTP1.HTTP10) {
		return
	}
	p1 := http1Options(h.HTTP1)
	opts := &httpv3.HttpProtocolOptions{}
	if a := c.GetTypedExtensionProtocolOptions()[upstreamHTTPOptions]; a != nil {
		if err := a.UnmarshalTo(opts); err != nil {
			return
		}
	}
	switch u := opts.GetUpstreamProtocolOptions().(type) {
	case nil:
		opts.UpstreamProtocolOptions = &httpv3.HttpProtocolOptions_ExplicitHttpConfig_{
			ExplicitHttpConfig: &httpv3.HttpProtocolOptions_ExplicitHttpConfig{
				ProtocolConfig: &httpv3.HttpProtocolOptions_ExplicitHttpConfig_HttpProtocolOptions{HttpProtocolOptions: p1},
			}}
	case *httpv3.HttpProtocolOptions_AutoConfig:
		u.AutoConfig.HttpProtocolOptions = p1
	case *httpv3.HttpProtocolOptions_ExplicitHttpConfig_:
		if u.ExplicitHttpConfig.GetHttp2ProtocolOptions() != nil {
			return
		}
		u.ExplicitHttpConfig.ProtocolConfig = &httpv3.HttpProtocolOptions_ExplicitHttpConfig_HttpProtocolOptions{
			HttpProtocolOptions: p1}
	default:
		return
	}
	if c.TypedExtensionProtocolOptions == nil {
		c.TypedExtensionProtocolOptions = map[string]*anypb.Any{}
	}
	c.TypedExtensionProtocolOptions[upstreamHTTPOptions] = mustAny(opts)
}

// keepaliveOptions are the socket options that turn TCP keepalive on (SOL_SOCKET
// SO_KEEPALIVE) and set its probe count, idle time and interval (SOL_TCP TCP_KEEPCNT,
// TCP_KEEPIDLE, TCP_KEEPINTVL), with Linux's numbers and EG's descriptions.
func keepaliveOptions(k *ir.TCPKeepalive) []*corev3.SocketOption {
	out := []*corev3.SocketOption{{
		Description: "socket option to enable tcp keep alive", Level: 1, Name: 9,
		Value: &corev3.SocketOption_IntValue{IntValue: 1},
	}}
	tcp := func(desc string, name int64, v *uint32) {
		if v != nil {
			out = append(out, &corev3.SocketOption{
				Description: desc, Level: 6, Name: name,
				Value: &corev3.SocketOption_IntValue{IntValue: int64(*v)},
				State: corev3.SocketOption_STATE_PREBIND,
			})
		}
	}
	tcp("socket option for keep alive probes", 6, k.Probes)
	tcp("socket option for keep alive idle time", 4, k.IdleTime)
	tcp("socket option for keep alive interval", 5, k.Interval)
	return out
}

// proxyProtocolFirst puts the PROXY protocol listener filter first on the listener, once,
// when a Gateway listener of its port asks for it.
func proxyProtocolFirst(lis *listenerv3.Listener, c *ir.ClientConnection) {
	if c == nil || !c.ProxyProtocol {
		return
	}
	for _, f := range lis.ListenerFilters {
		if f.GetName() == proxyProtocolFilter {
			return
		}
	}
	f := &listenerv3.ListenerFilter{
		Name: proxyProtocolFilter,
		ConfigType: &listenerv3.ListenerFilter_TypedConfig{TypedConfig: mustAny(
			&proxyprotocolv3.ProxyProtocol{AllowRequestsWithoutProxyProtocol: c.ProxyProtocolOptional})},
	}
	lis.ListenerFilters = append([]*listenerv3.ListenerFilter{f}, lis.ListenerFilters...)
}

// handshakeTimeout bounds the TLS handshake of a filter chain.
func handshakeTimeout(fc *listenerv3.FilterChain, c *ir.ClientConnection) {
	if c != nil && c.TLSHandshakeTimeout != nil {
		fc.TransportSocketConnectTimeout = durationpb.New(*c.TLSHandshakeTimeout)
	}
}

const proxyProtocolFilter = "envoy.filters.listener.proxy_protocol"
