package xds

import (
	"sort"
	"strings"

	accesslogv3 "github.com/envoyproxy/go-control-plane/envoy/config/accesslog/v3"
	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	filev3 "github.com/envoyproxy/go-control-plane/envoy/extensions/access_loggers/file/v3"
	celfilterv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/access_loggers/filters/cel/v3"
	grpclogv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/access_loggers/grpc/v3"
	otelv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/access_loggers/open_telemetry/v3"
	routerv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/http/router/v3"
	hcmv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/network/http_connection_manager/v3"
	reqwithoutqueryv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/formatter/req_without_query/v3"
	otlpcommonv1 "go.opentelemetry.io/proto/otlp/common/v1"
	"google.golang.org/protobuf/types/known/structpb"

	"github.com/egharness/egharness/translator/ir"
	"github.com/egharness/egharness/translator/result"
)

// Where an access log is written (EG v1.9 internal/xds/translator/accesslog.go): at the
// listener, at the connection manager or TCP/UDP proxy (Route), at the router (Upstream).
const (
	logAtListener = "Listener"
	logAtRoute    = "Route"
	logAtUpstream = "Upstream"
)

// accessLogs are the access logs of one place for a proxy's access logging: EG's default
// when it has none of its own (JSON to /dev/stdout; at the listener only for requests that
// found no route, response flag NR), none when disabled, else its text logs, then its JSON
// logs, that apply there (a log without a type applies at the listener, again only for NR,
// and at the connection manager or proxy).
func accessLogs(al *ir.AccessLog, at string) []*accesslogv3.AccessLog {
	if al == nil {
		switch at {
		case logAtListener:
			return []*accesslogv3.AccessLog{accessLog(noRouteFilter())}
		case logAtRoute:
			return []*accesslogv3.AccessLog{accessLog(nil)}
		}
		return nil
	}
	if al.Disabled {
		return nil
	}
	var out []*accesslogv3.AccessLog
	applies := func(t string) bool {
		if t != "" {
			return t == at
		}
		return at != logAtUpstream
	}
	filter := func(t string, matches []string) *accesslogv3.AccessLogFilter {
		return accessLogFilter(matches, at == logAtListener && t == "")
	}
	for _, l := range al.Text {
		if !applies(l.Type) {
			continue
		}
		f := &corev3.SubstitutionFormatString{Format: &corev3.SubstitutionFormatString_TextFormatSource{
			TextFormatSource: &corev3.DataSource{Specifier: &corev3.DataSource_InlineString{InlineString: l.Format}},
		}}
		if strings.Contains(l.Format, reqWithoutQuery) {
			f.Formatters = []*corev3.TypedExtensionConfig{reqWithoutQueryFormatter()}
		}
		out = append(out, fileLog(l.Path, f, filter(l.Type, l.Matches)))
	}
	for _, l := range al.JSON {
		if !applies(l.Type) {
			continue
		}
		fields := l.Fields
		if fields == nil {
			fields = accessLogFields
		}
		m := make(map[string]any, len(fields))
		needsFormatter := false
		for k, v := range fields {
			m[k] = v
			needsFormatter = needsFormatter || strings.Contains(v, reqWithoutQuery)
		}
		js, err := structpb.NewStruct(m)
		if err != nil {
			panic(err) // only strings: cannot fail
		}
		f := &corev3.SubstitutionFormatString{Format: &corev3.SubstitutionFormatString_JsonFormat{JsonFormat: js}}
		if needsFormatter {
			f.Formatters = []*corev3.TypedExtensionConfig{reqWithoutQueryFormatter()}
		}
		out = append(out, fileLog(l.Path, f, filter(l.Type, l.Matches)))
	}
	for i := range al.ALS {
		l := &al.ALS[i]
		if !applies(l.Type) {
			continue
		}
		out = append(out, alsLog(l, filter(l.Type, l.Matches)))
	}
	for i := range al.OpenTelemetry {
		l := &al.OpenTelemetry[i]
		if !applies(l.Type) {
			continue
		}
		out = append(out, &accesslogv3.AccessLog{
			Name:       otelLogger,
			Filter:     filter(l.Type, l.Matches),
			ConfigType: &accesslogv3.AccessLog_TypedConfig{TypedConfig: mustAny(otelLogConfig(l))},
		})
	}
	return out
}

// accessLogFilter keeps the requests every CEL expression matches, and at the listener,
// for a log without a type, only those that found no route (NR): one filter alone, several
// under an AND, none when there is nothing to filter.
func accessLogFilter(matches []string, noRoute bool) *accesslogv3.AccessLogFilter {
	var filters []*accesslogv3.AccessLogFilter
	for _, m := range matches {
		filters = append(filters, &accesslogv3.AccessLogFilter{FilterSpecifier: &accesslogv3.AccessLogFilter_ExtensionFilter{
			ExtensionFilter: &accesslogv3.ExtensionFilter{
				Name: celLogFilter,
				ConfigType: &accesslogv3.ExtensionFilter_TypedConfig{TypedConfig: mustAny(
					&celfilterv3.ExpressionFilter{Expression: m})},
			},
		}})
	}
	if noRoute {
		filters = append(filters, noRouteFilter())
	}
	switch len(filters) {
	case 0:
		return nil
	case 1:
		return filters[0]
	}
	return &accesslogv3.AccessLogFilter{FilterSpecifier: &accesslogv3.AccessLogFilter_AndFilter{
		AndFilter: &accesslogv3.AndFilter{Filters: filters},
	}}
}

const (
	otelLogger   = "envoy.access_loggers.open_telemetry"
	celLogFilter = "envoy.access_loggers.extension_filters.cel"
	// otelLogName is the log name EG gives every OpenTelemetry access log.
	otelLogName = "otel_envoy_accesslog"
)

// alsLog is an ALS sink's logger (EG's accesslog.go): Envoy's http_grpc logger, with the
// extra request headers, response headers and trailers to log, or tcp_grpc, streaming to
// the sink's cluster under its log name.
func alsLog(l *ir.ALSAccessLog, filter *accesslogv3.AccessLogFilter) *accesslogv3.AccessLog {
	cc := &grpclogv3.CommonGrpcAccessLogConfig{
		LogName: l.LogName,
		GrpcService: &corev3.GrpcService{
			TargetSpecifier: &corev3.GrpcService_EnvoyGrpc_{EnvoyGrpc: &corev3.GrpcService_EnvoyGrpc{
				ClusterName: l.Destination.Name,
			}}},
		TransportApiVersion: corev3.ApiVersion_V3,
	}
	if l.Service == "TCP" {
		return &accesslogv3.AccessLog{Name: tcpGRPCLogger, Filter: filter,
			ConfigType: &accesslogv3.AccessLog_TypedConfig{TypedConfig: mustAny(
				&grpclogv3.TcpGrpcAccessLogConfig{CommonConfig: cc})}}
	}
	return &accesslogv3.AccessLog{Name: httpGRPCLogger, Filter: filter,
		ConfigType: &accesslogv3.AccessLog_TypedConfig{TypedConfig: mustAny(&grpclogv3.HttpGrpcAccessLogConfig{
			CommonConfig:                    cc,
			AdditionalRequestHeadersToLog:   l.RequestHeaders,
			AdditionalResponseHeadersToLog:  l.ResponseHeaders,
			AdditionalResponseTrailersToLog: l.ResponseTrailers,
		})}}
}

const (
	httpGRPCLogger = "envoy.access_loggers.http_grpc"
	tcpGRPCLogger  = "envoy.access_loggers.tcp_grpc"
)

// otelLogConfig is an OpenTelemetry sink's logger: export calls over gRPC to the sink's
// cluster (with its authority and headers), the resource attributes (an empty list when
// there are none), the body, and the attributes: first the pod's namespace and name (read
// from the proxy's environment), then the sink's own, or EG's default JSON fields when it
// has neither attributes nor a body.
func otelLogConfig(l *ir.OpenTelemetryAccessLog) *otelv3.OpenTelemetryAccessLogConfig {
	var metadata []*corev3.HeaderValue
	for _, h := range l.Headers {
		metadata = append(metadata, &corev3.HeaderValue{Key: h.Key, Value: h.Value})
	}
	cfg := &otelv3.OpenTelemetryAccessLogConfig{
		CommonConfig: &grpclogv3.CommonGrpcAccessLogConfig{
			LogName: otelLogName,
			GrpcService: &corev3.GrpcService{
				TargetSpecifier: &corev3.GrpcService_EnvoyGrpc_{EnvoyGrpc: &corev3.GrpcService_EnvoyGrpc{
					ClusterName: l.Destination.Name,
					Authority:   l.Authority,
				}},
				InitialMetadata: metadata,
			},
			TransportApiVersion: corev3.ApiVersion_V3,
		},
		ResourceAttributes: otelKeyValues(nil, l.ResourceAttributes),
	}
	if l.Body != "" {
		cfg.Body = &otlpcommonv1.AnyValue{Value: &otlpcommonv1.AnyValue_StringValue{StringValue: l.Body}}
	}
	attrs := l.Attributes
	if len(attrs) == 0 && l.Body == "" {
		attrs = defaultLogAttributes()
	}
	cfg.Attributes = otelKeyValues([]ir.KeyValue{
		{Key: "k8s.namespace.name", Value: "%ENVIRONMENT(ENVOY_POD_NAMESPACE)%"},
		{Key: "k8s.pod.name", Value: "%ENVIRONMENT(ENVOY_POD_NAME)%"},
	}, attrs)
	needsFormatter := strings.Contains(l.Body, reqWithoutQuery)
	for _, a := range attrs {
		needsFormatter = needsFormatter || strings.Contains(a.Value, reqWithoutQuery)
	}
	if needsFormatter {
		cfg.Formatters = []*corev3.TypedExtensionConfig{reqWithoutQueryFormatter()}
	}
	return cfg
}

// otelKeyValues is an OTLP key-value list of string values, first then rest.
func otelKeyValues(first, rest []ir.KeyValue) *otlpcommonv1.KeyValueList {
	out := &otlpcommonv1.KeyValueList{}
	for _, kv := range append(append([]ir.KeyValue{}, first...), rest...) {
		out.Values = append(out.Values, &otlpcommonv1.KeyValue{
			Key:   kv.Key,
			Value: &otlpcommonv1.AnyValue{Value: &otlpcommonv1.AnyValue_StringValue{StringValue: kv.Value}},
		})
	}
	return out
}

// defaultLogAttributes are EG's default JSON fields as attributes, sorted by key.
func defaultLogAttributes() []ir.KeyValue {
	out := make([]ir.KeyValue, 0, len(accessLogFields))
	for k, v := range accessLogFields {
		out = append(out, ir.KeyValue{Key: k, Value: v})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Key < out[j].Key })
	return out
}

// addAccessLogClusters adds the cluster of each ALS and OpenTelemetry access log sink once: EG's
// plain cluster speaking HTTP/2, its metadata naming the EnvoyProxy, the collector's
// backends as localities (no metadata for a host and port), upstream TLS where a
// BackendTLSPolicy or the EG Backend asks for it, hostnames resolved by Envoy.
func (t Translator) addAccessLogClusters(out *result.XDS, seen map[string]bool, x *ir.XDS) {
	for owner, d := range x.AccessLogDestinations() {
		if seen[d.Name] {
			continue
		}
		seen[d.Name] = true
		c := extServiceCluster(d, owner, nil)
		out.Clusters = append(out.Clusters, c.cluster)
		if c.dns {
			t.toDNSCluster(c.cluster, c.cla)
			continue
		}
		out.Endpoints = append(out.Endpoints, c.cla)
	}
}

const reqWithoutQuery = "%REQ_WITHOUT_QUERY"

// reqWithoutQueryFormatter is the formatter extension a format using %REQ_WITHOUT_QUERY(...)%
// needs.
func reqWithoutQueryFormatter() *corev3.TypedExtensionConfig {
	return &corev3.TypedExtensionConfig{Name: "envoy.formatter.req_without_query",
		TypedConfig: mustAny(&reqwithoutqueryv3.ReqWithoutQuery{})}
}

func fileLog(path string, f *corev3.SubstitutionFormatString,
	filter *accesslogv3.AccessLogFilter) *accesslogv3.AccessLog {
	return &accesslogv3.AccessLog{
		Name:   fileLogger,
		Filter: filter,
		ConfigType: &accesslogv3.AccessLog_TypedConfig{TypedConfig: mustAny(&filev3.FileAccessLog{
			Path:            path,
			AccessLogFormat: &filev3.FileAccessLog_LogFormat{LogFormat: f},
		})},
	}
}

// applyUpstreamLogs gives the connection manager's router the Upstream access logs, which
// it flushes when the upstream stream ends, as EG does.
func applyUpstreamLogs(hcm *hcmv3.HttpConnectionManager, al *ir.AccessLog) {
	logs := accessLogs(al, logAtUpstream)
	if len(logs) == 0 {
		return
	}
	for _, f := range hcm.HttpFilters {
		if f.GetName() != routerFilter {
			continue
		}
		r := &routerv3.Router{}
		if err := f.GetTypedConfig().UnmarshalTo(r); err != nil {
			panic(err) // the stage built it
		}
		r.UpstreamLog = logs
		r.UpstreamLogOptions = &routerv3.Router_UpstreamAccessLogOptions{FlushUpstreamLogOnUpstreamStream: true}
		f.ConfigType = &hcmv3.HttpFilter_TypedConfig{TypedConfig: mustAny(r)}
	}
}
