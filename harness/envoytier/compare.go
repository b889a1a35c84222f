package envoytier

import (
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"

	"github.com/egharness/egharness/harness/check"
	"github.com/egharness/egharness/harness/live"
	"github.com/egharness/egharness/harness/ratelimitsvc"
	"github.com/egharness/egharness/harness/scenario"
	"github.com/egharness/egharness/translator/result"
)

// compareScenario lists how a live answer differs from what the scenario itself expects:
// the status (or gRPC status), the redirect location and body Envoy answers with, the
// backend the request reached, and the forwarded headers it names. Route, cluster and
// filter names are not visible on the wire; the route checker comparison covers them.
func compareScenario(req scenario.Request, want scenario.TrafficResult, exp live.Expectation, obs live.Observation,
	echoes map[string]string, res *result.Result) []string {
	grpc := req.GRPC
	if exp.Err != nil || obs.Err != nil {
		return nil // whether a connection must fail is the route checker comparison's
	}
	var diffs []string
	add := func(format string, args ...any) { diffs = append(diffs, fmt.Sprintf(format, args...)) }
	weighted := exp.Weighted()
	got := ""
	if obs.Echo != nil {
		got = echoes[live.EchoName(obs.Echo.Pod)]
	}
	if grpc {
		// Envoy turns its own answers to a gRPC call into HTTP 200 with a grpc-status
		// (the body goes into grpc-message): the scenario's HTTP status is compared as the
		// gRPC status a client reads.
		gs := obs.GRPCStatus
		if gs == "" && obs.Echo != nil {
			gs = "OK"
		}
		w := want.GRPCStatus
		if w == "" && want.Status != 0 {
			w = check.GRPCStatus(want.Status)
		}
		if w != "" && !weighted && gs != w && !(gs == "" && obs.Status == want.Status) {
			add("gRPC status %s (HTTP %d), the scenario expects %s", live.OrNone(gs), obs.Status, w)
		}
	} else if want.Status != 0 && !weighted && obs.Status != want.Status {
		add("status %d, the scenario expects %d", obs.Status, want.Status)
	}
	if want.Location != "" && obs.Location != want.Location {
		add("location %q, the scenario expects %q", obs.Location, want.Location)
	}
	if want.Body != "" && !grpc && obs.Echo == nil && obs.Body != want.Body {
		add("body %q, the scenario expects %q", obs.Body, want.Body)
	}
	if want.Backend != "" && !weighted {
		if b := live.Localities(res.IR)[want.Backend]; b != nil && live.Servable(b) && got != live.BackendKey(b) {
			add("reached %s, the scenario expects backend %s (%s)", live.OrNone(got), want.Backend, live.BackendKey(b))
		}
	}
	if obs.Echo != nil && len(want.RequestHeaders) > 0 && (!weighted || got == exp.Picked) {
		names := make([]string, 0, len(want.RequestHeaders))
		for k := range want.RequestHeaders {
			names = append(names, k)
		}
		sort.Strings(names)
		for _, k := range names {
			w := want.RequestHeaders[k]
			v, ok := obs.Echo.Header(k)
			switch {
			case w == "" && ok:
				add("forwarded header %s is %q, the scenario expects it absent", k, v)
			case w != "" && (!ok || v != w):
				add("forwarded header %s is %s, the scenario expects %q", k, live.QuoteOrAbsent(v, ok), w)
			}
		}
	}
	return diffs
}

func describeExpectation(e live.Expectation) string {
	if e.Err != nil {
		return "no answer (" + e.Err.Error() + ")"
	}
	a := e.Answer
	var b strings.Builder
	if a.Cluster != "" && a.Status == 200 {
		fmt.Fprintf(&b, "routed by %s to cluster %s", live.OrNone(a.Route), a.Cluster)
		if len(e.Backends) > 0 {
			fmt.Fprintf(&b, " (backend %s)", strings.Join(e.Backends, " or "))
		}
	} else {
		fmt.Fprintf(&b, "Envoy answers %d", a.Status)
		if a.Location != "" {
			fmt.Fprintf(&b, " location %q", a.Location)
		}
		if a.Body != "" {
			fmt.Fprintf(&b, " body %q", trim(a.Body))
		}
	}
	if e.TLS {
		b.WriteString(", over TLS")
	}
	return b.String()
}

func describeObservation(o live.Observation, echoes map[string]string) string {
	if o.Err != nil {
		return "no answer: " + o.Err.Error()
	}
	var b strings.Builder
	if o.Echo != nil {
		fmt.Fprintf(&b, "%d from backend %s: %s %s host %q", o.Status, live.OrNone(echoes[live.EchoName(o.Echo.Pod)]),
			o.Echo.Method, o.Echo.Path, o.Echo.Host)
		return b.String()
	}
	fmt.Fprintf(&b, "Envoy answered %d", o.Status)
	if o.GRPCStatus != "" {
		fmt.Fprintf(&b, " grpc-status %s", o.GRPCStatus)
	}
	if o.Location != "" {
		fmt.Fprintf(&b, " location %q", o.Location)
	}
	if o.Body != "" {
		fmt.Fprintf(&b, " body %q", trim(o.Body))
	}
	return b.String()
}

// trim is a body or message as the tier prints it: spaces trimmed, cut after 160 bytes.
func trim(s string) string { return live.Shorten(strings.TrimSpace(s), 160) }

// rateLimitCluster is the cluster through which Envoy reaches EG's rate limit service.
const rateLimitCluster = "ratelimit_cluster"

func compareRateLimitCalls(exp live.Expectation, calls []ratelimitsvc.Call) []string {
	want := map[string]string{}
	for _, f := range exp.Answer.Filters {
		if f.Kind == "ratelimit" {
			want[f.Mode] = strings.TrimSuffix(f.Outcome, " (over the limit)")
		}
	}
	byDomain := map[string][]string{}
	for _, c := range calls {
		byDomain[c.Domain] = append(byDomain[c.Domain], c.Descriptors...)
	}
	got := map[string]string{}
	for d, descs := range byDomain {
		slices.Sort(descs)
		got[d] = strings.Join(descs, "; ")
	}
	var diffs []string
	for _, d := range slices.Sorted(maps.Keys(want)) {
		if g, ok := got[d]; !ok {
			diffs = append(diffs,
				fmt.Sprintf("offline the rate limit service is asked in domain %s about %s, live Envoy did not ask it", d, want[d]))
		} else if g != want[d] {
			diffs = append(diffs,
				fmt.Sprintf("in domain %s live Envoy sent the rate limit service %s, offline %s", d, g, want[d]))
		}
	}
	for _, d := range slices.Sorted(maps.Keys(got)) {
		if _, ok := want[d]; !ok {
			diffs = append(diffs,
				fmt.Sprintf("live Envoy asked the rate limit service in domain %s about %s, offline no ratelimit filter acts there",
					d, got[d]))
		}
	}
	return diffs
}
