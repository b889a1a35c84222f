package live

import (
	"fmt"
	"net"
	"sort"
	"strconv"

	endpointv3 "github.com/envoyproxy/go-control-plane/envoy/config/endpoint/v3"
	"google.golang.org/protobuf/proto"

	"github.com/egharness/egharness/translator/ir"
	"github.com/egharness/egharness/translator/result"
)

// BackendKey names a scenario backend: namespace/name of its Service (or EG Backend).
func BackendKey(b *ir.Backend) string { return b.Namespace + "/" + b.ServiceName }

// Servable says whether an echo server can stand in for the backend: it resolves to
// endpoints Envoy connects to by address. Invalid backends have none, and DNS backends
// (FQDN EG Backends) name hosts outside the cluster.
func Servable(b *ir.Backend) bool { return !b.Invalid && !b.DNS && b.ServiceName != "" }

// Localities maps each backend's name (the locality region in the load assignments) to the
// backend.
func Localities(x *ir.XDS) map[string]*ir.Backend {
	out := map[string]*ir.Backend{}
	for _, d := range x.Destinations() {
		for _, b := range d.Settings {
			out[b.Name] = b
		}
	}
	return out
}

// Backends lists the servable backends, each once, sorted: the echo servers to run.
func Backends(x *ir.XDS) []string {
	seen := map[string]bool{}
	var out []string
	for _, b := range Localities(x) {
		if Servable(b) && !seen[BackendKey(b)] {
			seen[BackendKey(b)] = true
			out = append(out, BackendKey(b))
		}
	}
	sort.Strings(out)
	return out
}

// RewriteEndpoints returns a copy of x whose load assignments send each backend's share of
// the traffic to its stand-in: addrs maps a backend key to host:port (an echo Service).
// Localities keep their names and weights, so weighted choices stay as translated; only
// addresses change. A locality whose backend has no stand-in keeps its endpoints.
func RewriteEndpoints(x *result.XDS, irx *ir.XDS, addrs map[string]string) (*result.XDS, error) {
	locs := Localities(irx)
	out := *x
	out.Endpoints = make([]*endpointv3.ClusterLoadAssignment, len(x.Endpoints))
	for i, cla := range x.Endpoints {
		c := proto.Clone(cla).(*endpointv3.ClusterLoadAssignment)
		for _, l := range c.GetEndpoints() {
			b := locs[l.GetLocality().GetRegion()]
			if b == nil || !Servable(b) || len(l.GetLbEndpoints()) == 0 {
				continue
			}
			addr, ok := addrs[BackendKey(b)]
			if !ok {
				continue
			}
			host, portStr, err := net.SplitHostPort(addr)
			if err != nil {
				return nil, fmt.Errorf("stand-in address for %s: %w", BackendKey(b), err)
			}
			port, err := strconv.ParseUint(portStr, 10, 16)
			if err != nil {
				return nil, fmt.Errorf("stand-in address for %s: bad port %q", BackendKey(b), portStr)
			}
			first := l.GetLbEndpoints()[0]
			first.HostIdentifier = &endpointv3.LbEndpoint_Endpoint{Endpoint: &endpointv3.Endpoint{Address: socketAddress(host,
				uint32(port))}}
			l.LbEndpoints = []*endpointv3.LbEndpoint{first}
		}
		out.Endpoints[i] = c
	}
	return &out, nil
}
