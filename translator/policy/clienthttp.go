package policy

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strings"
	"time"

	egv1a1 "github.com/envoyproxy/gateway/api/v1alpha1"
	"k8s.io/apimachinery/pkg/api/resource"
	gwapiv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/egharness/egharness/translator/ir"
)

// The HTTP and connection parts of a ClientTrafficPolicy (CTP-02), resolved for one
// listener with EG v1.9's range checks and error messages.

// HTTP/2 window sizes Envoy accepts.
const (
	minHTTP2Window = 65535
	maxHTTP2Window = 2147483647
)

// clientSocket resolves, in EG's order and with its messages, TCP keepalive (errors
// prefixed "TCP KeepAlive"), spec.connection ("Connection"), the PROXY protocol and the TCP
// timeouts ("Timeout") into one ClientConnection; the caller keeps it only when the whole
// policy applies.
func clientSocket(s *egv1a1.ClientTrafficPolicySpec, fail func(string, error)) *ir.ClientConnection {
	var keepalive *ir.TCPKeepalive
	if k := s.TCPKeepalive; k != nil {
		ka := &ir.TCPKeepalive{Probes: k.Probes}
		secs := func(field string, v *gwapiv1.Duration) *uint32 {
			d, err := parseDuration(field, v)
			if err != nil {
				fail("TCP KeepAlive", err)
				return nil
			}
			if d == nil {
				return nil
			}
			n := uint32(d.Seconds())
			return &n
		}
		ka.IdleTime = secs("IdleTime", k.IdleTime)
		ka.Interval = secs("Interval", k.Interval)
		keepalive = ka
	}
	out, err := clientConnection(s.Connection)
	fail("Connection", err)
	if out == nil {
		out = &ir.ClientConnection{}
	}
	out.TCPKeepalive = keepalive
	switch {
	case s.ProxyProtocol != nil:
		out.ProxyProtocol = true
		out.ProxyProtocolOptional = s.ProxyProtocol.Optional != nil && *s.ProxyProtocol.Optional
	case s.EnableProxyProtocol != nil && *s.EnableProxyProtocol:
		out.ProxyProtocol = true
	}
	if t := s.Timeout; t != nil && t.TCP != nil {
		var err error
		if out.TCPIdleTimeout, err = parseDuration("TCP IdleTimeout", t.TCP.IdleTimeout); err != nil {
			fail("Timeout", err)
		}
		if out.TLSHandshakeTimeout, err = parseDuration("TCP TLSHandshakeTimeout", t.TCP.TLSHandshakeTimeout); err != nil {
			fail("Timeout", err)
		}
		if out.ConnectionInspectionTimeout, err = parseDuration("TCP ConnectionInspectionTimeout",
			t.TCP.ConnectionInspectionTimeout); err != nil {
			fail("Timeout", err)
		}
	}
	if *out == (ir.ClientConnection{}) {
		return nil
	}
	return out
}

// clientConnection resolves spec.connection; an error leaves it out whole.
func clientConnection(c *egv1a1.ClientConnection) (*ir.ClientConnection, error) {
	if c == nil {
		return nil, nil
	}
	out := &ir.ClientConnection{MaxAcceptPerSocketEvent: c.MaxAcceptPerSocketEvent}
	if l := c.ConnectionLimit; l != nil {
		if l.Value != nil {
			v := uint64(*l.Value)
			out.MaxConnections = &v
		}
		var err error
		if out.CloseDelay, err = parseDuration("CloseDelay", l.CloseDelay); err != nil {
			return nil, err
		}
		if out.MaxConnectionDuration, err = parseDuration("MaxConnectionDuration", l.MaxConnectionDuration); err != nil {
			return nil, err
		}
		out.MaxRequestsPerConnection = l.MaxRequestsPerConnection
		if out.MaxStreamDuration, err = parseDuration("MaxStreamDuration", l.MaxStreamDuration); err != nil {
			return nil, err
		}
	}
	if q := c.BufferLimit; q != nil {
		v, ok := q.AsInt64()
		if !ok {
			return nil, fmt.Errorf("invalid BufferLimit value %s", q.String())
		}
		if v < 0 || v > math.MaxUint32 {
			return nil, fmt.Errorf("BufferLimit value %s is out of range, must be between 0 and %d", q.String(),
				uint64(math.MaxUint32))
		}
		b := uint32(v)
		out.BufferLimitBytes = &b
	}
	return out, nil
}

func parseDuration[T ~string](field string, v *T) (*time.Duration, error) {
	if v == nil {
		return nil, nil
	}
	d, err := time.ParseDuration(string(*v))
	if err != nil {
		return nil, fmt.Errorf("invalid %s value %s", field, *v)
	}
	return &d, nil
}

// clientHTTP1 resolves spec.http1 for listener l. An HTTP/1.0 default host comes from the
// listener's first exact hostname, else from the one route hostname that is exact; when
// neither gives one the policy fails, keeping the other HTTP/1.1 options.
func clientHTTP1(s *egv1a1.HTTP1Settings, conn *egv1a1.ClientConnection, l *ir.HTTPListener) (*ir.ClientHTTP1, error) {
	if s == nil {
		return nil, nil
	}
	out := &ir.ClientHTTP1{
		EnableTrailers:     s.EnableTrailers != nil && *s.EnableTrailers,
		PreserveHeaderCase: s.PreserveHeaderCase != nil && *s.PreserveHeaderCase,
	}
	for _, m := range s.IgnoredUpgradeTypes {
		out.IgnoredUpgradeTypes = append(out.IgnoredUpgradeTypes, stringMatch("", m))
	}
	if conn != nil && conn.ConnectionLimit != nil && conn.ConnectionLimit.MaxConnectionDuration != nil {
		out.DisableSafeMaxConnectionDuration = s.DisableSafeMaxConnectionDuration != nil &&
			*s.DisableSafeMaxConnectionDuration
	}
	if s.HTTP10 == nil {
		return out, nil
	}
	if s.HTTP10.UseDefaultHost != nil && *s.HTTP10.UseDefaultHost {
		host := ""
		for _, h := range l.Hostnames {
			if !strings.Contains(h, "*") {
				host = h
				break
			}
		}
		if host == "" {
			exact := 0
			for _, r := range l.Routes {
				if r.Hostname != "" && !strings.Contains(r.Hostname, "*") {
					exact++
					host = r.Hostname
				}
				if exact > 1 {
					break
				}
			}
			switch {
			case exact == 0:
				return out, errors.New("cannot set http10 default host on listener with only wildcard hostnames")
			case exact > 1:
				return out, errors.New(
					"cannot set http10 default host on listener with only wildcard hostnames and more than one possible default route")
			}
		}
		out.DefaultHost = host
	}
	out.HTTP10 = true
	return out, nil
}

// clientHTTP2 resolves spec.http2; a window size out of Envoy's range fails the policy.
func clientHTTP2(s *egv1a1.HTTP2Settings) (*ir.ClientHTTP2, error) {
	if s == nil {
		return nil, nil
	}
	out := &ir.ClientHTTP2{MaxConcurrentStreams: s.MaxConcurrentStreams}
	var errs error
	window := func(name string, q *resource.Quantity) *uint32 {
		if q == nil {
			return nil
		}
		v, ok := q.AsInt64()
		switch {
		case !ok:
			errs = errors.Join(errs, fmt.Errorf("invalid %s value %s", name, q.String()))
		case v < minHTTP2Window || v > maxHTTP2Window:
			errs = errors.Join(errs,
				fmt.Errorf("%s value %s is out of range, must be between %d and %d", name, q.String(), minHTTP2Window,
					maxHTTP2Window))
		default:
			w := uint32(v)
			return &w
		}
		return nil
	}
	out.InitialStreamWindowSize = window("InitialStreamWindowSize", s.InitialStreamWindowSize)
	out.InitialConnectionWindowSize = window("InitialConnectionWindowSize", s.InitialConnectionWindowSize)
	if a := s.OnInvalidMessage; a != nil {
		reset := *a == egv1a1.InvalidMessageActionTerminateStream
		if reset || *a == egv1a1.InvalidMessageActionTerminateConnection {
			out.ResetStreamOnError = &reset
		}
	}
	if k := s.ConnectionKeepalive; k != nil {
		ka := &ir.HTTP2Keepalive{IntervalJitter: k.IntervalJitter}
		dur := func(field string, v *gwapiv1.Duration) *time.Duration {
			d, err := time.ParseDuration(string(ptrOr(v)))
			if v == nil {
				return nil
			}
			if err != nil {
				errs = errors.Join(errs, fmt.Errorf("invalid ConnectionKeepalive.%s: %w", field, err))
				return nil
			}
			return &d
		}
		ka.Interval = dur("Interval", k.Interval)
		ka.Timeout = dur("Timeout", k.Timeout)
		ka.IdleInterval = dur("IdleInterval", k.IdleInterval)
		out.Keepalive = ka
	}
	if errs != nil {
		return nil, errs
	}
	return out, nil
}

func ptrOr(v *gwapiv1.Duration) gwapiv1.Duration {
	if v == nil {
		return ""
	}
	return *v
}

// addedMaxRequestHeaderLimit is the v1.10-preview field (the named addition
// ctp-max-request-header-limit) that sets Envoy's max_request_headers_kb.
const addedMaxRequestHeaderLimit = "spec.headers.maxRequestHeaderLimit"

// maxRequestHeadersKB resolves spec.headers.maxRequestHeaderLimit, a quantity of bytes,
// into the whole KiB Envoy takes (rounded up), within what Envoy accepts: 1 to 8192 KiB.
// The wording of the errors is EG's (main branch, after v1.9).
func maxRequestHeadersKB(added map[string]any) (*uint32, error) {
	v, ok := added[addedMaxRequestHeaderLimit]
	if !ok {
		return nil, nil
	}
	js, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	var q resource.Quantity
	if err := json.Unmarshal(js, &q); err != nil {
		return nil, fmt.Errorf("MaxRequestHeaderLimit value %s: %w", js, err)
	}
	const maxKB = 8192
	bytes, exact := q.AsInt64()
	switch {
	case !exact || bytes < 1024:
		return nil, fmt.Errorf("MaxRequestHeaderLimit value %s must be at least 1Ki", q.String())
	case bytes > maxKB*1024:
		return nil, fmt.Errorf("MaxRequestHeaderLimit value %s exceeds the maximum of %dKi", q.String(), maxKB)
	}
	kb := uint32((bytes + 1023) / 1024)
	return &kb, nil
}

// clientHeaders resolves spec.headers (the header mutations and rate limit headers are
// not modeled).
func clientHeaders(s *egv1a1.HeaderSettings) *ir.ClientHeaders {
	if s == nil {
		return nil
	}
	out := &ir.ClientHeaders{
		EnableEnvoyHeaders:    s.EnableEnvoyHeaders != nil && *s.EnableEnvoyHeaders,
		WithUnderscoresAction: string(egv1a1.WithUnderscoresActionRejectRequest),
	}
	if s.WithUnderscoresAction != nil {
		out.WithUnderscoresAction = string(*s.WithUnderscoresAction)
	}
	switch {
	case s.RequestID != nil:
		out.RequestID = string(*s.RequestID)
	case s.PreserveXRequestID != nil && *s.PreserveXRequestID:
		out.RequestID = string(egv1a1.RequestIDActionPreserveOrGenerate)
	}
	if x := s.XForwardedClientCert; x != nil {
		out.XFCCMode = string(egv1a1.XFCCForwardModeSanitize)
		if x.Mode != nil {
			out.XFCCMode = string(*x.Mode)
		}
		if out.XFCCMode == string(egv1a1.XFCCForwardModeAppendForward) ||
			out.XFCCMode == string(egv1a1.XFCCForwardModeSanitizeSet) {
			for _, d := range x.CertDetailsToAdd {
				out.XFCCDetails = append(out.XFCCDetails, string(d))
			}
		}
	}
	if s.Host != nil && s.Host.StripTrailingHostDot != nil {
		out.StripTrailingHostDot = *s.Host.StripTrailingHostDot
	}
	return out
}
