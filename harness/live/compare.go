package live

import (
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/egharness/egharness/harness/check"
	"github.com/egharness/egharness/harness/routecheck"
	"github.com/egharness/egharness/harness/scenario"
	"github.com/egharness/egharness/translator/result"
)

// Expectation is what the offline route checker says a request does, in the terms a live
// answer can be compared in.
type Expectation struct {
	Answer check.Answer
	// Err is the checker's error: Envoy has nothing to answer with (no listener, no filter
	// chain...), so the live connection must fail.
	Err error
	// Backends are the backend keys (namespace/name) the request may reach: one, or every
	// servable backend of a weighted cluster, since live choices are random.
	Backends []string
	// Skip says why the request cannot be compared live ("" when it can).
	Skip string
}

// Expect asks the offline route checker about req on the translation's xDS.
func Expect(table *routecheck.Table, res *result.Result, req scenario.Request) Expectation {
	a, err := check.Send(table, &res.XDS, req)
	e := Expectation{Answer: a, Err: err}
	if err != nil || a.Cluster == "" || a.Status != 200 {
		return e
	}
	locs := Localities(res.IR)
	b := locs[a.Backend]
	if b == nil {
		e.Skip = fmt.Sprintf("cluster %s has no backend in the IR", a.Cluster)
		return e
	}
	if !Servable(b) {
		e.Skip = fmt.Sprintf("backend %s (%s) has no stand-in (DNS or invalid)", a.Backend, BackendKey(b))
		return e
	}
	var all []string
	for _, d := range Destinations(res.IR) {
		if d.Name != a.Cluster {
			continue
		}
		for _, s := range d.Settings {
			if Servable(s) && s.Weight > 0 && !slices.Contains(all, BackendKey(s)) {
				all = append(all, BackendKey(s))
			}
		}
	}
	sort.Strings(all)
	if len(all) > 1 {
		e.Backends = all
	} else {
		e.Backends = []string{BackendKey(b)}
	}
	return e
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
func Compare(e Expectation, req scenario.Request, want scenario.TrafficResult, obs Observation, echoes map[string]string) []string {
	var diffs []string
	add := func(format string, args ...any) { diffs = append(diffs, fmt.Sprintf(format, args...)) }
	if e.Err != nil {
		if obs.Err == nil {
			add("offline, Envoy cannot take the request (%v), but it answered %d", e.Err, obs.Status)
		}
		return diffs
	}
	if obs.Err != nil {
		add("no answer: %v (offline: %s)", obs.Err, describe(e.Answer))
		return diffs
	}
	routed := e.Answer.Cluster != "" && e.Answer.Status == 200
	if routed {
		if obs.Echo == nil {
			add("offline the request reaches %s, live Envoy answered %d itself (body %q)", strings.Join(e.Backends, " or "), obs.Status, trim(obs.Body))
			return diffs
		}
		got := echoes[EchoName(obs.Echo.Pod)]
		if !slices.Contains(e.Backends, got) {
			add("reached backend %q (pod %s), offline %s", got, obs.Echo.Pod, strings.Join(e.Backends, " or "))
		}
		if obs.Status != 200 {
			add("backend answered %d", obs.Status)
		}
		names := make([]string, 0, len(want.RequestHeaders))
		for k := range want.RequestHeaders {
			names = append(names, k)
		}
		sort.Strings(names)
		for _, k := range names {
			// The offline forwarded request is the reference; the scenario names which
			// headers matter.
			wv, wok := e.Answer.RequestHeaders[strings.ToLower(k)]
			gv, gok := obs.Echo.Header(k)
			if wok != gok || (wok && wv != gv) {
				add("forwarded header %s: live %s, offline %s", k, present(gv, gok), present(wv, wok))
			}
		}
		return diffs
	}
	// Envoy answers itself: a direct response, a redirect, a 404, a 500 or 503.
	if obs.Echo != nil {
		add("offline Envoy answers %d itself, live the request reached pod %s", e.Answer.Status, obs.Echo.Pod)
		return diffs
	}
	if req.GRPC {
		if w := check.GRPCStatus(e.Answer.Status); obs.GRPCStatus != w && !(obs.GRPCStatus == "" && obs.Status == e.Answer.Status) {
			add("gRPC status %s (HTTP %d), offline %s (HTTP %d)", orNone(obs.GRPCStatus), obs.Status, w, e.Answer.Status)
		}
		return diffs
	}
	if obs.Status != e.Answer.Status {
		add("status %d, offline %d", obs.Status, e.Answer.Status)
	}
	if e.Answer.Location != "" && obs.Location != e.Answer.Location {
		add("location %q, offline %q", obs.Location, e.Answer.Location)
	}
	if e.Answer.Body != "" && obs.Body != e.Answer.Body {
		add("body %q, offline %q", trim(obs.Body), trim(e.Answer.Body))
	}
	return diffs
}

func describe(a check.Answer) string {
	if a.Cluster != "" && a.Status == 200 {
		return "routed to " + a.Cluster
	}
	return fmt.Sprintf("Envoy answers %d", a.Status)
}

func present(v string, ok bool) string {
	if !ok {
		return "absent"
	}
	return fmt.Sprintf("%q", v)
}

func orNone(s string) string {
	if s == "" {
		return "none"
	}
	return s
}

func trim(s string) string {
	if len(s) > 200 {
		return s[:200] + "…"
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
