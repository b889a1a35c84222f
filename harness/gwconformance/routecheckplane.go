package gwconformance

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/gateway-api/conformance/utils/roundtripper"

	"github.com/egharness/egharness/harness/gwconformance/kubeapi"
	"github.com/egharness/egharness/harness/routecheck"
	"github.com/egharness/egharness/translator/result"
)

// RouteCheckPlane answers the suite's HTTP requests from the translation with the offline
// route checker instead of a real Envoy: it is both the DataPlane the controller feeds and
// the RoundTripper the suite sends through. A request routed to a cluster gets the reply
// the chosen endpoint's echo-basic would give (its Pod and Namespace, the request as the
// route forwards it); a redirect or a direct response gets its status and Location.
//
// It says what the xDS would do, not what Envoy did, and models no response headers, no
// timeouts, retries or mirrors, no TLS handshake, no gRPC, WebSocket, TCP or UDP: the tests
// that need those fail here and pass only with Envoy (docs/conformance.md).
type RouteCheckPlane struct {
	Store *kubeapi.Store

	mu       sync.RWMutex
	table    *routecheck.Table
	gateways map[string]GatewayAddress // by Gateway namespace/name
	byIP     map[string]string         // Gateway address → namespace/name
	clusters map[string][]locality     // cluster → its localities
	pods     map[string][2]string      // Pod IP → namespace, name, as of the last Apply
}

// Apply implements DataPlane.
func (p *RouteCheckPlane) Apply(_ context.Context, x *result.XDS, gateways map[string]GatewayAddress) error {
	t, err := routecheck.New(x.Listeners, x.Routes)
	if err != nil {
		return fmt.Errorf("route checker: %w", err)
	}
	t.UseSecrets(x.Secrets)
	clusters := map[string][]locality{}
	for _, cla := range x.Endpoints {
		for _, le := range cla.GetEndpoints() {
			loc := locality{weight: le.GetLoadBalancingWeight().GetValue()}
			for _, lb := range le.GetLbEndpoints() {
				if sa := lb.GetEndpoint().GetAddress().GetSocketAddress(); sa != nil {
					loc.ips = append(loc.ips, sa.GetAddress())
				}
			}
			if len(loc.ips) > 0 {
				clusters[cla.GetClusterName()] = append(clusters[cla.GetClusterName()], loc)
			}
		}
	}
	byIP := map[string]string{}
	for id, a := range gateways {
		byIP[a.IP] = id
	}
	pods := p.podsByIP()
	p.mu.Lock()
	p.table, p.gateways, p.byIP, p.clusters, p.pods = t, gateways, byIP, clusters, pods
	p.mu.Unlock()
	return nil
}

// podsByIP maps each Pod's address to it. Read once per translation, not per request: the
// weighted tests send hundreds.
func (p *RouteCheckPlane) podsByIP() map[string][2]string {
	out := map[string][2]string{}
	for _, u := range p.Store.List(schema.GroupKind{Kind: "Pod"}, "", nil, "v1") {
		if ip, _, _ := unstructured.NestedString(u.Object, "status", "podIP"); ip != "" {
			out[ip] = [2]string{u.GetNamespace(), u.GetName()}
		}
	}
	return out
}

// CaptureRoundTrip implements the suite's roundtripper.RoundTripper.
func (p *RouteCheckPlane) CaptureRoundTrip(req roundtripper.Request) (*roundtripper.CapturedRequest,
	*roundtripper.CapturedResponse, error) {
	p.mu.RLock()
	t, byIP, gateways, clusters := p.table, p.byIP, p.gateways, p.clusters
	p.mu.RUnlock()
	if t == nil {
		return nil, nil, fmt.Errorf("no translation served yet")
	}
	if req.Protocol != "" && req.Protocol != "HTTP" {
		return nil, nil, fmt.Errorf("the route checker answers plain HTTP/1.1 only, not %s (run with Envoy)", req.Protocol)
	}
	ip, portText, err := net.SplitHostPort(req.URL.Host)
	if err != nil {
		ip, portText = req.URL.Host, "80"
		if req.URL.Scheme == "https" {
			portText = "443"
		}
	}
	if req.URL.Scheme == "https" {
		return nil, nil, fmt.Errorf("the route checker makes no TLS handshake (run with Envoy)")
	}
	gw, ok := byIP[ip]
	if !ok {
		return nil, nil, fmt.Errorf("dial tcp %s: no Gateway has this address: connection refused", req.URL.Host)
	}
	spec, _ := strconv.Atoi(portText)
	port := uint32(spec)
	for translated, s := range gateways[gw].Ports {
		if s == port {
			port = translated
		}
	}
	host := req.Host
	if host == "" {
		host = req.URL.Host
	}
	headers := map[string]string{}
	for k, vs := range req.Headers {
		headers[k] = strings.Join(vs, ",")
	}
	path := req.URL.RequestURI()
	d, err := t.CheckDetailed(routecheck.Request{
		Port: port, Host: host, Path: path, Method: req.Method, Headers: headers,
		Gateway: gw, Random: rand.Uint64(),
	})
	if err != nil {
		return nil, nil, fmt.Errorf("route checker: %w", err)
	}
	cRes := &roundtripper.CapturedResponse{StatusCode: d.Status, Protocol: "HTTP/1.1", Headers: map[string][]string{}}
	if d.Location != "" {
		cRes.Headers["Location"] = []string{d.Location}
		if !req.UnfollowRedirect {
			return nil, nil, fmt.Errorf("the route checker does not follow redirects")
		}
		u, err := url.Parse(d.Location)
		if err != nil {
			return nil, nil, err
		}
		cRes.RedirectRequest = &roundtripper.RedirectRequest{Scheme: u.Scheme, Host: u.Hostname(), Port: u.Port(),
			Path: u.Path}
	}
	if d.Cluster == "" && (d.Status == http.StatusOK || d.Status == http.StatusNoContent) {
		// Answered by Envoy itself (a CORS preflight...): the suite compares the response
		// headers of such answers, which the route checker does not model.
		return nil, nil,
			fmt.Errorf("answered %d by Envoy itself (%s); the route checker models no response headers (run with Envoy)",
				d.Status, d.AnsweredBy)
	}
	if d.Cluster == "" || d.Status != http.StatusOK {
		return nil, cRes, nil
	}
	epIP, ok := pickEndpoint(clusters[d.Cluster])
	if !ok {
		return nil, &roundtripper.CapturedResponse{StatusCode: http.StatusServiceUnavailable, Protocol: "HTTP/1.1"}, nil
	}
	ns, pod := p.podAt(epIP)
	cReq := &roundtripper.CapturedRequest{Method: req.Method, Protocol: "HTTP/1.1", Headers: map[string][]string{},
		Namespace: ns, Pod: pod}
	if cReq.Method == "" {
		cReq.Method = http.MethodGet
	}
	for k, v := range d.Forwarded {
		switch k {
		case ":path":
			cReq.Path = v
		case ":authority":
			cReq.Host = v
		case ":method":
			cReq.Method = v
		default:
			if !strings.HasPrefix(k, ":") {
				cReq.Headers[http.CanonicalHeaderKey(k)] = strings.Split(v, ",")
			}
		}
	}
	if cReq.Path == "" {
		cReq.Path = path
	}
	// echo-basic answers with the request URI as it arrived: the path and its query.
	if cReq.Host == "" {
		cReq.Host = host
	}
	return cReq, cRes, nil
}

// podAt is the Pod whose address an endpoint is: from the last Apply's map, else (a Pod
// that became Ready since) from the store.
func (p *RouteCheckPlane) podAt(ip string) (namespace, name string) {
	p.mu.RLock()
	pod, ok := p.pods[ip]
	p.mu.RUnlock()
	if !ok {
		pod = p.podsByIP()[ip]
	}
	return pod[0], pod[1]
}

// locality is one locality of a cluster: EG gives each backendRef of a rule its own, with
// the backendRef's weight as the locality's load-balancing weight.
type locality struct {
	weight uint32
	ips    []string
}

// pickEndpoint chooses as Envoy's locality-weighted balancing would: a locality by its
// weight (all alike when none has one), then one of its endpoints.
func pickEndpoint(locs []locality) (string, bool) {
	var total uint64
	for _, l := range locs {
		total += uint64(l.weight)
	}
	if len(locs) == 0 {
		return "", false
	}
	chosen := locs[rand.IntN(len(locs))]
	if total > 0 {
		r := rand.Uint64N(total)
		for _, l := range locs {
			if r < uint64(l.weight) {
				chosen = l
				break
			}
			r -= uint64(l.weight)
		}
	}
	return chosen.ips[rand.IntN(len(chosen.ips))], true
}
