package ir

// AccessLog is the access logging of a Gateway's proxy, from its EnvoyProxy's
// telemetry.accessLog (EG v1.9 internal/gatewayapi/listener.go processAccessLog): nil is
// EG's default (JSON to /dev/stdout at the listener, for requests that found no route, and
// at the connection manager or proxy), Disabled none at all. Text logs are written before
// JSON ones, each in settings and sinks order, as EG writes them.
type AccessLog struct {
	Disabled bool            `json:"disabled,omitempty"`
	Text     []FileAccessLog `json:"text,omitempty"`
	JSON     []FileAccessLog `json:"json,omitempty"`
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
}
