package xds

import (
	"strings"

	accesslogv3 "github.com/envoyproxy/go-control-plane/envoy/config/accesslog/v3"
	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	filev3 "github.com/envoyproxy/go-control-plane/envoy/extensions/access_loggers/file/v3"
	routerv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/http/router/v3"
	hcmv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/network/http_connection_manager/v3"
	reqwithoutqueryv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/formatter/req_without_query/v3"
	"google.golang.org/protobuf/types/known/structpb"

	"github.com/egharness/egharness/translator/ir"
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
	filter := func(t string) *accesslogv3.AccessLogFilter {
		if at == logAtListener && t == "" {
			return noRouteFilter()
		}
		return nil
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
		out = append(out, fileLog(l.Path, f, filter(l.Type)))
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
		out = append(out, fileLog(l.Path, f, filter(l.Type)))
	}
	return out
}

const reqWithoutQuery = "%REQ_WITHOUT_QUERY"

// reqWithoutQueryFormatter is the formatter extension a format using %REQ_WITHOUT_QUERY(...)%
// needs.
func reqWithoutQueryFormatter() *corev3.TypedExtensionConfig {
	return &corev3.TypedExtensionConfig{Name: "envoy.formatter.req_without_query", TypedConfig: mustAny(&reqwithoutqueryv3.ReqWithoutQuery{})}
}

func fileLog(path string, f *corev3.SubstitutionFormatString, filter *accesslogv3.AccessLogFilter) *accesslogv3.AccessLog {
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
