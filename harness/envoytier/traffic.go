package envoytier

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	clusterv3 "github.com/envoyproxy/go-control-plane/envoy/config/cluster/v3"
	endpointv3 "github.com/envoyproxy/go-control-plane/envoy/config/endpoint/v3"

	"github.com/egharness/egharness/harness/live"
	"github.com/egharness/egharness/harness/routecheck"
	"github.com/egharness/egharness/harness/scenario"
	"github.com/egharness/egharness/translator/result"
)

// Sending a scenario's traffic through Envoy: each request, UDP datagram or PROXY protocol
// connection of expect.traffic, the requests sent before one (rate limits) or held in
// flight (circuit breakers), and the answer Envoy gives for a cluster with no host.

// replay sends one expectation and compares. A request that disagrees is sent again a few
// times: Envoy hands new listeners to its worker thread just after they warm, and a
// weighted split may land on another share.
//
// listenIP is the address a listener binds: when Gateways share a port each Gateway's
// listeners have their own (as on their own Envoy), and the request goes to the address of
// the listener the route checker picked (a request names its Gateway there).
func (t *Tier) replay(ctx context.Context, client live.Client, listenIP func(listener string) string,
	table *routecheck.Table, res *result.Result, i int, te scenario.TrafficExpect, echoes map[string]string) Request {
	r := Request{Index: i, Name: te.Name}
	exp := live.ExpectWith(table, res, te.Request,
		live.ExpectOptions{ClientAddress: true, DNSBackends: true, MaxInflight: maxInflight, MaxAfter: maxAfter,
			OAuth2Login: true})
	ip := listenIP(exp.Answer.Listener)
	client.Addr = func(port uint32) string { return fmt.Sprintf("%s:%d", ip, port) }
	r.Offline = describeExpectation(exp)
	hostless := exp.Skip != "" && exp.Answer.Cluster != "" && exp.Answer.Status == 200 &&
		hostlessCluster(&res.XDS, exp.Answer.Cluster)
	if exp.Skip != "" && !hostless {
		r.NotReplayed = exp.Skip
		return r
	}
	port := live.EnvoyPort(&res.XDS, te.Request.Port)
	sent := t.jwt.resign(te.Request)
	if te.Request.ClientIP != "" {
		client.Dial = proxyDialer(te.Request.ClientIP)
	}
	if n := te.Request.Inflight; n > 0 {
		// Hold n requests open to the same route first: the circuit breaker counts them.
		release, err := t.holdInflight(ctx, client, sent, port, exp.TLS, int(n))
		defer release()
		if err != nil {
			r.NotReplayed = err.Error()
			return r
		}
	}
	// Each expectation starts with fresh rate limit counters, as the route checker counts
	// only the requests it says were sent before (after).
	t.svc.rls.Reset()
	if n := te.Request.After; n > 0 {
		if err := t.sendBefore(ctx, client, sent, port, exp.TLS, int(n)); err != nil {
			r.NotReplayed = err.Error()
			return r
		}
	}
	if te.Request.OAuth2Login {
		// Sign in first; the request then goes with Envoy's session cookies.
		first := sent
		first.OAuth2Login = false
		cookies, err := t.idp.login(ctx, client, first, port, exp.TLS)
		if err != nil {
			r.Live = "no answer: " + err.Error()
			r.VsChecker = []string{"the OAuth2 login failed live: " + err.Error()}
			return r
		}
		h := map[string]string{}
		for k, v := range sent.Headers {
			h[k] = v
		}
		c := cookieHeader(cookies)
		if old := h["cookie"]; old != "" {
			c = old + "; " + c
		}
		h["cookie"] = c
		sent.Headers = h
	}
	for attempt := 0; ; attempt++ {
		t.svc.rls.ForgetCalls()
		var obs live.Observation
		if strings.EqualFold(sent.Protocol, "UDP") {
			obs = sendUDP(ctx, client.Addr(port), sent, t.opts.RequestTimeout)
		} else {
			obs = client.Do(ctx, sent, port, exp.TLS)
		}
		if live.IsNotReplayable(obs) {
			r.NotReplayed = obs.Err.Error()
			return r
		}
		r.Live = describeObservation(obs, echoes)
		if hostless {
			// A cluster without any host (EG's EmptyCluster): Envoy closes a TCP
			// connection it cannot proxy and answers an HTTP request 503 itself.
			r.Offline += " (a cluster without hosts: " + hostlessAnswer(exp) + ")"
			r.VsChecker, r.VsScenario = hostlessDiffs(exp, obs), nil
			return r
		}
		r.VsChecker = live.Compare(exp, te.Request, te.Expect, obs, echoes)
		r.VsChecker = append(r.VsChecker, compareRateLimitCalls(exp, t.svc.rls.Calls())...)
		r.VsScenario = compareScenario(te.Request, te.Expect, exp, obs, echoes, res)
		agreed := len(r.VsChecker) == 0 && len(r.VsScenario) == 0
		// Only a refused connection (a listener not on the worker yet) or a weighted split
		// is worth another try; anything else answers the same again.
		retry := (exp.Weighted() || (obs.Err != nil && errors.Is(obs.Err, syscall.ECONNREFUSED))) && te.Request.After == 0
		if agreed || !retry || attempt >= 4 || ctx.Err() != nil {
			return r
		}
		time.Sleep(time.Duration(50*(attempt+1)) * time.Millisecond)
	}
}

// sendUDP sends one datagram through a udp_proxy listener; the echo backend behind it
// answers with its name. No answer within the timeout is an error (Envoy drops what it
// cannot proxy).
func sendUDP(ctx context.Context, addr string, req scenario.Request, timeout time.Duration) live.Observation {
	conn, err := (&net.Dialer{}).DialContext(ctx, "udp", addr)
	if err != nil {
		return live.Observation{Err: err}
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(timeout))
	payload := req.Path
	if payload == "" {
		payload = "/"
	}
	if _, err := conn.Write([]byte(payload)); err != nil {
		return live.Observation{Err: err}
	}
	buf := make([]byte, 64<<10)
	n, err := conn.Read(buf)
	if err != nil {
		return live.Observation{Err: fmt.Errorf("no datagram back: %w", err)}
	}
	var e live.EchoReply
	if err := json.Unmarshal(buf[:n], &e); err != nil || e.Pod == "" {
		return live.Observation{Err: fmt.Errorf("an answer that is no echo reply: %q", buf[:n])}
	}
	return live.Observation{Status: 200, Echo: &e, Body: string(buf[:n])}
}

// hostlessCluster reports whether the named cluster exists and has no host at all. A
// dynamic forward proxy cluster (an EG DynamicResolver Backend) has none of its own: it
// resolves the request's host, and scenarios name hosts that never resolve (.invalid), so
// Envoy answers 503 (dns_resolution_failure) as for a cluster without hosts.
func hostlessCluster(x *result.XDS, name string) bool {
	for _, c := range x.Clusters {
		if c.GetName() != name {
			continue
		}
		if c.GetClusterType().GetName() == "envoy.clusters.dynamic_forward_proxy" {
			return true
		}
		if la := c.GetLoadAssignment(); la != nil {
			return countHosts(la.GetEndpoints()) == 0
		}
		for _, cla := range x.Endpoints {
			if cla.GetClusterName() == name || cla.GetClusterName() == c.GetEdsClusterConfig().GetServiceName() {
				return countHosts(cla.GetEndpoints()) == 0
			}
		}
		return c.GetType() == clusterv3.Cluster_STATIC
	}
	return false
}

func countHosts(ls []*endpointv3.LocalityLbEndpoints) int {
	n := 0
	for _, l := range ls {
		n += len(l.GetLbEndpoints())
	}
	return n
}

func hostlessAnswer(exp live.Expectation) string {
	if exp.Answer.L4 {
		return "the connection is closed"
	}
	return "Envoy answers 503"
}

func hostlessDiffs(exp live.Expectation, obs live.Observation) []string {
	switch {
	case exp.Answer.L4 && obs.Err == nil:
		return []string{fmt.Sprintf("the connection to a cluster without hosts was proxied and answered %d", obs.Status)}
	case !exp.Answer.L4 && obs.Err != nil:
		return []string{"no answer from a route to a cluster without hosts: " + obs.Err.Error()}
	case !exp.Answer.L4 && (obs.Status != 503 || obs.Echo != nil):
		return []string{fmt.Sprintf("status %d from a route to a cluster without hosts, Envoy answers 503", obs.Status)}
	}
	return nil
}

// proxyDialer opens connections that start with a PROXY protocol (v1) header naming
// clientIP as the source, so Envoy takes the connection as coming from there.
func proxyDialer(clientIP string) func(ctx context.Context, network, addr string) (net.Conn, error) {
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		conn, err := (&net.Dialer{}).DialContext(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		src, err := netip.ParseAddr(clientIP)
		if err != nil {
			conn.Close()
			return nil, fmt.Errorf("clientIP %q: %w", clientIP, err)
		}
		dst := conn.RemoteAddr().(*net.TCPAddr)
		fam := "TCP4"
		if src.Is6() && !src.Is4In6() {
			fam = "TCP6"
		}
		if _, err := fmt.Fprintf(conn, "PROXY %s %s %s %d %d\r\n", fam, src.Unmap(), dst.IP, 40000, dst.Port); err != nil {
			conn.Close()
			return nil, err
		}
		return conn, nil
	}
}

// maxAfter is the most requests the tier sends before a request to stage its after count.
const maxAfter = 1000

// sendBefore sends n requests like req, one after another, before req itself: rate limits
// count them. Each must be answered (by a backend or by Envoy itself).
func (t *Tier) sendBefore(ctx context.Context, client live.Client, req scenario.Request, port uint32, useTLS bool,
	n int) error {
	for i := 0; i < n; i++ {
		if obs := client.Do(ctx, req, port, useTLS); obs.Err != nil {
			return fmt.Errorf("request %d of the %d sent before it: %w", i+1, n, obs.Err)
		}
	}
	return nil
}

// maxInflight is the most requests the tier holds open to stage a request's inflight count.
const maxInflight = 1000

// holdInflight sends n requests like req that the echo servers hold open, and returns once
// Envoy has them all in flight (every one held by a backend, or refused by Envoy itself,
// e.g. by the circuit breaker); release lets them finish. Requests that end otherwise (a
// timeout, a reset) leave the count short: the request is then not replayed.
func (t *Tier) holdInflight(ctx context.Context, client live.Client, req scenario.Request, port uint32, useTLS bool,
	n int) (func(), error) {
	hold := req
	hold.Headers = map[string]string{live.HoldHeaderName: "1"}
	for k, v := range req.Headers {
		hold.Headers[k] = v
	}
	holder := client
	holder.Timeout = 60 * time.Second // held until released, not cut by the request timeout
	hctx, cancel := context.WithCancel(ctx)
	base := t.echo.held.Load()
	var refused, failed atomic.Int64
	var wg sync.WaitGroup
	release := func() {
		// Let the held requests finish normally (not reset), so Envoy counts none of
		// them by the time the next scenario or request runs.
		t.echo.releaseHeld()
		wg.Wait()
		cancel()
	}
	settled := func() int64 { return t.echo.held.Load() - base + refused.Load() + failed.Load() }
	deadline := time.Now().Add(20 * time.Second)
	// One at a time: each request is held or refused before the next is sent, so Envoy
	// never has more than one waiting for a connection and refuses one only at the
	// breaker's real limit (in flight or connections), not for a burst of pending ones.
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			obs := holder.Do(hctx, hold, port, useTLS)
			switch {
			case hctx.Err() != nil:
			case obs.Err == nil && obs.Echo == nil:
				refused.Add(1)
			default:
				failed.Add(1)
			}
		}()
		for settled() < int64(i+1) {
			if time.Now().After(deadline) {
				break
			}
			time.Sleep(time.Millisecond)
		}
		if failed.Load() > 0 || time.Now().After(deadline) {
			held := t.echo.held.Load() - base
			release()
			return func() {},
				fmt.Errorf("%d requests in flight could not be staged: %d held by the backend, %d refused by Envoy, %d failed", n,
					held, refused.Load(), failed.Load())
		}
	}
	return release, nil
}
