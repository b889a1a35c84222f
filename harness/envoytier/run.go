package envoytier

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	clusterv3 "github.com/envoyproxy/go-control-plane/envoy/config/cluster/v3"
	endpointv3 "github.com/envoyproxy/go-control-plane/envoy/config/endpoint/v3"
	resourcev3 "github.com/envoyproxy/go-control-plane/pkg/resource/v3"

	"github.com/egharness/egharness/harness/live"
	"github.com/egharness/egharness/harness/ratelimitsvc"
	"github.com/egharness/egharness/harness/routecheck"
	"github.com/egharness/egharness/harness/scenario"
	"github.com/egharness/egharness/harness/xdsserver"
	"github.com/egharness/egharness/translator/result"
	"github.com/egharness/egharness/translator/xds"
)

// Run serves one scenario's translation (res; translated here with the reference
// translator when nil or without its IR) to Envoy, waits for the ACK, and replays its
// traffic. Nothing it meets stops a run: a panic becomes the outcome's error.
//
// Envoy 1.39.3 now and then crashes (a segmentation fault on a worker thread) while
// listeners of the previous scenario close: when Envoy exits or hangs during a scenario,
// a new Envoy is started and the scenario runs once more; the outcome keeps a note with
// the first attempt's error and Restarts counts it.
func (t *Tier) Run(ctx context.Context, sc *scenario.Scenario, prof string, res *result.Result) *Outcome {
	before := t.restarts
	o := t.runOnce(ctx, sc, prof, res)
	if o.Err == nil || t.restarts == before || ctx.Err() != nil {
		return o
	}
	again := t.runOnce(ctx, sc, prof, res)
	again.Notes = append(again.Notes, "Envoy exited or hung during a first attempt, was started again and the scenario ran again; the first attempt: "+firstLines(o.Err.Error(), 3))
	again.Duration += o.Duration
	return again
}

func firstLines(s string, n int) string {
	lines := strings.SplitN(s, "\n", n+1)
	if len(lines) > n {
		lines = append(lines[:n], "…")
	}
	return strings.Join(lines, "\n")
}

func (t *Tier) runOnce(ctx context.Context, sc *scenario.Scenario, prof string, res *result.Result) (o *Outcome) {
	start := time.Now()
	o = &Outcome{Scenario: sc.Name, Profile: prof, File: sc.File}
	defer func() {
		if r := recover(); r != nil {
			o.Err = fmt.Errorf("panic in the Envoy tier: %v\n%s", r, debug.Stack())
		}
		o.Duration = time.Since(start)
	}()
	traffic := sc.ExpectFor(prof).Traffic
	notReplayed := func(why string) {
		for i, te := range traffic {
			o.Requests = append(o.Requests, Request{Index: i, Name: te.Name, NotReplayed: why})
		}
	}
	if res == nil || res.IR == nil {
		l, err := xdsserver.Translate(sc, prof)
		if err != nil {
			o.Err = err
			return o
		}
		res = l.Result
	}
	// A translation without listeners or clusters is served too: Envoy must take the empty
	// configuration (and drop the previous scenario's).
	// Gateways that bind one port (EG gives each its own Envoy): each Gateway's listeners
	// get an address of their own, as its own Envoy would have; a request names its
	// Gateway (gateway:), and goes to that Gateway's address.
	conflicts := xdsserver.PortConflicts(&res.XDS)
	if err := t.envoy.alive(); err != nil {
		if rerr := t.revive(ctx, err); rerr != nil {
			o.Err = rerr
			return o
		}
	}
	defer func() {
		// Envoy exited or stopped answering during this scenario: the scenario says so
		// (with Envoy's log), and the next one gets a new Envoy.
		if o.Err != nil && (t.envoy.alive() != nil || errors.Is(o.Err, context.DeadlineExceeded)) {
			if rerr := t.revive(ctx, o.Err); rerr != nil {
				o.Err = rerr
			}
		}
	}()
	addrs, err := t.echo.addrs(append(live.Backends(res.IR), dnsBackends(res)...))
	if err != nil {
		o.Err = err
		return o
	}
	moved, err := live.RewriteEndpoints(&res.XDS, res.IR, addrs)
	if err != nil {
		o.Err = err
		return o
	}
	ip := t.lo.addr()
	sinkHost, sinkPort := t.sinkHostPort()
	listenIP := func(string) string { return ip }
	if len(conflicts) > 0 {
		byGateway := map[string]string{}
		listenIP = func(listener string) string {
			gw := gatewayOf(listener)
			if byGateway[gw] == "" {
				byGateway[gw] = t.lo.addr()
			}
			return byGateway[gw]
		}
	}

	// First the translation as it is, but for what the machine forces: addresses on
	// loopback, upstreams on the sink, files EG mounts, secrets that come from outside the
	// translation (external SDS servers, EG's controller). Envoy must ACK that, so a
	// stand-in below (a trusted CA, a key set) never hides xDS Envoy would refuse.
	plain := *res
	plain.XDS = *onLoopbackBy(&res.XDS, listenIP, sinkHost, sinkPort)
	secretStandIns(&plain.XDS, t.ca.certPEM, t.standIn, fileSubstitutes(t.dir))
	standInGeoIP(&plain.XDS, t.geoDBs)
	v1, _, err := t.srv.Update(ctx, &xdsserver.Loaded{Source: fmt.Sprintf("scenario %s (%s), as translated", sc.Name, sc.File), Profile: prof, Result: &plain})
	if err != nil {
		o.Err = fmt.Errorf("serving the translation: %w", err)
		return o
	}
	o.Version = v1
	recorded := t.recorded(sc, prof)
	if err := t.wait(ctx, o, &plain.XDS, false); err != nil {
		o.Err = err
		if o.Nack != "" {
			o.Err = nil
			o.NackRecorded = recorded["nack"]
		}
		notReplayed("Envoy did not accept the xDS")
		return o
	}

	// Then with the stand-ins: echo backends, trust, secrets, keys, services.
	served := *res
	served.XDS = *onLoopbackBy(moved, listenIP, sinkHost, sinkPort)
	moveDNSBackends(&served.XDS, res, addrs)
	tr := rewriteTrust(&served.XDS, t.ca.certPEM, t.standIn, fileSubstitutes(t.dir))
	standInGeoIP(&served.XDS, t.geoDBs)
	t.echo.setTLSNames(tr.names)
	pointAt(&served.XDS, t.jwt.rewriteProviders(&served.XDS), t.jwt.addr)
	pointAt(&served.XDS, extServiceClusters(&served.XDS), t.svc.addr)
	// The OIDC providers: token endpoint clusters point at the stand-in.
	pointAt(&served.XDS, t.idp.configure(&served.XDS), t.idp.addr)
	// EG's rate limit service: the stand-in holds the limits EG would hand it.
	pointAt(&served.XDS, map[string]bool{rateLimitCluster: true}, t.svc.addr)
	limits, err := ratelimitsvc.Load(xds.RateLimitServiceConfigs(res.IR))
	if err != nil {
		o.Err = err
		return o
	}
	t.svc.rls.SetLimits(limits)
	if err := withProxyProtocol(&served.XDS); err != nil {
		o.Err = err
		return o
	}
	version, _, err := t.srv.Update(ctx, &xdsserver.Loaded{Source: fmt.Sprintf("scenario %s (%s)", sc.Name, sc.File), Profile: prof, Result: &served})
	if err != nil {
		o.Err = fmt.Errorf("serving the translation: %w", err)
		return o
	}
	o.Version = version
	if err := t.waitApplied(ctx, o, &served.XDS); err != nil {
		o.Err = err
		if o.Nack != "" {
			o.Err = nil
			o.NackRecorded = recorded["nack"]
		}
		notReplayed("Envoy did not apply the xDS")
		return o
	}
	o.Acked = true

	table, err := routecheck.New(res.XDS.Listeners, res.XDS.Routes)
	if err != nil {
		o.Err = fmt.Errorf("route checker: %w", err)
		return o
	}
	// The credentials credential_injector sends are secrets: the offline checks read them
	// too (check.Run).
	table.UseSecrets(res.XDS.Secrets)
	table.UseRateLimitService(limits)
	client := live.Client{Addr: func(port uint32) string { return fmt.Sprintf("%s:%d", ip, port) }, Timeout: t.opts.RequestTimeout}
	clientCert, err := t.ca.leaf(append([]string{"client.egharness.local"}, tr.clientNames...))
	if err != nil {
		o.Err = err
		return o
	}
	client.Certificates = []tls.Certificate{*clientCert}
	echoes := t.echo.echoes()
	for i, te := range traffic {
		r := t.replay(ctx, client, listenIP, table, res, i, te, echoes)
		if r.Replayed() && !r.Agrees() {
			r.Recorded = recorded[fmt.Sprintf("expect.traffic[%d]", i)]
		}
		o.Requests = append(o.Requests, r)
	}
	return o
}

// ImplName is how scenarios name real Envoy in divergences: envoy@<version>.
func (t *Tier) ImplName() string { return "envoy@" + t.version }

// recorded maps the facts of the scenario's divergences for real Envoy (envoy@<version>)
// to their reasons: "nack" and "expect.traffic[i]".
func (t *Tier) recorded(sc *scenario.Scenario, prof string) map[string]string {
	out := map[string]string{}
	for _, d := range sc.DivergencesFor(t.ImplName(), prof) {
		for _, f := range d.Facts {
			out[f] = d.Reason
		}
	}
	return out
}

// waitApplied waits until Envoy ACKs the version for every type it holds, or NACKs one
// (recorded in o.Nack), then until no listener or cluster is still warming.
func (t *Tier) waitApplied(ctx context.Context, o *Outcome, x *result.XDS) error {
	return t.wait(ctx, o, x, true)
}

// wait is waitApplied; warm says whether to wait for warming too.
func (t *Tier) wait(ctx context.Context, o *Outcome, x *result.XDS, warm bool) error {
	types := []string{resourcev3.ClusterType, resourcev3.ListenerType}
	if len(x.Routes) > 0 {
		types = append(types, resourcev3.RouteType)
	}
	if len(x.Endpoints) > 0 {
		types = append(types, resourcev3.EndpointType)
	}
	wctx, cancel := context.WithTimeout(ctx, t.opts.AckTimeout)
	defer cancel()
	// An Envoy that exits (a crash) closes its stream without the server noticing a
	// change: the wait ends at once rather than at the timeout.
	go func(exit <-chan struct{}) {
		select {
		case <-exit:
			cancel()
		case <-wctx.Done():
		}
	}(t.envoy.exit)
	err := t.srv.WaitFor(wctx, func(nodes []xdsserver.NodeStatus) bool {
		for _, n := range nodes {
			if n.ID != t.nodeID {
				continue
			}
			for _, typ := range slices.Sorted(mapKeys(n.Nacked)) {
				if nk := n.Nacked[typ]; nk.Version == o.Version {
					o.Nack = fmt.Sprintf("%s: %s", typ[strings.LastIndex(typ, ".")+1:], nk.Error)
					return true
				}
			}
		}
		return xdsserver.AckedAll(nodes, t.nodeID, o.Version, types...) || t.envoy.alive() != nil
	})
	if o.Nack != "" {
		return fmt.Errorf("NACK")
	}
	if aerr := t.envoy.alive(); aerr != nil {
		return aerr
	}
	if err != nil {
		return fmt.Errorf("envoy did not ACK version %s within %s (waiting for %s; ACKed: %s): %w", o.Version, t.opts.AckTimeout, strings.Join(shortTypes(types), ", "), t.acked(), err)
	}
	if !warm {
		return nil
	}
	// An ACK says the config is accepted; listeners and clusters still warm (secrets,
	// routes and endpoints arriving). Requests go out once nothing warms.
	for {
		g, err := t.envoy.gauges(wctx, "listener_manager.total_listeners_warming", "cluster_manager.warming_clusters")
		if err == nil && g["listener_manager.total_listeners_warming"] == 0 && g["cluster_manager.warming_clusters"] == 0 {
			return nil
		}
		select {
		case <-wctx.Done():
			return fmt.Errorf("envoy ACKed version %s but listeners or clusters still warm after %s (%v, %v)", o.Version, t.opts.AckTimeout, g, err)
		case <-time.After(10 * time.Millisecond):
		}
	}
}

// acked says which version the node ACKed per type, for errors.
func (t *Tier) acked() string {
	for _, n := range t.srv.Nodes() {
		if n.ID != t.nodeID {
			continue
		}
		var parts []string
		for _, typ := range slices.Sorted(mapKeys(n.Acked)) {
			parts = append(parts, shortTypes([]string{typ})[0]+" "+n.Acked[typ])
		}
		return strings.Join(parts, ", ")
	}
	return "nothing"
}

func mapKeys[V any](m map[string]V) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

func shortTypes(types []string) []string {
	out := make([]string, len(types))
	for i, t := range types {
		out[i] = t[strings.LastIndex(t, ".")+1:]
	}
	return out
}

// replay sends one expectation and compares. A request that disagrees is sent again a few
// times: Envoy hands new listeners to its worker thread just after they warm, and a
// weighted split may land on another share.
//
// listenIP is the address a listener binds: when Gateways share a port each Gateway's
// listeners have their own (as on their own Envoy), and the request goes to the address of
// the listener the route checker picked (a request names its Gateway there).
func (t *Tier) replay(ctx context.Context, client live.Client, listenIP func(listener string) string, table *routecheck.Table, res *result.Result, i int, te scenario.TrafficExpect, echoes map[string]string) Request {
	r := Request{Index: i, Name: te.Name}
	exp := live.ExpectWith(table, res, te.Request, live.ExpectOptions{ClientAddress: true, DNSBackends: true, MaxInflight: maxInflight, MaxAfter: maxAfter, OAuth2Login: true})
	ip := listenIP(exp.Answer.Listener)
	client.Addr = func(port uint32) string { return fmt.Sprintf("%s:%d", ip, port) }
	r.Offline = describeExpectation(exp)
	hostless := exp.Skip != "" && exp.Answer.Cluster != "" && exp.Answer.Status == 200 && hostlessCluster(&res.XDS, exp.Answer.Cluster)
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

// hostlessCluster reports whether the named cluster exists and has no host at all.
func hostlessCluster(x *result.XDS, name string) bool {
	for _, c := range x.Clusters {
		if c.GetName() != name {
			continue
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

// dnsBackends lists the FQDN backends (EG Backends with hostnames) of a translation, sorted:
// they get echo stand-ins like Services.
func dnsBackends(res *result.Result) []string {
	seen := map[string]bool{}
	var out []string
	for _, b := range live.Localities(res.IR) {
		if b.DNS && !b.Invalid && b.ServiceName != "" && !seen[live.BackendKey(b)] {
			seen[live.BackendKey(b)] = true
			out = append(out, live.BackendKey(b))
		}
	}
	slices.Sort(out)
	return out
}

// moveDNSBackends points the inline load assignments of DNS clusters (already static
// copies, see onLoopback) at the echo stand-ins of their backends, locality by locality.
func moveDNSBackends(x *result.XDS, res *result.Result, addrs map[string]string) {
	locs := live.Localities(res.IR)
	for _, c := range x.Clusters {
		for _, l := range c.GetLoadAssignment().GetEndpoints() {
			b := locs[l.GetLocality().GetRegion()]
			if b == nil || !b.DNS || len(l.GetLbEndpoints()) == 0 {
				continue
			}
			addr, ok := addrs[live.BackendKey(b)]
			if !ok {
				continue
			}
			host, portStr, _ := net.SplitHostPort(addr)
			port, _ := strconv.ParseUint(portStr, 10, 16)
			l.LbEndpoints = l.LbEndpoints[:1]
			moveAll(&endpointv3.ClusterLoadAssignment{Endpoints: []*endpointv3.LocalityLbEndpoints{l}}, host, uint32(port))
		}
	}
}

// maxAfter is the most requests the tier sends before a request to stage its after count.
const maxAfter = 1000

// sendBefore sends n requests like req, one after another, before req itself: rate limits
// count them. Each must be answered (by a backend or by Envoy itself).
func (t *Tier) sendBefore(ctx context.Context, client live.Client, req scenario.Request, port uint32, useTLS bool, n int) error {
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
func (t *Tier) holdInflight(ctx context.Context, client live.Client, req scenario.Request, port uint32, useTLS bool, n int) (func(), error) {
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
			return func() {}, fmt.Errorf("%d requests in flight could not be staged: %d held by the backend, %d refused by Envoy, %d failed", n, held, refused.Load(), failed.Load())
		}
	}
	return release, nil
}

// gatewayOf is the Gateway part of a listener name (<namespace>/<gateway>/<listener>).
func gatewayOf(listener string) string {
	parts := strings.SplitN(listener, "/", 3)
	if len(parts) < 3 {
		return listener
	}
	return parts[0] + "/" + parts[1]
}
