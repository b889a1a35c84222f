package ir

import "iter"

// AccessLog is the access logging of a Gateway's proxy, from its EnvoyProxy's
// telemetry.accessLog (EG v1.9 internal/gatewayapi/listener.go processAccessLog): nil is
// EG's default (JSON to /dev/stdout at the listener, for requests that found no route, and
// at the connection manager or proxy), Disabled none at all (also what EG leaves when the
// access log settings fail its checks). Text logs are written before JSON ones, and those
// before OpenTelemetry ones, each in settings and sinks order, as EG writes them.
type AccessLog struct {
	Disabled bool            `json:"disabled,omitempty"`
	Text     []FileAccessLog `json:"text,omitempty"`
	JSON     []FileAccessLog `json:"json,omitempty"`
	// ALS are the gRPC access log service sinks, written after the JSON logs and before
	// the OpenTelemetry ones.
	ALS           []ALSAccessLog           `json:"als,omitempty"`
	OpenTelemetry []OpenTelemetryAccessLog `json:"openTelemetry,omitempty"`
}

// ALSAccessLog is one ALS sink (EG's gRPC access log service): Envoy streams the log
// entries over gRPC to the service behind Destination, a cluster of the proxy's own.
type ALSAccessLog struct {
	// Type and Matches as for a file sink.
	Type    string   `json:"type,omitempty"`
	Matches []string `json:"matches,omitempty"`
	// Destination is the service: named accesslog_als_<setting>_<sink>, speaking HTTP/2.
	Destination *Destination `json:"destination"`
	// Owner is the EnvoyProxy the sink is written in (the cluster's metadata).
	Owner PolicyRef `json:"owner"`
	// LogName is the sink's logName, else <EnvoyProxy namespace>/<name>.
	LogName string `json:"logName"`
	// Service is HTTP (Envoy's http_grpc logger, with the extra headers to log) or TCP
	// (tcp_grpc).
	Service          string   `json:"service"`
	RequestHeaders   []string `json:"requestHeaders,omitempty"`
	ResponseHeaders  []string `json:"responseHeaders,omitempty"`
	ResponseTrailers []string `json:"responseTrailers,omitempty"`
}

// FileAccessLog is one file sink (or /dev/stdout for a setting without sinks).
type FileAccessLog struct {
	Path string `json:"path"`
	// Format is a text log's format string.
	Format string `json:"format,omitempty"`
	// Fields are a JSON log's fields; nil is EG's default set.
	Fields map[string]string `json:"fields,omitempty"`
	// Type is where the log is written: Listener, Route (the connection manager or the TCP
	// and UDP proxies) or Upstream (the router's upstream log); "" is Listener (requests
	// without a route only) and Route.
	Type string `json:"type,omitempty"`
	// Matches are the setting's CEL expressions: the log keeps only the requests every one
	// of them matches.
	Matches []string `json:"matches,omitempty"`
}

// OpenTelemetryAccessLog is one OpenTelemetry sink: the log records go over OTLP/gRPC to
// the collector behind Destination, a cluster of the proxy's own.
type OpenTelemetryAccessLog struct {
	// Type and Matches as for a file sink.
	Type    string   `json:"type,omitempty"`
	Matches []string `json:"matches,omitempty"`
	// Destination is the collector: named accesslog_otel_<setting>_<sink>, its backends
	// (the sink's backendRefs, or its host and port) speaking HTTP/2.
	Destination *Destination `json:"destination"`
	// Owner is the EnvoyProxy the sink is written in (the cluster's metadata).
	Owner PolicyRef `json:"owner"`
	// Authority is the :authority of the export calls ("" leaves it to Envoy).
	Authority string `json:"authority,omitempty"`
	// Headers go with every export call (gRPC initial metadata), in the order written.
	Headers []KeyValue `json:"headers,omitempty"`
	// ResourceAttributes describe the log's source, sorted by key.
	ResourceAttributes []KeyValue `json:"resourceAttributes,omitempty"`
	// Body is the record's body, a format string ("" for none).
	Body string `json:"body,omitempty"`
	// Attributes are the record's attributes, sorted by key; none with no Body either is
	// EG's default JSON fields.
	Attributes []KeyValue `json:"attributes,omitempty"`
}

// KeyValue is one key and its value, where order matters.
type KeyValue struct {
	Key   string `json:"key"`
	Value string `json:"value"`
}

// AccessLogDestinations yields the collector destinations of the listeners' access logs
// (ALS services, then OpenTelemetry collectors, of each access logging) and then of their
// tracing (the providers), each name once
// (the first listener's, in output order: HTTP, TCP, UDP), with the EnvoyProxy that names
// it. They are not routes' destinations (Destinations leaves them out): the stages that
// build clusters and the secrets their TLS contexts name walk them here.
func (x *XDS) AccessLogDestinations() iter.Seq2[PolicyRef, *Destination] {
	return func(yield func(PolicyRef, *Destination) bool) {
		if x == nil {
			return
		}
		var logs []*AccessLog
		var tracing []*Tracing
		for _, l := range x.HTTP {
			logs = append(logs, l.AccessLog)
			if l.Tracing != nil {
				tracing = append(tracing, l.Tracing)
			}
		}
		for _, l := range x.TCP {
			logs = append(logs, l.AccessLog)
		}
		for _, l := range x.UDP {
			logs = append(logs, l.AccessLog)
		}
		seen := map[string]bool{}
		for _, al := range logs {
			if al == nil || al.Disabled {
				continue
			}
			for i := range al.ALS {
				a := &al.ALS[i]
				if a.Destination == nil || seen[a.Destination.Name] {
					continue
				}
				seen[a.Destination.Name] = true
				if !yield(a.Owner, a.Destination) {
					return
				}
			}
			for i := range al.OpenTelemetry {
				o := &al.OpenTelemetry[i]
				if o.Destination == nil || seen[o.Destination.Name] {
					continue
				}
				seen[o.Destination.Name] = true
				if !yield(o.Owner, o.Destination) {
					return
				}
			}
		}
		for _, t := range tracing {
			if t.Destination == nil || seen[t.Destination.Name] {
				continue
			}
			seen[t.Destination.Name] = true
			if !yield(t.Owner, t.Destination) {
				return
			}
		}
	}
}
