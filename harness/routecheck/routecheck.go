// Package routecheck evaluates go-control-plane v3 listeners and route
// configurations for a single HTTP request the way Envoy's router would (in the
// spirit of Envoy's router_check_tool), so scenarios can assert where a request
// goes without running Envoy. Layer-4 listeners are answered too: a TCP
// connection handled by tcp_proxy and a UDP datagram handled by udp_proxy go
// to the proxy's cluster.
//
// The package is offline and deterministic: everything Envoy would decide from
// runtime state (runtime fractions, cluster health, client certificates,
// dynamic metadata) is either ignored or reported as unsupported. See the
// comments on Request and Answer for the modelled inputs and outputs.
package routecheck

import (
	"github.com/egharness/egharness/harness/ratelimitsvc"

	"errors"
	"fmt"
	"sort"
	"strings"

	listenerv3 "github.com/envoyproxy/go-control-plane/envoy/config/listener/v3"
	routev3 "github.com/envoyproxy/go-control-plane/envoy/config/route/v3"
	tlsv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/transport_sockets/tls/v3"
)

// Sentinel errors; Check wraps them so callers can use errors.Is.
var (
	ErrNoListener              = errors.New("no listener")
	ErrAmbiguousListener       = errors.New("ambiguous listener")
	ErrNoFilterChain           = errors.New("no matching filter chain")
	ErrNoHTTPConnectionManager = errors.New("no HTTP connection manager")
	ErrRouteConfigNotFound     = errors.New("route configuration not found")
	ErrInvalidConfig           = errors.New("invalid configuration")
	ErrUnsupported             = errors.New("unsupported")
	// ErrNoRoute: a layer-4 proxy has no cluster for the traffic, so Envoy
	// drops it (udp_proxy without a route action).
	ErrNoRoute = errors.New("no route")
)

// Request.Protocol values.
const (
	ProtocolTCP = "TCP"
	ProtocolUDP = "UDP"
)

// Request is one HTTP request as seen by a listener, or for a layer-4
// listener one TCP connection or UDP datagram flow; then only Port, Protocol,
// SNI, ALPN and Random matter.
type Request struct {
	Port    uint32            // listener port as seen in xDS (the Listener's socket_address.port_value)
	Host    string            // :authority; "host:port" is matched with the port first, then without it
	Path    string            // may include "?query"; "" means "/"
	Method  string            // default "GET"
	Headers map[string]string // extra request headers, names case-insensitive
	SNI     string            // TLS server name, "" for plaintext; see Table.Check for which listeners see it
	// Random is the random value for weighted clusters (HTTP and tcp_proxy), as
	// router_check_tool's random_value.
	Random uint64
	// ClientIP is the downstream address, for authorization on client CIDRs.
	ClientIP string
	// ALPN lists the protocols offered in the TLS ClientHello, used only for
	// filter_chain_match.application_protocols. Empty means none offered.
	ALPN []string
	// Protocol is the transport the client uses: "" or "TCP" (HTTP and TCP)
	// or "UDP" (case-insensitive). It picks between a TCP and a UDP listener
	// on the same port; "" also falls back to the UDP listener when the port
	// has no TCP one, "TCP" and "UDP" do not.
	Protocol string
	// After is how many requests like this one were sent just before it: a rate limit
	// counts them, and past its limit Envoy answers 429. Global limits need the rate limit
	// service's configuration (UseRateLimitService).
	After uint32
	// Gateway (namespace/name), when set, keeps to that Gateway's listeners (named
	// <namespace>/<name>/<listener>): EG gives each Gateway its own Envoy, so Gateways on
	// one port are told apart by which proxy the request reaches.
	Gateway string
	// OAuth2Login: the client went through the OAuth2 login first (scenario.Request). The
	// checker cannot model the callback (the code exchange at the token endpoint, the HMAC
	// of the cookies Envoy sets): it answers the request as a signed-in one, and says so.
	OAuth2Login bool
	// forwarded, when set (CheckForwarded), receives the request as forwarded to a cluster.
	forwarded *map[string]string
	// filters, when set (CheckDetailed), receives the HTTP filters that acted.
	filters *[]FilterEffect
}

// Answer describes what Envoy would do with the request.
type Answer struct {
	Listener    string // xDS listener name
	FilterChain string // filter chain name ("" if unnamed, and for udp_proxy, which has none)
	RouteConfig string // route configuration name
	VirtualHost string
	Route       string // route entry name
	Cluster     string // chosen cluster (after weighted selection); "" for direct response / redirect / 404
	// Status is 200 when routed to a cluster (nominal; for L4 "connected"), else the
	// direct response / redirect / 404 status.
	Status   int
	Body     string // direct response body (inline_string / inline_bytes)
	Location string // redirect target URL, fully built
	Matched  bool   // a route entry matched; for L4 the proxy had a cluster
	L4       bool   // answered by tcp_proxy or udp_proxy (no route configuration, virtual host or route)
	// AnsweredBy is the short name of the HTTP filter that answered the request itself (a
	// 401 from jwt_authn, a CORS preflight...), "" when none did. CheckDetailed lists all
	// the filters that acted.
	AnsweredBy string
}

// Table is built once from a snapshot and answers many requests. It is
// read-only after New and safe for concurrent use.
type Table struct {
	byPort map[uint32][]*listenerEntry
	all    []*listenerEntry
	routes map[string]*routeTable
	// generic are the generic SDS secrets of the snapshot by name (UseSecrets): the
	// credentials a credential_injector filter adds.
	generic map[string][]byte
	// rls is the rate limit service's configuration (UseRateLimitService); nil when unknown.
	rls *ratelimitsvc.Limits
}

// UseSecrets gives the table the snapshot's secrets, so that filters that read one (the
// credential injector) can act; without them such a filter is reported, not evaluated.
// Call it before the first Check.
func (t *Table) UseSecrets(secrets []*tlsv3.Secret) {
	t.generic = map[string][]byte{}
	for _, s := range secrets {
		if g := s.GetGenericSecret(); g != nil {
			t.generic[s.GetName()] = g.GetSecret().GetInlineBytes()
		}
	}
}

// UseRateLimitService gives the table the limits EG's rate limit service holds, so a
// request sent After others can be answered 429 by a ratelimit filter. Without them, such a
// request on a globally rate-limited route is an ErrUnsupported error, not a guess.
func (t *Table) UseRateLimitService(l *ratelimitsvc.Limits) { t.rls = l }

// New compiles the snapshot. It fails only when the snapshot as a whole is
// unusable (nil entries, duplicate names); problems confined to one listener
// or route configuration are reported by Check when a request reaches them, so
// one broken resource does not hide answers for the rest.
func New(listeners []*listenerv3.Listener, routes []*routev3.RouteConfiguration) (*Table, error) {
	t := &Table{
		byPort: map[uint32][]*listenerEntry{},
		routes: map[string]*routeTable{},
	}
	for i, rc := range routes {
		if rc == nil {
			return nil, fmt.Errorf("%w: route configuration #%d is nil", ErrInvalidConfig, i)
		}
		if _, dup := t.routes[rc.GetName()]; dup {
			return nil, fmt.Errorf("%w: duplicate route configuration name %q", ErrInvalidConfig, rc.GetName())
		}
		t.routes[rc.GetName()] = compileRouteConfig(rc)
	}
	seen := map[string]bool{}
	for i, l := range listeners {
		if l == nil {
			return nil, fmt.Errorf("%w: listener #%d is nil", ErrInvalidConfig, i)
		}
		if seen[l.GetName()] {
			return nil, fmt.Errorf("%w: duplicate listener name %q", ErrInvalidConfig, l.GetName())
		}
		seen[l.GetName()] = true
		entry := compileListener(l)
		t.all = append(t.all, entry)
		for _, p := range entry.ports {
			t.byPort[p] = append(t.byPort[p], entry)
		}
	}
	return t, nil
}

// Check routes one request. On error the Answer carries whatever was resolved
// before the failure (listener, filter chain, ...).
//
// A UDP listener with a udp_proxy listener filter answers with the proxy's
// cluster. Otherwise a filter chain is selected and its terminal filter
// answers: tcp_proxy with its cluster (Answer.L4), the HTTP connection
// manager by routing the request. For filter chain selection a TCP listener
// sees Request.SNI and ALPN only if it has a tls_inspector listener filter or
// a filter chain matching on server_names, application_protocols or
// transport_protocol "tls"; other listeners see a plaintext connection
// without SNI. A UDP listener without udp_proxy is taken as QUIC (HTTP/3):
// transport "quic", with SNI and ALPN.
func (t *Table) Check(req Request) (Answer, error) {
	var ans Answer
	proto, err := normalizeProtocol(req.Protocol)
	if err != nil {
		return ans, err
	}
	entry, err := t.findListener(req.Port, proto, req.Gateway)
	if err != nil {
		return ans, err
	}
	ans.Listener = entry.name
	if u := entry.udpProxy; u != nil {
		if u.err != nil {
			return ans, u.err
		}
		ans.Cluster, ans.Status, ans.Matched, ans.L4 = u.cluster, 200, true, true
		return ans, nil
	}
	if entry.err != nil {
		return ans, entry.err
	}
	fc, err := entry.selectChain(entry.connFor(req))
	if err != nil {
		return ans, err
	}
	ans.FilterChain = fc.name
	if fc.err != nil {
		return ans, fc.err
	}
	if fc.tcp != nil {
		if fc.rbac != nil {
			denied, err := networkRBACDenies(fc.rbac, req)
			if err != nil {
				return ans, fmt.Errorf("%w: listener %s: network RBAC: %v", ErrInvalidConfig, entry.name, err)
			}
			if denied {
				// The connection is closed before tcp_proxy sees it.
				ans.L4, ans.AnsweredBy = true, "rbac"
				return ans, nil
			}
		}
		ans.Cluster, ans.Status, ans.Matched, ans.L4 = fc.tcp.pick(req.Random), 200, true, true
		return ans, nil
	}
	h := fc.hcm
	table := h.inline
	if table == nil {
		table = t.routes[h.rdsName]
		if table == nil {
			return ans, fmt.Errorf(
				"%w: listener %s filter chain %q references RDS route configuration %q, which is not in the snapshot (have: %s)",
				ErrRouteConfigNotFound, entry.name, fc.name, h.rdsName, t.routeNames())
		}
	}
	ans.RouteConfig = table.name
	if table.err != nil {
		return ans, table.err
	}
	state := newRequestState(req, h)
	state.secrets = t.generic
	state.rls = t.rls
	if state.localReply != 0 {
		// The HTTP connection manager answered before routing (path normalization).
		ans.Status = state.localReply
		ans.Location = state.localReplyLocation
		return ans, nil
	}
	ans, err = table.route(state, ans)
	if err != nil || state.matched == nil {
		return ans, err
	}
	ans, err = runHTTPFilters(h, table, state, ans)
	if err != nil {
		return ans, err
	}
	return applyCustomResponse(h, state, ans)
}

func normalizeProtocol(p string) (string, error) {
	switch up := strings.ToUpper(p); up {
	case "", ProtocolTCP, ProtocolUDP:
		return up, nil
	}
	return "", fmt.Errorf("%w: request protocol %q (want \"\", %q or %q)", ErrUnsupported, p, ProtocolTCP, ProtocolUDP)
}

func (t *Table) findListener(port uint32, proto, gateway string) (*listenerEntry, error) {
	all := t.byPort[port]
	if gateway != "" {
		var mine []*listenerEntry
		for _, entry := range all {
			if strings.HasPrefix(entry.name, gateway+"/") {
				mine = append(mine, entry)
			}
		}
		if len(mine) == 0 {
			return nil, fmt.Errorf("%w of Gateway %s on port %d; listeners: %s", ErrNoListener, gateway, port,
				t.listenerSummary())
		}
		all = mine
	}
	var tcp, udp []*listenerEntry
	for _, entry := range all {
		if entry.udp {
			udp = append(udp, entry)
		} else {
			tcp = append(tcp, entry)
		}
	}
	cands := all
	switch {
	case proto == ProtocolUDP:
		cands = udp
	case proto == ProtocolTCP:
		cands = tcp
	case len(tcp) > 0:
		// A QUIC or udp_proxy listener may share the port with the TCP one;
		// without an explicit protocol the request is TCP.
		cands = tcp
	}
	switch len(cands) {
	case 1:
		return cands[0], nil
	case 0:
		if proto != "" {
			return nil, fmt.Errorf("%w: no %s listener on port %d; listeners: %s", ErrNoListener, proto, port,
				t.listenerSummary())
		}
		return nil, fmt.Errorf("%w on port %d; listeners: %s", ErrNoListener, port, t.listenerSummary())
	default:
		names := make([]string, len(cands))
		for i, entry := range cands {
			names[i] = entry.name
		}
		return nil, fmt.Errorf("%w: several listeners on port %d: %s", ErrAmbiguousListener, port, strings.Join(names, ", "))
	}
}

func (t *Table) listenerSummary() string {
	if len(t.all) == 0 {
		return "(none)"
	}
	type lp struct {
		port uint32
		name string
	}
	var all []lp
	for _, entry := range t.all {
		name := entry.name
		if entry.udp {
			name += ", UDP"
		}
		for _, p := range entry.ports {
			all = append(all, lp{p, name})
		}
		if len(entry.ports) == 0 {
			all = append(all, lp{0, name})
		}
	}
	sort.Slice(all, func(i, j int) bool {
		if all[i].port != all[j].port {
			return all[i].port < all[j].port
		}
		return all[i].name < all[j].name
	})
	parts := make([]string, len(all))
	for i, x := range all {
		if x.port == 0 {
			parts[i] = fmt.Sprintf("no port (%s)", x.name)
		} else {
			parts[i] = fmt.Sprintf("%d (%s)", x.port, x.name)
		}
	}
	return strings.Join(parts, ", ")
}

func (t *Table) routeNames() string {
	if len(t.routes) == 0 {
		return "none"
	}
	names := make([]string, 0, len(t.routes))
	for n := range t.routes {
		names = append(names, fmt.Sprintf("%q", n))
	}
	sort.Strings(names)
	return strings.Join(names, ", ")
}
