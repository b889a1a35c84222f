package envoytier

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"runtime/debug"
	"slices"
	"strings"
	"time"

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
	again.Notes = append(again.Notes,
		"Envoy exited or hung during a first attempt, was started again and the scenario "+
			"ran again; the first attempt: "+firstLines(
			o.Err.Error(), 3))
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
	v1, _, err := t.srv.Update(ctx,
		&xdsserver.Loaded{Source: fmt.Sprintf("scenario %s (%s), as translated", sc.Name, sc.File), Profile: prof,
			Result: &plain})
	if err != nil {
		o.Err = fmt.Errorf("serving the translation: %w", err)
		return o
	}
	o.Version = v1
	recorded := t.recorded(sc, prof)
	// refused ends the scenario when Envoy did not take a version: a NACK is the outcome (to
	// compare with the recorded one), anything else the error.
	refused := func(err error, why string) *Outcome {
		o.Err = err
		if o.Nack != "" {
			o.Err = nil
			o.NackRecorded = recorded["nack"]
		}
		notReplayed(why)
		return o
	}
	if err := t.wait(ctx, o, &plain.XDS, false); err != nil {
		return refused(err, "Envoy did not accept the xDS")
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
	version, _, err := t.srv.Update(ctx,
		&xdsserver.Loaded{Source: fmt.Sprintf("scenario %s (%s)", sc.Name, sc.File), Profile: prof, Result: &served})
	if err != nil {
		o.Err = fmt.Errorf("serving the translation: %w", err)
		return o
	}
	o.Version = version
	if err := t.waitApplied(ctx, o, &served.XDS); err != nil {
		return refused(err, "Envoy did not apply the xDS")
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
	client := live.Client{Addr: func(port uint32) string { return fmt.Sprintf("%s:%d", ip, port) },
		Timeout: t.opts.RequestTimeout}
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
	types := ackTypes(x)
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
	}(t.envoy.child.Exited)
	err := t.srv.WaitFor(wctx, func(nodes []xdsserver.NodeStatus) bool {
		if nack := nackOf(nodes, t.nodeID, o.Version); nack != "" {
			o.Nack = nack
			return true
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
		return fmt.Errorf("envoy did not ACK version %s within %s (waiting for %s; ACKed: %s): %w", o.Version,
			t.opts.AckTimeout, strings.Join(shortTypes(types), ", "), t.acked(), err)
	}
	if !warm {
		return nil
	}
	// An ACK says the config is accepted; listeners and clusters still warm (secrets,
	// routes and endpoints arriving). Requests go out once nothing warms.
	if warmed, g, err := t.envoy.waitWarmed(wctx); !warmed {
		return fmt.Errorf("envoy ACKed version %s but listeners or clusters still warm after %s (%v, %v)", o.Version,
			t.opts.AckTimeout, g, err)
	}
	return nil
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

// gatewayOf is the Gateway part of a listener name (<namespace>/<gateway>/<listener>).
func gatewayOf(listener string) string {
	parts := strings.SplitN(listener, "/", 3)
	if len(parts) < 3 {
		return listener
	}
	return parts[0] + "/" + parts[1]
}
