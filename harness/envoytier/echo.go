package envoytier

import (
	"bufio"
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/egharness/egharness/harness/live"
)

// echoPool runs one echo server per scenario backend (namespace/name), started the first
// time a scenario needs it and kept for the run. Each listens on its own loopback address
// and answers HTTP/1.1 and HTTP/2 cleartext (h2c, prior knowledge: what Envoy speaks to a
// backend whose appProtocol is h2c, and gRPC) with the request it received and its own
// identity, in echo-basic's JSON shape (live.EchoReply), so the comparison code of the
// kind suite reads it unchanged.
type echoPool struct {
	lo *loopback
	// Requests with HoldHeader wait until release is closed (or 30s): the requests in
	// flight a circuit breaker counts. held counts those waiting.
	holdMu  sync.Mutex
	release chan struct{}
	held    atomic.Int64
	ca      *authority
	// names are the server and subject alt names upstream TLS checks in the scenario
	// being served; TLS leaves carry them.
	tlsNamesNow atomic.Pointer[[]string]
	mu          sync.Mutex
	// byKey: backend key → server; names: echo name → backend key (live.Compare's map).
	byKey map[string]*echoServer
	names map[string]string
}

type echoServer struct {
	name, key, addr string
	srv             *http.Server
	pool            *echoPool
	udp             net.PacketConn
}

// serveUDP answers each datagram with the echo reply: its payload as the path, UDP as the
// method.
func (e *echoServer) serveUDP(pc net.PacketConn) {
	buf := make([]byte, 64<<10)
	for {
		n, from, err := pc.ReadFrom(buf)
		if err != nil {
			return
		}
		b, err := json.Marshal(
			live.EchoReply{Path: string(buf[:n]), Method: "UDP", Namespace: "envoy-tier", Pod: e.name + "-tier-0"})
		if err == nil {
			_, _ = pc.WriteTo(b, from)
		}
	}
}

func newEchoPool(lo *loopback, ca *authority) *echoPool {
	return &echoPool{lo: lo, ca: ca, byKey: map[string]*echoServer{}, names: map[string]string{}}
}

func (p *echoPool) setTLSNames(n []string) { p.tlsNamesNow.Store(&n) }

func (p *echoPool) tlsNames() []string {
	if n := p.tlsNamesNow.Load(); n != nil {
		return *n
	}
	return nil
}

// addrs returns host:port of an echo server for each key, starting the missing ones.
func (p *echoPool) addrs(keys []string) (map[string]string, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := map[string]string{}
	for _, k := range keys {
		e := p.byKey[k]
		if e == nil {
			var err error
			if e, err = p.start(k); err != nil {
				return nil, err
			}
		}
		out[k] = e.addr
	}
	return out, nil
}

func (p *echoPool) start(key string) (*echoServer, error) {
	l, err := net.Listen("tcp", net.JoinHostPort(p.lo.addr(), "0"))
	if err != nil {
		return nil, fmt.Errorf("echo server for %s: %w", key, err)
	}
	e := &echoServer{name: fmt.Sprintf("echo-%d", len(p.byKey)), key: key, addr: l.Addr().String(), pool: p}
	tc := echoTLS(p.ca, p.tlsNames)
	e.srv = &http.Server{Handler: e, Protocols: httpProtocols(), ReadHeaderTimeout: 10 * time.Second, TLSConfig: tc}
	go func() { _ = e.srv.Serve(sniff(l, tc)) }()
	// The same address over UDP, for udp_proxy listeners (a port a UDP socket already
	// holds just leaves the backend without UDP).
	if pc, err := net.ListenPacket("udp", e.addr); err == nil {
		e.udp = pc
		go e.serveUDP(pc)
	}
	p.byKey[key], p.names[e.name] = e, key
	return e, nil
}

// echoes maps echo names to backend keys.
func (p *echoPool) echoes() map[string]string {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := make(map[string]string, len(p.names))
	for k, v := range p.names {
		out[k] = v
	}
	return out
}

func (p *echoPool) close(ctx context.Context) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	var errs []error
	keys := make([]string, 0, len(p.byKey))
	for k := range p.byKey {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if err := p.byKey[k].srv.Shutdown(ctx); err != nil {
			errs = append(errs, err)
		}
		if u := p.byKey[k].udp; u != nil {
			_ = u.Close()
		}
	}
	return errors.Join(errs...)
}

// ServeHTTP answers with the request as it arrived. The pod name ends in two dash-separated
// parts, as a Deployment's pods do, so live.EchoName recovers the echo name.
// HoldHeader on a request makes the echo server hold it open until released.
const HoldHeader = live.HoldHeaderName

// holdChannel is what held requests wait on; releaseHeld lets them all go.
func (p *echoPool) holdChannel() chan struct{} {
	p.holdMu.Lock()
	defer p.holdMu.Unlock()
	if p.release == nil {
		p.release = make(chan struct{})
	}
	return p.release
}

func (p *echoPool) releaseHeld() {
	p.holdMu.Lock()
	defer p.holdMu.Unlock()
	if p.release != nil {
		close(p.release)
		p.release = nil
	}
}

func (e *echoServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Header.Get(HoldHeader) != "" {
		ch := e.pool.holdChannel()
		e.pool.held.Add(1)
		select {
		case <-ch:
		case <-r.Context().Done():
		case <-time.After(30 * time.Second):
		}
		e.pool.held.Add(-1)
	}
	reply := live.EchoReply{
		Path: r.URL.RequestURI(), Host: r.Host, Method: r.Method,
		Namespace: "envoy-tier", Pod: e.name + "-tier-0",
		Headers: map[string][]string{},
	}
	for k, v := range r.Header {
		reply.Headers[k] = v
	}
	body, err := json.Marshal(reply)
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	if strings.HasPrefix(r.Header.Get("Content-Type"), "application/grpc") {
		// A gRPC client reads the status from the trailers; the JSON body is for us.
		w.Header().Set("Trailer", "Grpc-Status")
		defer w.Header().Set("Grpc-Status", "0")
	}
	_, _ = w.Write(body)
}

// httpProtocols are what the stand-in servers answer on one port: HTTP/1.1, HTTP/2 over
// TLS and h2c (Envoy's upstream protocol depends on the cluster).
func httpProtocols() *http.Protocols {
	var protocols http.Protocols
	protocols.SetHTTP1(true)
	protocols.SetHTTP2(true)
	protocols.SetUnencryptedHTTP2(true)
	return &protocols
}

// serveStandIn serves srv, a stand-in for a service EG's configuration names, on a free
// port of a fresh loopback address, with TLS (a certificate of ca) and without alike, and
// returns that address.
func serveStandIn(lo *loopback, ca *authority, srv *http.Server) (string, error) {
	l, err := net.Listen("tcp", net.JoinHostPort(lo.addr(), "0"))
	if err != nil {
		return "", err
	}
	go func() { _ = srv.Serve(sniff(l, echoTLS(ca, nil))) }()
	return l.Addr().String(), nil
}

// sniff serves TLS and cleartext on one port: a connection whose first byte starts a TLS
// handshake (0x16) is wrapped in TLS, others are served as they are. Envoy speaks TLS to a
// backend exactly when the translation says so, so one echo server answers both.
func sniff(l net.Listener, tc *tls.Config) net.Listener {
	s := &sniffer{Listener: l, conns: make(chan net.Conn), done: make(chan struct{})}
	go func() {
		defer close(s.done)
		for {
			c, err := l.Accept()
			if err != nil {
				s.err = err
				return
			}
			go func() {
				_ = c.SetReadDeadline(time.Now().Add(10 * time.Second))
				br := bufio.NewReader(c)
				first, err := br.Peek(1)
				_ = c.SetReadDeadline(time.Time{})
				if err != nil {
					_ = c.Close()
					return
				}
				var out net.Conn = &peeked{Conn: c, r: br}
				if first[0] == 0x16 {
					out = tls.Server(out, tc)
				}
				select {
				case s.conns <- out:
				case <-s.done:
					_ = c.Close()
				}
			}()
		}
	}()
	return s
}

type sniffer struct {
	net.Listener
	conns chan net.Conn
	done  chan struct{}
	err   error
}

func (s *sniffer) Accept() (net.Conn, error) {
	select {
	case c := <-s.conns:
		return c, nil
	case <-s.done:
		return nil, s.err
	}
}

type peeked struct {
	net.Conn
	r *bufio.Reader
}

func (p *peeked) Read(b []byte) (int, error) { return p.r.Read(b) }

// echoTLS is the TLS side of a stand-in: a tier leaf for the server name Envoy sends and
// the names it checks in the scenario being served (names, when set).
func echoTLS(ca *authority, names func() []string) *tls.Config {
	return &tls.Config{
		NextProtos: []string{"h2", "http/1.1"},
		GetCertificate: func(hello *tls.ClientHelloInfo) (*tls.Certificate, error) {
			n := []string{hello.ServerName, "echo.egharness.local"}
			if names != nil {
				n = append(n, names()...)
			}
			return ca.leaf(n)
		},
	}
}
