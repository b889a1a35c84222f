// Package routecheck evaluates go-control-plane v3 listeners and route
// configurations for a single HTTP request the way Envoy's router would (in the
// spirit of Envoy's router_check_tool), so scenarios can assert where a request
// goes without running Envoy.
//
// The package is offline and deterministic: everything Envoy would decide from
// runtime state (runtime fractions, cluster health, client certificates,
// dynamic metadata) is either ignored or reported as unsupported. See the
// comments on Request and Answer for the modelled inputs and outputs.
package routecheck

import (
	"errors"
	"fmt"
	"sort"
	"strings"

	listenerv3 "github.com/envoyproxy/go-control-plane/envoy/config/listener/v3"
	routev3 "github.com/envoyproxy/go-control-plane/envoy/config/route/v3"
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
)

// Request is one HTTP request as seen by a listener.
type Request struct {
	Port    uint32            // listener port as seen in xDS (the Listener's socket_address.port_value)
	Host    string            // :authority; "host:port" is matched with the port first, then without it
	Path    string            // may include "?query"; "" means "/"
	Method  string            // default "GET"
	Headers map[string]string // extra request headers, names case-insensitive
	SNI     string            // TLS server name, "" for plaintext
	Random  uint64            // random value for weighted clusters, as router_check_tool's random_value
	// ALPN lists the protocols offered in the TLS ClientHello, used only for
	// filter_chain_match.application_protocols. Empty means none offered.
	ALPN []string
}

// Answer describes what Envoy would do with the request.
type Answer struct {
	Listener    string // xDS listener name
	FilterChain string // filter chain name ("" if unnamed)
	RouteConfig string // route configuration name
	VirtualHost string
	Route       string // route entry name
	Cluster     string // chosen cluster (after weighted selection); "" for direct response / redirect / 404
	Status      int    // 200 when routed to a cluster (nominal), else the direct response / redirect / 404 status
	Body        string // direct response body (inline_string / inline_bytes)
	Location    string // redirect target URL, fully built
	Matched     bool   // a route entry matched
}

// Table is built once from a snapshot and answers many requests. It is
// read-only after New and safe for concurrent use.
type Table struct {
	byPort map[uint32][]*listenerEntry
	all    []*listenerEntry
	routes map[string]*routeTable
}

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
		le := compileListener(l)
		t.all = append(t.all, le)
		for _, p := range le.ports {
			t.byPort[p] = append(t.byPort[p], le)
		}
	}
	return t, nil
}

// Check routes one request. On error the Answer carries whatever was resolved
// before the failure (listener, filter chain, ...).
func (t *Table) Check(req Request) (Answer, error) {
	var ans Answer
	le, err := t.findListener(req.Port)
	if err != nil {
		return ans, err
	}
	ans.Listener = le.name
	if le.err != nil {
		return ans, le.err
	}
	fc, err := le.selectChain(req)
	if err != nil {
		return ans, err
	}
	ans.FilterChain = fc.name
	if fc.hcmErr != nil {
		return ans, fc.hcmErr
	}
	h := fc.hcm
	rt := h.inline
	if rt == nil {
		rt = t.routes[h.rdsName]
		if rt == nil {
			return ans, fmt.Errorf("%w: listener %s filter chain %q references RDS route configuration %q, which is not in the snapshot (have: %s)",
				ErrRouteConfigNotFound, le.name, fc.name, h.rdsName, t.routeNames())
		}
	}
	ans.RouteConfig = rt.name
	if rt.err != nil {
		return ans, rt.err
	}
	rs := newRequestState(req, h)
	if rs.localReply != 0 {
		// The HTTP connection manager answered before routing (path normalization).
		ans.Status = rs.localReply
		ans.Location = rs.localReplyLocation
		return ans, nil
	}
	return rt.route(rs, ans)
}

func (t *Table) findListener(port uint32) (*listenerEntry, error) {
	cands := t.byPort[port]
	if len(cands) > 1 {
		// A QUIC (UDP) listener commonly shares the port with the TCP one; the
		// request model is TCP, so prefer the TCP listeners.
		var tcp []*listenerEntry
		for _, le := range cands {
			if !le.udp {
				tcp = append(tcp, le)
			}
		}
		if len(tcp) > 0 {
			cands = tcp
		}
	}
	switch len(cands) {
	case 1:
		return cands[0], nil
	case 0:
		return nil, fmt.Errorf("%w on port %d; listeners: %s", ErrNoListener, port, t.listenerSummary())
	default:
		names := make([]string, len(cands))
		for i, le := range cands {
			names[i] = le.name
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
	for _, le := range t.all {
		for _, p := range le.ports {
			all = append(all, lp{p, le.name})
		}
		if len(le.ports) == 0 {
			all = append(all, lp{0, le.name})
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
