package ir

import "time"

// ClientHTTP is what a ClientTrafficPolicy sets on a listener's downstream HTTP connections
// (CTP-02), resolved and range-checked by the policy stage: HTTP/1.1 and HTTP/2 protocol
// options, HTTP/3, header handling and connection limits. Nil parts leave EG's defaults.
type ClientHTTP struct {
	HTTP1 *ClientHTTP1 `json:"http1,omitempty"`
	HTTP2 *ClientHTTP2 `json:"http2,omitempty"`
	HTTP3 bool         `json:"http3,omitempty"`
	// MatchBackendScheme: the :scheme header follows the upstream transport (scheme:
	// MatchBackend).
	MatchBackendScheme bool `json:"matchBackendScheme,omitempty"`
	// GRPCWebSet: the policy has a grpc block, and GRPCWeb (its enableWeb) alone decides the
	// gRPC-Web filter.
	GRPCWebSet bool              `json:"grpcWebSet,omitempty"`
	GRPCWeb    bool              `json:"grpcWeb,omitempty"`
	Headers    *ClientHeaders    `json:"headers,omitempty"`
	Connection *ClientConnection `json:"connection,omitempty"`
}

// ClientHTTP1 are the HTTP/1.1 options.
type ClientHTTP1 struct {
	EnableTrailers     bool `json:"enableTrailers,omitempty"`
	PreserveHeaderCase bool `json:"preserveHeaderCase,omitempty"`
	// HTTP10 accepts HTTP/1.0 requests; DefaultHost is the host they get when they carry
	// none ("" for none).
	HTTP10      bool   `json:"http10,omitempty"`
	DefaultHost string `json:"defaultHost,omitempty"`
	// IgnoredUpgradeTypes are Upgrade header values Envoy leaves alone.
	IgnoredUpgradeTypes []StringMatch `json:"ignoredUpgradeTypes,omitempty"`
	// DisableSafeMaxConnectionDuration: with a maximum connection duration, HTTP/1.1
	// connections are closed at once instead of after the response in flight.
	DisableSafeMaxConnectionDuration bool `json:"disableSafeMaxConnectionDuration,omitempty"`
}

// ClientHTTP2 are the HTTP/2 options; nil fields keep EG's defaults (100 streams, 64 KiB
// stream window, 1 MiB connection window).
type ClientHTTP2 struct {
	InitialStreamWindowSize     *uint32 `json:"initialStreamWindowSize,omitempty"`
	InitialConnectionWindowSize *uint32 `json:"initialConnectionWindowSize,omitempty"`
	MaxConcurrentStreams        *uint32 `json:"maxConcurrentStreams,omitempty"`
	// ResetStreamOnError: an invalid message resets the stream (true) or closes the
	// connection (false); nil leaves Envoy's default.
	ResetStreamOnError *bool `json:"resetStreamOnError,omitempty"`
	// Keepalive sends HTTP/2 PINGs on idle connections.
	Keepalive *HTTP2Keepalive `json:"keepalive,omitempty"`
}

// HTTP2Keepalive is HTTP/2 connection keepalive.
type HTTP2Keepalive struct {
	Interval       *time.Duration `json:"interval,omitempty"`
	Timeout        *time.Duration `json:"timeout,omitempty"`
	IntervalJitter *uint32        `json:"intervalJitter,omitempty"`
	IdleInterval   *time.Duration `json:"idleInterval,omitempty"`
}

// ClientHeaders is the header handling of the connection manager.
type ClientHeaders struct {
	// EnableEnvoyHeaders: the router adds x-envoy-* headers (EG suppresses them by default).
	EnableEnvoyHeaders bool `json:"enableEnvoyHeaders,omitempty"`
	// WithUnderscoresAction: Allow, RejectRequest (the default) or DropHeader.
	WithUnderscoresAction string `json:"withUnderscoresAction,omitempty"`
	// RequestID: PreserveOrGenerate, Preserve, Generate or Disable; "" for Envoy's default.
	RequestID string `json:"requestID,omitempty"`
	// XFCCMode is how x-forwarded-client-cert is handled (Sanitize by default), with the
	// client certificate details added in the modes that add them.
	XFCCMode    string   `json:"xfccMode,omitempty"`
	XFCCDetails []string `json:"xfccDetails,omitempty"`
	// StripTrailingHostDot removes a trailing dot from the Host header.
	StripTrailingHostDot bool `json:"stripTrailingHostDot,omitempty"`
	// MaxRequestHeadersKB caps the request headers a listener accepts (v1.10-preview's
	// maxRequestHeaderLimit); nil keeps Envoy's 60 KiB.
	MaxRequestHeadersKB *uint32 `json:"maxRequestHeadersKB,omitempty"`
}

// ClientConnection are the limits and socket settings of downstream connections: EG keeps
// them only when the whole policy applies.
type ClientConnection struct {
	// TCPKeepalive turns TCP keepalive on, with probes and seconds of idle time and interval.
	TCPKeepalive *TCPKeepalive `json:"tcpKeepalive,omitempty"`
	// ProxyProtocol expects a PROXY protocol header (optional: connections without one
	// are accepted too).
	ProxyProtocol         bool `json:"proxyProtocol,omitempty"`
	ProxyProtocolOptional bool `json:"proxyProtocolOptional,omitempty"`
	// TCP timeouts: the TLS handshake, the listener filters' inspection, and (TCP proxy)
	// idle connections.
	TLSHandshakeTimeout         *time.Duration `json:"tlsHandshakeTimeout,omitempty"`
	ConnectionInspectionTimeout *time.Duration `json:"connectionInspectionTimeout,omitempty"`
	TCPIdleTimeout              *time.Duration `json:"tcpIdleTimeout,omitempty"`
	// MaxConnections caps open connections (the connection_limit network filter), with
	// CloseDelay before a refused connection is closed.
	MaxConnections           *uint64        `json:"maxConnections,omitempty"`
	CloseDelay               *time.Duration `json:"closeDelay,omitempty"`
	MaxConnectionDuration    *time.Duration `json:"maxConnectionDuration,omitempty"`
	MaxRequestsPerConnection *uint32        `json:"maxRequestsPerConnection,omitempty"`
	MaxStreamDuration        *time.Duration `json:"maxStreamDuration,omitempty"`
	// BufferLimitBytes replaces the listener's 32 KiB per-connection buffer limit.
	BufferLimitBytes *uint32 `json:"bufferLimitBytes,omitempty"`
	// MaxAcceptPerSocketEvent replaces EG's 1; 0 means no limit (the field is left out).
	MaxAcceptPerSocketEvent *uint32 `json:"maxAcceptPerSocketEvent,omitempty"`
}

// TCPKeepalive is TCP keepalive on downstream sockets.
type TCPKeepalive struct {
	Probes   *uint32 `json:"probes,omitempty"`
	IdleTime *uint32 `json:"idleTime,omitempty"` // seconds
	Interval *uint32 `json:"interval,omitempty"` // seconds
}
