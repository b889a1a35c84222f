package live

import (
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"

	faultv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/http/fault/v3"
	typev3 "github.com/envoyproxy/go-control-plane/envoy/type/v3"

	"github.com/egharness/egharness/harness/check"
	"github.com/egharness/egharness/harness/routecheck"
	"github.com/egharness/egharness/harness/scenario"
	"github.com/egharness/egharness/translator/ir"
	"github.com/egharness/egharness/translator/result"
)

// Expectation is what the offline route checker says a request does, in the terms a live
// answer can be compared in.
type Expectation struct {
	Answer check.Answer
	// Err is the checker's error: Envoy has nothing to answer with (no listener, no filter
	// chain...), so the live connection must fail.
	Err error
	// TLS: the filter chain that takes the connection terminates TLS, so the client must
	// speak TLS (with the request's SNI, or none).
	TLS bool
	// Backends are the backend keys (namespace/name) the request may reach: the one the
	// checker picked, or, when the route splits traffic by weight, every servable backend
	// of the split, since live choices are random.
	Backends []string
	// Picked is the backend key the checker's random value chose; forwarded headers are
	// compared only when the live request landed there (per-backend filters differ).
	Picked string
	// Invalid5xx: part of a weighted split has no valid backend, so a live 500 or 503
	// from Envoy itself is one of the possible answers.
	Invalid5xx bool
	// Skip says why the request cannot be compared live ("" when it can).
	Skip string
}

// Weighted reports whether the live answer may be any of several.
func (e Expectation) Weighted() bool {
	return len(e.Backends) > 1 || (e.Invalid5xx && len(e.Backends) > 0)
}

// ExpectOptions say what the caller can stage live.
type ExpectOptions struct {
	// ClientAddress: the caller sends the request from its clientIP (the Envoy tier
	// announces it with the PROXY protocol), so such requests are not skipped.
	ClientAddress bool
	// DNSBackends: the caller runs stand-ins for DNS backends too (FQDN EG Backends).
	DNSBackends bool
	// MaxInflight: the caller holds up to this many requests open to stage a request's
	// inflight count (0: none).
	MaxInflight uint32
	// MaxAfter: the caller sends up to this many requests like a request before it, to
	// stage its after count (0: none).
	MaxAfter uint32
	// OAuth2Login: the caller goes through an OIDC login for a request that asks for one
	// (the real Envoy tier, with its provider stand-in).
	OAuth2Login bool
}

// Expect asks the offline route checker about req on the translation's xDS.
func Expect(table *routecheck.Table, res *result.Result, req scenario.Request) Expectation {
	return ExpectWith(table, res, req, ExpectOptions{})
}

// ExpectWith is Expect for a caller that can stage what opts say.
func ExpectWith(table *routecheck.Table, res *result.Result, req scenario.Request, opts ExpectOptions) Expectation {
	servable := Servable
	if opts.DNSBackends {
		servable = func(b *ir.Backend) bool { return !b.Invalid && b.ServiceName != "" }
	}
	if req.After > opts.MaxAfter {
		// Checked first: counting the requests before it needs the rate limit service's
		// limits, which a caller that cannot stage them need not give the table.
		return Expectation{Skip: fmt.Sprintf("a request after %d like it cannot be staged (at most %d are sent first)",
			req.After, opts.MaxAfter)}
	}
	if req.OAuth2Login && !opts.OAuth2Login {
		return Expectation{Skip: "an OAuth2 login needs the real Envoy tier's provider stand-in"}
	}
	a, err := check.Send(table, &res.XDS, req)
	e := Expectation{Answer: a, Err: err, TLS: terminatesTLS(&res.XDS, a.Listener, a.FilterChain)}
	if err != nil {
		return e
	}
	if req.Inflight > opts.MaxInflight {
		// One live request cannot hold others open to fill the circuit breaker.
		e.Skip = fmt.Sprintf("%d requests in flight to %s cannot be staged by one live request", req.Inflight, a.Cluster)
		if opts.MaxInflight > 0 {
			e.Skip = fmt.Sprintf("%d requests in flight to %s: more than the %d held open to stage them", req.Inflight,
				a.Cluster, opts.MaxInflight)
		}
		return e
	}
	if req.ClientIP != "" && !opts.ClientAddress {
		// Authorization on the client address: a live client cannot pick its address.
		e.Skip = "the request's clientIP cannot be chosen live"
		return e
	}
	if partialFault(&res.XDS, a.Route) {
		// The fault filter hits a share of the requests by Envoy's own random draw; the
		// checker decides by the request's random value, which a live request cannot set.
		e.Skip = "the route's fault injection hits a share of the requests, by a random draw a live request cannot choose"
		return e
	}
	if a.L4 && req.SNI != "" && !e.TLS {
		// TLS passthrough: the backend itself must speak TLS, and the echo stand-ins
		// speak plain HTTP.
		e.Skip = "TLS passthrough to " + a.Cluster + " needs a TLS backend (the echo stand-ins speak plain HTTP)"
		return e
	}
	// The weighted split of the route (or TCP/UDP route), from the IR.
	var split []*ir.Backend
	if d := destinationOf(res.IR, a.Route, a.Cluster); d != nil {
		for _, s := range d.Settings {
			if s.Weight > 0 {
				split = append(split, s)
			}
		}
	}
	for _, s := range split {
		switch {
		case servable(s):
			if !slices.Contains(e.Backends, BackendKey(s)) {
				e.Backends = append(e.Backends, BackendKey(s))
			}
		case s.Invalid:
			e.Invalid5xx = true
		}
	}
	sort.Strings(e.Backends)
	routed := a.Cluster != "" && a.Status == 200
	if b := Localities(res.IR)[a.Backend]; routed && b != nil && servable(b) {
		e.Picked = BackendKey(b)
	}
	if !e.Weighted() {
		// One possible answer: exactly the checker's.
		e.Backends, e.Invalid5xx = nil, false
		if !routed {
			return e
		}
		b := Localities(res.IR)[a.Backend]
		switch {
		case b == nil:
			e.Skip = fmt.Sprintf("cluster %s has no backend in the IR", a.Cluster)
		case !servable(b):
			e.Skip = fmt.Sprintf("backend %s (%s) has no stand-in (DNS or invalid)", a.Backend, BackendKey(b))
		default:
			e.Backends = []string{BackendKey(b)}
		}
		return e
	}
	if routed && e.Picked == "" {
		e.Skip = fmt.Sprintf("backend %s has no stand-in (DNS)", a.Backend)
	}
	return e
}

// destinationOf finds the IR destination behind an xDS route entry (by route name), or by
// cluster name for layer-4 routes.
func destinationOf(x *ir.XDS, route, cluster string) *ir.Destination {
	if x == nil {
		return nil
	}
	if route != "" {
		for _, l := range x.HTTP {
			for _, r := range l.Routes {
				if r.Name == route {
					return r.Destination
				}
			}
		}
	}
	for _, d := range x.Destinations() {
		if d.Name == cluster {
			return d
		}
	}
	return nil
}

// terminatesTLS reports whether the named filter chain of the named listener has a TLS
// transport socket.
func terminatesTLS(x *result.XDS, listener, chain string) bool {
	for _, l := range x.Listeners {
		if l.GetName() != listener {
			continue
		}
		for _, fc := range l.GetFilterChains() {
			if fc.GetName() == chain {
				return fc.GetTransportSocket() != nil
			}
		}
		if dc := l.GetDefaultFilterChain(); dc != nil && dc.GetName() == chain {
			return dc.GetTransportSocket() != nil
		}
	}
	return false
}

// EchoName is the echo Deployment a pod belongs to (<deployment>-<replicaset hash>-<id>).
func EchoName(pod string) string {
	parts := strings.Split(pod, "-")
	if len(parts) < 3 {
		return pod
	}
	return strings.Join(parts[:len(parts)-2], "-")
}

// Compare lists how the live observation differs from the expectation. echoes maps an
// echo Deployment name to the backend key it stands in for; want is the scenario's own
// expectation (its requestHeaders are compared on the forwarded request).
func Compare(e Expectation, req scenario.Request, want scenario.TrafficResult, obs Observation,
	echoes map[string]string) []string {
	var diffs []string
	add := func(format string, args ...any) { diffs = append(diffs, fmt.Sprintf(format, args...)) }
	if e.Err != nil {
		if obs.Err == nil {
			add("offline, Envoy cannot take the request (%v), but it answered %d", e.Err, obs.Status)
		}
		return diffs
	}
	if e.Answer.L4 && e.Answer.AnsweredBy == "rbac" {
		// The network RBAC filter denies the connection: Envoy closes it.
		if obs.Err == nil {
			add("offline the network RBAC filter closes the connection, live it was answered %d", obs.Status)
		}
		return diffs
	}
	if obs.Err != nil {
		add("no answer: %v (offline: %s)", obs.Err, describe(e.Answer))
		return diffs
	}
	routed := e.Answer.Cluster != "" && e.Answer.Status == 200
	if e.Weighted() {
		// Any share of the split may answer.
		if obs.Echo == nil {
			fiveXX := obs.Status == 500 || obs.Status == 503
			if req.GRPC && obs.GRPCStatus != "" {
				fiveXX = obs.GRPCStatus == check.GRPCStatus(500) || obs.GRPCStatus == check.GRPCStatus(503)
			}
			if !e.Invalid5xx || !fiveXX {
				add("Envoy answered %d itself; offline the split reaches %s%s", obs.Status, strings.Join(e.Backends, " or "),
					map[bool]string{true: " or answers 500", false: ""}[e.Invalid5xx])
			}
			return diffs
		}
		got := echoes[EchoName(obs.Echo.Pod)]
		if !slices.Contains(e.Backends, got) {
			add("reached backend %q (pod %s), offline the split reaches %s", got, obs.Echo.Pod, strings.Join(e.Backends, " or "))
		}
		if got == e.Picked {
			diffs = append(diffs, headerDiffs(e, want, obs)...)
		}
		return diffs
	}
	if routed {
		if obs.Echo == nil {
			add("offline the request reaches %s, live Envoy answered %d itself (body %q)", strings.Join(e.Backends, " or "),
				obs.Status, Shorten(obs.Body, 200))
			return diffs
		}
		got := echoes[EchoName(obs.Echo.Pod)]
		if !slices.Contains(e.Backends, got) {
			add("reached backend %q (pod %s), offline %s", got, obs.Echo.Pod, strings.Join(e.Backends, " or "))
		}
		if obs.Status != 200 {
			add("backend answered %d", obs.Status)
		}
		return append(diffs, headerDiffs(e, want, obs)...)
	}
	// Envoy answers itself: a direct response, a redirect, a 404, a 500 or 503.
	if obs.Echo != nil {
		add("offline Envoy answers %d itself, live the request reached pod %s", e.Answer.Status, obs.Echo.Pod)
		return diffs
	}
	if req.GRPC {
		if w := check.GRPCStatus(e.Answer.Status); obs.GRPCStatus != w &&
			!(obs.GRPCStatus == "" && obs.Status == e.Answer.Status) {
			add("gRPC status %s (HTTP %d), offline %s (HTTP %d)", OrNone(obs.GRPCStatus), obs.Status, w, e.Answer.Status)
		}
		return diffs
	}
	if obs.Status != e.Answer.Status {
		add("status %d, offline %d", obs.Status, e.Answer.Status)
	}
	if e.Answer.Location != "" && obs.Location != e.Answer.Location && !locationPrefix(e.Answer, obs.Location) {
		add("location %q, offline %q", obs.Location, e.Answer.Location)
	}
	if e.Answer.Body != "" && obs.Body != e.Answer.Body {
		add("body %q, offline %q", Shorten(obs.Body, 200), Shorten(e.Answer.Body, 200))
	}
	return diffs
}

// headerDiffs compares the forwarded request's headers the scenario names: the offline
// forwarded request is the reference.
func headerDiffs(e Expectation, want scenario.TrafficResult, obs Observation) []string {
	var diffs []string
	names := make([]string, 0, len(want.RequestHeaders))
	for k := range want.RequestHeaders {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		wv, wok := e.Answer.RequestHeaders[strings.ToLower(k)]
		gv, gok := obs.Echo.Header(k)
		if wok != gok || (wok && wv != gv) {
			diffs = append(diffs,
				fmt.Sprintf("forwarded header %s: live %s, offline %s", k, QuoteOrAbsent(gv, gok), QuoteOrAbsent(wv, wok)))
		}
	}
	return diffs
}

func describe(a check.Answer) string {
	if a.Cluster != "" && a.Status == 200 {
		return "routed to " + a.Cluster
	}
	return fmt.Sprintf("Envoy answers %d", a.Status)
}

// QuoteOrAbsent words a header value for a disagreement: quoted, or "absent".
func QuoteOrAbsent(v string, ok bool) string {
	if !ok {
		return "absent"
	}
	return fmt.Sprintf("%q", v)
}

// OrNone is s, or "none" when it is empty.
func OrNone(s string) string {
	if s == "" {
		return "none"
	}
	return s
}

// Shorten cuts s after max bytes, marking the cut.
func Shorten(s string, max int) string {
	if len(s) > max {
		return s[:max] + "…"
	}
	return s
}

// EnvoyPort is the Envoy listener port a request to a Gateway port reaches: the port
// itself when a listener binds it, else EG's mapping of privileged ports (80 → 10080).
func EnvoyPort(x *result.XDS, port uint32) uint32 {
	for _, l := range x.Listeners {
		if l.GetAddress().GetSocketAddress().GetPortValue() == port {
			return port
		}
	}
	if port < 1024 {
		return port + 10000
	}
	return port
}

// IsNotReplayable reports whether obs is a request the suite does not send.
func IsNotReplayable(obs Observation) bool { return errors.Is(obs.Err, ErrNotReplayable) }

// locationPrefix: the oauth2 filter's redirect carries a random state and code challenge,
// so the route checker knows the location up to its query (it ends in "?").
func locationPrefix(a check.Answer, got string) bool {
	return a.AnsweredBy == "oauth2" && strings.HasSuffix(a.Location, "?") && strings.HasPrefix(got, a.Location)
}

// partialFault reports whether the named route injects a delay or an abort into a share
// of its requests strictly between none and all.
func partialFault(x *result.XDS, route string) bool {
	if route == "" {
		return false
	}
	for _, rc := range x.Routes {
		for _, vh := range rc.GetVirtualHosts() {
			for _, r := range vh.GetRoutes() {
				if r.GetName() != route {
					continue
				}
				cfg := r.GetTypedPerFilterConfig()["envoy.filters.http.fault"]
				f := &faultv3.HTTPFault{}
				if cfg == nil || cfg.UnmarshalTo(f) != nil {
					return false
				}
				partial := func(p *typev3.FractionalPercent) bool {
					if p == nil {
						return false
					}
					den := map[typev3.FractionalPercent_DenominatorType]uint32{typev3.FractionalPercent_HUNDRED: 100,
						typev3.FractionalPercent_TEN_THOUSAND: 10000, typev3.FractionalPercent_MILLION: 1000000}[p.GetDenominator()]
					return p.GetNumerator() > 0 && p.GetNumerator() < den
				}
				return (f.GetDelay() != nil && partial(f.GetDelay().GetPercentage())) ||
					(f.GetAbort() != nil && partial(f.GetAbort().GetPercentage()))
			}
		}
	}
	return false
}
