package check

import (
	"github.com/egharness/egharness/harness/ratelimitsvc"
	"github.com/egharness/egharness/translator/xds"

	"errors"
	"fmt"
	"sort"
	"strings"

	endpointv3 "github.com/envoyproxy/go-control-plane/envoy/config/endpoint/v3"
	routev3 "github.com/envoyproxy/go-control-plane/envoy/config/route/v3"

	"github.com/egharness/egharness/harness/routecheck"
	"github.com/egharness/egharness/harness/scenario"
	"github.com/egharness/egharness/translator/result"
)

// Answer is the route checker's answer completed with what the cluster set decides: a
// cluster that does not exist answers the route's cluster-not-found code, and the backend
// (locality) a weighted cluster sends the request to.
type Answer struct {
	routecheck.Answer
	Backend string
	// RequestHeaders is the request as forwarded to the cluster (routecheck.CheckForwarded).
	RequestHeaders map[string]string
	// Filters are the HTTP filters that acted on the request (routecheck.CheckDetailed).
	Filters []routecheck.FilterEffect
}

// Send evaluates one request against a result's xDS. A Gateway port below 1024 that has no
// Envoy listener is tried as EG maps it (80 → 10080), so scenarios can speak in Gateway ports.
func Send(t *routecheck.Table, x *result.XDS, req scenario.Request) (Answer, error) {
	rq := routecheck.Request{Port: req.Port, Host: req.Host, Path: req.Path, Method: req.Method, Headers: req.Headers,
		SNI: req.SNI, Protocol: req.Protocol, ClientIP: req.ClientIP, After: req.After, Gateway: req.Gateway,
		OAuth2Login: req.OAuth2Login}
	if req.GRPC {
		rq.Method = "POST"
		rq.Headers = map[string]string{"content-type": "application/grpc"}
		for k, v := range req.Headers {
			rq.Headers[k] = v
		}
	}
	if req.Random != nil {
		rq.Random = *req.Random
	}
	d, err := t.CheckDetailed(rq)
	if errors.Is(err, routecheck.ErrNoListener) && req.Port < 1024 {
		rq.Port = req.Port + 10000
		d, err = t.CheckDetailed(rq)
	}
	if err != nil {
		return Answer{}, err
	}
	a := d.Answer
	out := Answer{Answer: a, RequestHeaders: d.Forwarded, Filters: d.Filters}
	if a.Cluster == "" {
		return out, nil
	}
	cla := findCLA(x, a.Cluster)
	if !hasCluster(x, a.Cluster) {
		if a.L4 {
			// Envoy closes a TCP connection (or drops a datagram) it cannot proxy.
			return out, fmt.Errorf("%s: cluster %s does not exist; Envoy would close the connection", a.Listener, a.Cluster)
		}
		out.Status = clusterNotFoundStatus(x, a.RouteConfig, a.VirtualHost, a.Route)
		out.Cluster = a.Cluster
		return out, nil
	}
	out.Backend = pickLocality(cla, rq.Random)
	if out.Backend != "" && !localityHasEndpoints(cla, out.Backend) {
		out.Status = 503 // Envoy: no healthy upstream
	}
	if circuitOpen(x, a.Cluster, req.Inflight) {
		out.Status = 503 // Envoy: upstream overflow
	}
	return out, nil
}

// UseRateLimitService gives the table the limits of EG's rate limit service for the
// translation (the reference's: from its IR; other implementations give none).
func UseRateLimitService(t *routecheck.Table, res *result.Result) error {
	if res.IR == nil {
		return nil
	}
	l, err := ratelimitsvc.Load(xds.RateLimitServiceConfigs(res.IR))
	if err != nil {
		return err
	}
	t.UseRateLimitService(l)
	return nil
}

func hasCluster(x *result.XDS, name string) bool {
	for _, c := range x.Clusters {
		if c.GetName() == name {
			return true
		}
	}
	return false
}

// findCLA reads the localities of a cluster: its EDS load assignment, or the one it holds
// inline (DNS and static clusters: FQDN backends, EG's rate limit cluster).
func findCLA(x *result.XDS, name string) []*localityInfo {
	localities := func(ls []*endpointv3.LocalityLbEndpoints) []*localityInfo {
		var out []*localityInfo
		for _, l := range ls {
			out = append(out,
				&localityInfo{name: l.GetLocality().GetRegion(), weight: l.GetLoadBalancingWeight().GetValue(),
					endpoints: len(l.GetLbEndpoints())})
		}
		return out
	}
	for _, e := range x.Endpoints {
		if e.GetClusterName() == name {
			return localities(e.GetEndpoints())
		}
	}
	for _, c := range x.Clusters {
		if c.GetName() == name && c.GetLoadAssignment() != nil {
			return localities(c.GetLoadAssignment().GetEndpoints())
		}
	}
	return nil
}

type localityInfo struct {
	name      string
	weight    uint32
	endpoints int
}

// pickLocality chooses among weighted localities with the request's random value (modulo
// the total weight, first locality whose running sum exceeds it), so a scenario can pin
// which backendRef of a weighted rule a request reaches.
func pickLocality(ls []*localityInfo, random uint64) string {
	if len(ls) == 0 {
		return ""
	}
	var total uint64
	for _, l := range ls {
		total += uint64(l.weight)
	}
	if total == 0 {
		return ls[0].name
	}
	r := random % total
	var sum uint64
	for _, l := range ls {
		sum += uint64(l.weight)
		if r < sum {
			return l.name
		}
	}
	return ls[len(ls)-1].name
}

func localityHasEndpoints(ls []*localityInfo, name string) bool {
	for _, l := range ls {
		if l.name == name {
			return l.endpoints > 0
		}
	}
	return false
}

func clusterNotFoundStatus(x *result.XDS, rcName, vhName, routeName string) int {
	r := routeOf(x, rcName, vhName, routeName)
	if r.GetRoute().GetClusterNotFoundResponseCode() == routev3.RouteAction_INTERNAL_SERVER_ERROR {
		return 500
	}
	return 503 // Envoy's default for a missing cluster (and for no such route)
}

func (c *collector) traffic(exp []scenario.TrafficExpect, res *result.Result, section string) {
	c.section = section
	if len(exp) == 0 {
		return
	}
	table, err := routecheck.New(res.XDS.Listeners, res.XDS.Routes)
	if err != nil {
		c.failf("traffic", "traffic", "the generated xDS cannot be evaluated: %v", err)
		return
	}
	table.UseSecrets(res.XDS.Secrets)
	if err := UseRateLimitService(table, res); err != nil {
		c.failf("traffic", "traffic", "%v", err)
		return
	}
	for i, t := range exp {
		where := fmt.Sprintf("traffic[%d]", i)
		what := describeRequest(t.Request)
		a, err := Send(table, &res.XDS, t.Request)
		if err != nil {
			c.failf("traffic", where, "%s: %v", what, err)
			continue
		}
		var diffs []string
		cmp := func(field, want, got string) {
			if want != "" && want != got {
				diffs = append(diffs, fmt.Sprintf("%s %q, expected %q", field, got, want))
			}
		}
		if t.Expect.Status != 0 && t.Expect.Status != a.Status {
			diffs = append(diffs, fmt.Sprintf("status %d, expected %d", a.Status, t.Expect.Status))
		}
		cmp("cluster", t.Expect.Cluster, a.Cluster)
		cmp("backend", t.Expect.Backend, a.Backend)
		cmp("route", t.Expect.Route, a.Route)
		cmp("virtual host", t.Expect.VirtualHost, a.VirtualHost)
		cmp("listener", t.Expect.Listener, a.Listener)
		cmp("body", t.Expect.Body, a.Body)
		cmp("location", t.Expect.Location, a.Location)
		cmp("gRPC status", t.Expect.GRPCStatus, grpcStatus(a.Status))
		diffs = append(diffs, requestHeaderDiffs(t.Expect.RequestHeaders, a.RequestHeaders)...)
		diffs = append(diffs, upstreamTLSDiffs(t.Expect.UpstreamTLS, &res.XDS, a)...)
		diffs = append(diffs, backendLBDiffs(t.Expect, &res.XDS, a)...)
		diffs = append(diffs, filterDiffs(t.Expect, a)...)
		if len(diffs) > 0 {
			c.failf("traffic", where, "%s: %s (answered by route %q)", what, strings.Join(diffs, "; "), a.Route)
		}
	}
}

func describeRequest(r scenario.Request) string {
	m := r.MethodOrDefault()
	if r.GRPC {
		m = "gRPC"
	}
	if r.Protocol != "" {
		return fmt.Sprintf("%s connection to port %d (SNI %q)", r.Protocol, r.Port, r.SNI)
	}
	s := fmt.Sprintf("%s %s%s on port %d", m, r.Host, r.PathOrDefault(), r.Port)
	if len(r.Headers) > 0 {
		s += fmt.Sprintf(" with headers %v", r.Headers)
	}
	if r.Random != nil {
		s += fmt.Sprintf(" (random %d)", *r.Random)
	}
	return s
}

// grpcStatus is what a gRPC client makes of an HTTP status (gRPC's HTTP-to-status mapping,
// for answers that carry no grpc-status of their own).
func grpcStatus(httpStatus int) string {
	switch httpStatus {
	case 200:
		return "OK"
	case 400:
		return "INTERNAL"
	case 401:
		return "UNAUTHENTICATED"
	case 403:
		return "PERMISSION_DENIED"
	case 404:
		return "UNIMPLEMENTED"
	case 429, 502, 503, 504:
		return "UNAVAILABLE"
	}
	return "UNKNOWN"
}

// requestHeaderDiffs compares the forwarded request's headers with the expected ones; an
// expected empty value means the header must be absent.
func requestHeaderDiffs(want, got map[string]string) []string {
	if len(want) == 0 {
		return nil
	}
	if got == nil {
		return []string{"request headers expected, but the request is not forwarded"}
	}
	names := make([]string, 0, len(want))
	for k := range want {
		names = append(names, k)
	}
	sort.Strings(names)
	var diffs []string
	for _, k := range names {
		v, ok := got[strings.ToLower(k)]
		switch w := want[k]; {
		case w == "" && ok:
			diffs = append(diffs, fmt.Sprintf("request header %s %q, expected absent", k, v))
		case w != "" && !ok:
			diffs = append(diffs, fmt.Sprintf("request header %s absent, expected %q", k, w))
		case w != "" && v != w:
			diffs = append(diffs, fmt.Sprintf("request header %s %q, expected %q", k, v, w))
		}
	}
	return diffs
}
