package xds

import (
	accesslogv3 "github.com/envoyproxy/go-control-plane/envoy/config/accesslog/v3"
	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	listenerv3 "github.com/envoyproxy/go-control-plane/envoy/config/listener/v3"
	filev3 "github.com/envoyproxy/go-control-plane/envoy/extensions/access_loggers/file/v3"
	grpcstatsv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/http/grpc_stats/v3"
	grpcwebv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/http/grpc_web/v3"
	routerv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/http/router/v3"
	hcmv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/network/http_connection_manager/v3"
	tlsv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/transport_sockets/tls/v3"
	"google.golang.org/protobuf/types/known/structpb"
	"google.golang.org/protobuf/types/known/wrapperspb"

	"github.com/egharness/egharness/translator/ir"
)

// Filter names as Envoy knows them.
const (
	hcmFilter          = "envoy.filters.network.http_connection_manager"
	routerFilter       = "envoy.filters.http.router"
	tlsInspector       = "envoy.filters.listener.tls_inspector"
	tlsTransportSocket = "envoy.transport_sockets.tls"
	grpcWebFilter      = "envoy.filters.http.grpc_web"
	grpcStatsFilter    = "envoy.filters.http.grpc_stats"
	fileLogger         = "envoy.access_loggers.file"
)

// accessLogFields is EG's default JSON access log format (a fact of EG v1.9's output).
var accessLogFields = map[string]string{
	":authority":                        "%REQ(:AUTHORITY)%",
	"bytes_received":                    "%BYTES_RECEIVED%",
	"bytes_sent":                        "%BYTES_SENT%",
	"connection_termination_details":    "%CONNECTION_TERMINATION_DETAILS%",
	"downstream_local_address":          "%DOWNSTREAM_LOCAL_ADDRESS%",
	"downstream_remote_address":         "%DOWNSTREAM_REMOTE_ADDRESS%",
	"duration":                          "%DURATION%",
	"method":                            "%REQ(:METHOD)%",
	"protocol":                          "%PROTOCOL%",
	"requested_server_name":             "%REQUESTED_SERVER_NAME%",
	"response_code":                     "%RESPONSE_CODE%",
	"response_code_details":             "%RESPONSE_CODE_DETAILS%",
	"response_flags":                    "%RESPONSE_FLAGS%",
	"route_name":                        "%ROUTE_NAME%",
	"start_time":                        "%START_TIME%",
	"upstream_cluster":                  "%UPSTREAM_CLUSTER%",
	"upstream_host":                     "%UPSTREAM_HOST%",
	"upstream_local_address":            "%UPSTREAM_LOCAL_ADDRESS%",
	"upstream_transport_failure_reason": "%UPSTREAM_TRANSPORT_FAILURE_REASON%",
	"user-agent":                        "%REQ(USER-AGENT)%",
	"x-envoy-origin-path":               "%REQ(X-ENVOY-ORIGINAL-PATH?:PATH)%",
	"x-envoy-upstream-service-time":     "%RESP(X-ENVOY-UPSTREAM-SERVICE-TIME)%",
	"x-forwarded-for":                   "%REQ(X-FORWARDED-FOR)%",
	"x-request-id":                      "%REQ(X-REQUEST-ID)%",
}

func accessLog(filter *accesslogv3.AccessLogFilter) *accesslogv3.AccessLog {
	fields := make(map[string]any, len(accessLogFields))
	for k, v := range accessLogFields {
		fields[k] = v
	}
	js, err := structpb.NewStruct(fields)
	if err != nil {
		panic(err) // only strings: cannot fail
	}
	return &accesslogv3.AccessLog{
		Name:   fileLogger,
		Filter: filter,
		ConfigType: &accesslogv3.AccessLog_TypedConfig{TypedConfig: mustAny(&filev3.FileAccessLog{
			Path: "/dev/stdout",
			AccessLogFormat: &filev3.FileAccessLog_LogFormat{LogFormat: &corev3.SubstitutionFormatString{
				Format: &corev3.SubstitutionFormatString_JsonFormat{JsonFormat: js},
			}},
		})},
	}
}

// noRouteFilter logs, at the listener, requests that found no route (response flag NR).
func noRouteFilter() *accesslogv3.AccessLogFilter {
	return &accesslogv3.AccessLogFilter{FilterSpecifier: &accesslogv3.AccessLogFilter_ResponseFlagFilter{
		ResponseFlagFilter: &accesslogv3.ResponseFlagFilter{Flags: []string{"NR"}},
	}}
}

func (t Translator) buildListener(l *ir.HTTPListener, routeConfig string, grpc bool,
	policyFilters []*hcmv3.HttpFilter) (*listenerv3.Listener, error) {
	name := t.Naming.Listener(l)
	conn := connectionOf(clientHTTPOf(l))
	lis := &listenerv3.Listener{
		Name:      name,
		Address:   listenAddress(l.Address, l.Port, l.IPv4Compat),
		AccessLog: accessLogs(l.AccessLog, logAtListener),
		DefaultFilterChain: &listenerv3.FilterChain{
			Name: routeConfig, // the port's one route configuration and its chain share a name
			Filters: withConnectionLimit(conn, t.Naming.StatPrefix(l),
				hcmFilterOf(routeConfig, t.Naming.StatPrefix(l), grpc, policyFilters, l)),
		},
		MaxConnectionsToAcceptPerSocketEvent: u32(1),
		PerConnectionBufferLimitBytes:        u32(bufferLimitBytes),
	}
	applyListenerConnection(lis, conn)
	handshakeTimeout(lis.DefaultFilterChain, conn)
	proxyProtocolFirst(lis, conn)
	return lis, nil
}

// buildTLSListener makes the Envoy listener of an HTTPS port: a filter chain per Gateway
// listener, chosen by SNI (a listener without hostname matches any name), each terminating
// TLS with its certificates from SDS and routing with its own route configuration.
func (t Translator) buildTLSListener(el *envoyListener) *listenerv3.Listener {
	lis := &listenerv3.Listener{
		Name:                                 t.Naming.Listener(el.first),
		Address:                              listenAddress(el.first.Address, el.first.Port, el.first.IPv4Compat),
		AccessLog:                            accessLogs(el.first.AccessLog, logAtListener),
		MaxConnectionsToAcceptPerSocketEvent: u32(1),
		PerConnectionBufferLimitBytes:        u32(bufferLimitBytes),
	}
	applyListenerConnection(lis, connectionOf(clientHTTPOf(el.first)))
	// Like EG, the TLS inspector only where a chain matches server names or its policy asks
	// for client fingerprints; the first such chain configures it.
	for _, c := range el.chains {
		fp := fingerprintsOf(c.l)
		if c.l.Hostnames[0] != "*" || len(fp) > 0 {
			lis.ListenerFilters = []*listenerv3.ListenerFilter{tlsInspectorFilter(fp)}
			break
		}
	}
	for _, c := range el.chains {
		fc := &listenerv3.FilterChain{
			Name: c.l.Name,
			Filters: withConnectionLimit(connectionOf(clientHTTPOf(c.l)), t.Naming.StatPrefix(c.l),
				hcmFilterOf(c.rc.Name, t.Naming.StatPrefix(c.l), c.l.GRPC, c.filters.filters(), c.l)),
			TransportSocket: downstreamTLS(c.l.TLS, c.l.Policies.ClientTLS),
		}
		if h := c.l.Hostnames[0]; h != "*" {
			fc.FilterChainMatch = &listenerv3.FilterChainMatch{ServerNames: []string{h}}
		}
		handshakeTimeout(fc, connectionOf(clientHTTPOf(c.l)))
		lis.FilterChains = append(lis.FilterChains, fc)
	}
	for _, c := range el.chains {
		proxyProtocolFirst(lis, connectionOf(clientHTTPOf(c.l)))
	}
	return lis
}

// downstreamTLS terminates TLS for HTTPS: ALPN offers HTTP/2 unless overlapping
// certificates forbid it (a ClientTrafficPolicy's ALPN overrides both, TLS-09).
func downstreamTLS(cfg *ir.TLSConfig, ctp *ir.DownstreamTLS) *corev3.TransportSocket {
	alpn := []string{"h2", "http/1.1"}
	if cfg.HTTP11Only {
		alpn = []string{"http/1.1"}
	}
	return terminatingTLS(cfg, alpn, ctp)
}

// buildTLSSecret is the SDS secret of a listener certificate (TLS-02).
func buildTLSSecret(c ir.TLSCertificate) *tlsv3.Secret {
	return &tlsv3.Secret{
		Name: c.Name,
		Type: &tlsv3.Secret_TlsCertificate{TlsCertificate: &tlsv3.TlsCertificate{
			CertificateChain: &corev3.DataSource{Specifier: &corev3.DataSource_InlineBytes{InlineBytes: c.Certificate}},
			PrivateKey:       &corev3.DataSource{Specifier: &corev3.DataSource_InlineBytes{InlineBytes: c.PrivateKey}},
		}},
	}
}

// hcmFilterOf is the connection manager of a route configuration: the policy filters its
// routes use, the gRPC filters, and the router, in EG's order; l is the IR listener whose
// ClientTrafficPolicy applies to the connection manager.
func hcmFilterOf(routeConfig, statPrefix string, grpc bool, policyFilters []*hcmv3.HttpFilter,
	l *ir.HTTPListener) *listenerv3.Filter {
	return wrapHCM(hcmOf(routeConfig, statPrefix, grpc, policyFilters, l))
}

func wrapHCM(hcm *hcmv3.HttpConnectionManager) *listenerv3.Filter {
	return &listenerv3.Filter{Name: hcmFilter, ConfigType: &listenerv3.Filter_TypedConfig{TypedConfig: mustAny(hcm)}}
}

// hcmOf builds the connection manager hcmFilterOf wraps (the QUIC listener of an HTTP/3
// port takes the same one with the HTTP/3 codec).
func hcmOf(routeConfig, statPrefix string, grpc bool, policyFilters []*hcmv3.HttpFilter,
	l *ir.HTTPListener) *hcmv3.HttpConnectionManager {
	own := append([]*hcmv3.HttpFilter(nil), policyFilters...) // never the caller's backing array
	filters := append(append(own, grpcFiltersOf(grpc, clientHTTPOf(l), l.GRPCStats)...), &hcmv3.HttpFilter{
		Name:       routerFilter,
		ConfigType: &hcmv3.HttpFilter_TypedConfig{TypedConfig: mustAny(&routerv3.Router{SuppressEnvoyHeaders: true})},
	})
	sortHTTPFilters(filters)
	filters = applyFilterOrder(filters, l.FilterOrder)
	hcm := &hcmv3.HttpConnectionManager{
		StatPrefix: statPrefix,
		RouteSpecifier: &hcmv3.HttpConnectionManager_Rds{Rds: &hcmv3.Rds{
			ConfigSource:    adsSource(),
			RouteConfigName: routeConfig,
		}},
		HttpFilters: filters,
		AccessLog:   accessLogs(l.AccessLog, logAtRoute),
		CommonHttpProtocolOptions: &corev3.HttpProtocolOptions{
			HeadersWithUnderscoresAction: corev3.HttpProtocolOptions_REJECT_REQUEST,
		},
		Http2ProtocolOptions: &corev3.Http2ProtocolOptions{
			InitialConnectionWindowSize: u32(1048576),
			InitialStreamWindowSize:     u32(65536),
			MaxConcurrentStreams:        u32(100),
		},
		MergeSlashes:                 true,
		NormalizePath:                boolValue(true),
		PathWithEscapedSlashesAction: hcmv3.HttpConnectionManager_UNESCAPE_AND_REDIRECT,
		ServerHeaderTransformation:   hcmv3.HttpConnectionManager_PASS_THROUGH,
		UseRemoteAddress:             boolValue(true),
		Tracing:                      hcmTracing(l.Tracing),
	}
	applyClientTraffic(hcm, l)
	applyClientHTTP(hcm, clientHTTPOf(l))
	applyUpstreamLogs(hcm, l.AccessLog)
	return hcm
}

// grpcFilters are the filters EG puts before the router on a port that serves a GRPCRoute:
// gRPC-Web translation and per-method gRPC stats (GR-04).
// grpcFiltersOf: a ClientTrafficPolicy's grpc block decides gRPC-Web by itself (on for an
// HTTPRoute-only listener, off on a GRPCRoute one, and off when enableWeb is unset, as EG
// does); gRPC stats stay with GRPCRoutes unless the EnvoyProxy's
// telemetry.metrics.enableGRPCStats is set, which then decides alone (EG's
// envoyproxy-metric-grpc: true adds them to an HTTPRoute-only listener, false removes them
// from a GRPCRoute one).
func grpcFiltersOf(grpc bool, h *ir.ClientHTTP, statsSetting *bool) []*hcmv3.HttpFilter {
	web, stats := grpc, grpc
	if statsSetting != nil {
		stats = *statsSetting
	}
	if h != nil && h.GRPCWebSet {
		web = h.GRPCWeb
	}
	var out []*hcmv3.HttpFilter
	if web {
		out = append(out,
			&hcmv3.HttpFilter{Name: grpcWebFilter,
				ConfigType: &hcmv3.HttpFilter_TypedConfig{TypedConfig: mustAny(&grpcwebv3.GrpcWeb{})}})
	}
	if stats {
		out = append(out,
			&hcmv3.HttpFilter{Name: grpcStatsFilter,
				ConfigType: &hcmv3.HttpFilter_TypedConfig{TypedConfig: mustAny(&grpcstatsv3.FilterConfig{
					EmitFilterState:        true,
					PerMethodStatSpecifier: &grpcstatsv3.FilterConfig_StatsForAllMethods{StatsForAllMethods: wrapperspb.Bool(true)},
				})}})
	}
	return out
}
