package live

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"
	"unicode"

	"golang.org/x/net/http2"
	"google.golang.org/grpc/codes"

	"github.com/egharness/egharness/harness/scenario"
)

// ErrNotReplayable marks a request the suite cannot send for real (a UDP datagram: the
// echo backends speak HTTP).
var ErrNotReplayable = errors.New("not replayable")

// EchoReply is what an echo-basic backend answers: the request as it arrived and who
// answered.
type EchoReply struct {
	Path      string              `json:"path"`
	Host      string              `json:"host"`
	Method    string              `json:"method"`
	Namespace string              `json:"namespace"`
	Pod       string              `json:"pod"`
	Headers   map[string][]string `json:"headers"`
}

// Header returns the forwarded request's header (":authority" and ":path" are the host and
// path), and whether it was there.
func (e *EchoReply) Header(name string) (string, bool) {
	switch strings.ToLower(name) {
	case ":authority", "host":
		return e.Host, e.Host != ""
	case ":path":
		return e.Path, e.Path != ""
	case ":method":
		return e.Method, e.Method != ""
	}
	for k, v := range e.Headers {
		if strings.EqualFold(k, name) {
			return strings.Join(v, ","), true
		}
	}
	return "", false
}

// Observation is what came back from a real request.
type Observation struct {
	Status   int
	Location string
	Body     string
	// GRPCStatus is the grpc-status of a gRPC answer (header or trailer) as a code name
	// (UNIMPLEMENTED...), "" when the answer has none.
	GRPCStatus string
	// Echo is set when an echo backend answered.
	Echo *EchoReply
	// ContentEncoding is the answer's content-encoding (a compressor filter's gzip...); a
	// gzip body is decoded before it is read.
	ContentEncoding string
	// Err is set when no answer came (refused, reset, closed).
	Err error
	// Cookies are the answer's Set-Cookie cookies.
	Cookies []*http.Cookie
}

// HoldHeaderName asks the Envoy tier's echo servers to hold a request open (see
// envoytier.HoldHeader).
const HoldHeaderName = "X-Egharness-Hold"

// Client sends scenario requests to a real Envoy.
type Client struct {
	// Addr is where Envoy's listener port is reached (host:port).
	Addr func(port uint32) string
	// Timeout bounds one request (default 10s).
	Timeout time.Duration
	// Certificates, when set, are presented to listeners that ask for a client
	// certificate.
	Certificates []tls.Certificate
	// Dial, when set, opens the connections (a net.Dialer's otherwise).
	Dial func(ctx context.Context, network, addr string) (net.Conn, error)
}

func (c Client) dial(ctx context.Context, network, addr string) (net.Conn, error) {
	if c.Dial != nil {
		return c.Dial(ctx, network, addr)
	}
	return (&net.Dialer{}).DialContext(ctx, network, addr)
}

// Do sends one request to Envoy's listener port, over TLS when useTLS (the listener's filter
// chain terminates TLS; see Expectation.TLS) or the request names an SNI.
func (c Client) Do(ctx context.Context, req scenario.Request, port uint32, useTLS bool) Observation {
	useTLS = useTLS || req.SNI != ""
	timeout := c.Timeout
	if timeout == 0 {
		timeout = 10 * time.Second
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	addr := c.Addr(port)
	switch strings.ToUpper(req.Protocol) {
	case "UDP":
		return Observation{Err: fmt.Errorf("%w: a UDP datagram (the echo backends speak HTTP over TCP)", ErrNotReplayable)}
	case "TCP":
		return c.tcp(ctx, req, addr, useTLS)
	}
	return c.http(ctx, req, addr, useTLS)
}

func (c Client) tlsConfig(sni string, alpn ...string) *tls.Config {
	// Scenario certificates are self-signed test certificates: the server name picks the
	// filter chain, nothing is verified.
	return &tls.Config{ServerName: sni, InsecureSkipVerify: true, NextProtos: alpn,
		Certificates: c.Certificates} //nolint:gosec // test traffic
}

func (c Client) http(ctx context.Context, req scenario.Request, addr string, useTLS bool) Observation {
	scheme := "http"
	if useTLS {
		scheme = "https"
	}
	path := req.PathOrDefault()
	method := req.MethodOrDefault()
	var body io.Reader
	if req.GRPC {
		method = http.MethodPost
		body = bytes.NewReader([]byte{0, 0, 0, 0, 0}) // one empty, uncompressed message
	}
	hr, err := http.NewRequestWithContext(ctx, method, scheme+"://"+addr+path, body)
	if err != nil {
		return Observation{Err: err}
	}
	hr.Host = req.Host
	for k, v := range req.Headers {
		hr.Header.Set(k, v)
	}
	var transport http.RoundTripper
	switch {
	case req.GRPC && useTLS:
		transport = &http2.Transport{DialTLSContext: func(ctx context.Context, network, a string, cfg *tls.Config) (net.Conn,
			error) {
			conn, err := c.dial(ctx, network, a)
			if err != nil {
				return nil, err
			}
			tc := tls.Client(conn, cfg)
			if err := tc.HandshakeContext(ctx); err != nil {
				conn.Close()
				return nil, err
			}
			return tc, nil
		}, TLSClientConfig: c.tlsConfig(req.SNI, "h2")}
	case req.GRPC:
		hr.Header.Set("Content-Type", "application/grpc")
		transport = &http2.Transport{
			AllowHTTP: true,
			DialTLSContext: func(ctx context.Context, network, a string, _ *tls.Config) (net.Conn, error) {
				return c.dial(ctx, network, a)
			},
		}
	default:
		transport = &http.Transport{
			TLSClientConfig:   c.tlsConfig(req.SNI, "http/1.1"),
			DialContext:       c.dial,
			DisableKeepAlives: true,
		}
	}
	if req.GRPC {
		hr.Header.Set("Content-Type", "application/grpc")
		hr.Header.Set("TE", "trailers")
	}
	resp, err := transport.RoundTrip(hr)
	if err != nil {
		return Observation{Err: err}
	}
	defer resp.Body.Close()
	return observe(resp)
}

func observe(resp *http.Response) Observation {
	b, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	enc := strings.ToLower(strings.TrimSpace(resp.Header.Get("Content-Encoding")))
	if err == nil && enc == "gzip" {
		// Envoy compressed the answer (BackendTrafficPolicy compressor): read what the
		// backend said.
		var zr *gzip.Reader
		if zr, err = gzip.NewReader(bytes.NewReader(b)); err == nil {
			b, err = io.ReadAll(io.LimitReader(zr, 1<<20))
		}
	}
	o := Observation{Status: resp.StatusCode, Location: resp.Header.Get("Location"), Body: string(b), ContentEncoding: enc,
		Cookies: resp.Cookies()}
	if err != nil {
		o.Err = err
	}
	gs := resp.Header.Get("grpc-status")
	if gs == "" {
		gs = resp.Trailer.Get("grpc-status")
	}
	if gs != "" {
		if n, err := strconv.Atoi(gs); err == nil {
			o.GRPCStatus = CodeName(codes.Code(n))
		}
	}
	var e EchoReply
	if json.Unmarshal(b, &e) == nil && e.Pod != "" {
		o.Echo = &e
	}
	return o
}

// CodeName is a gRPC code as the status names scenarios use (UNIMPLEMENTED, NOT_FOUND).
func CodeName(c codes.Code) string {
	// An underscore goes between a lower-case letter and an upper-case one only: OK stays
	// OK (real Envoy's answers showed the old O_K).
	var b strings.Builder
	prev := rune(0)
	for _, r := range c.String() {
		if unicode.IsUpper(r) && unicode.IsLower(prev) {
			b.WriteByte('_')
		}
		b.WriteRune(unicode.ToUpper(r))
		prev = r
	}
	return b.String()
}

// tcp opens a connection through a tcp_proxy listener (TLS with SNI when the request names
// one: a TLS-terminating listener) and sends an HTTP/1.1 request over it, which the echo
// backend behind the proxy answers.
func (c Client) tcp(ctx context.Context, req scenario.Request, addr string, useTLS bool) Observation {
	conn, err := c.dial(ctx, "tcp", addr)
	if err != nil {
		return Observation{Err: err}
	}
	defer conn.Close()
	if dl, ok := ctx.Deadline(); ok {
		_ = conn.SetDeadline(dl)
	}
	if useTLS {
		tc := tls.Client(conn, c.tlsConfig(req.SNI))
		if err := tc.HandshakeContext(ctx); err != nil {
			return Observation{Err: err}
		}
		conn = tc
	}
	host := req.Host
	if host == "" {
		host = "egharness"
	}
	path := req.PathOrDefault()
	if _, err := fmt.Fprintf(conn, "GET %s HTTP/1.1\r\nHost: %s\r\nConnection: close\r\n\r\n", path, host); err != nil {
		return Observation{Err: err}
	}
	resp, err := http.ReadResponse(bufio.NewReader(conn), &http.Request{Method: http.MethodGet})
	if err != nil {
		return Observation{Err: err}
	}
	defer resp.Body.Close()
	return observe(resp)
}
