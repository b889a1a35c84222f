package envoytier

import (
	"net"

	clusterv3 "github.com/envoyproxy/go-control-plane/envoy/config/cluster/v3"
	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	endpointv3 "github.com/envoyproxy/go-control-plane/envoy/config/endpoint/v3"
	listenerv3 "github.com/envoyproxy/go-control-plane/envoy/config/listener/v3"
	proxyprotocolv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/listener/proxy_protocol/v3"
	tlsv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/transport_sockets/tls/v3"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/anypb"

	"slices"
	"strconv"

	"github.com/egharness/egharness/harness/live"
	"github.com/egharness/egharness/translator/result"
)

// onLoopback returns a deep copy of x (listeners, clusters, endpoints, secrets) that touches nothing but loopback:
// every listener binds listenIP on its translated port (EG's 80 → 10080 mapping is the translator's), and every
// upstream address that is not already a loopback stand-in (an echo server) points at sink, a loopback port that
// accepts and closes. DNS clusters (FQDN backends, external services such as a JWKS host or the rate limit service)
// become static clusters on the sink, so Envoy resolves no names and never reaches beyond the machine.
func onLoopback(x *result.XDS, listenIP, sinkHost string, sinkPort uint32) *result.XDS {
	return onLoopbackBy(x, func(string) string { return listenIP }, sinkHost, sinkPort)
}

// onLoopbackBy is onLoopback with an address per listener (by name).
func onLoopbackBy(x *result.XDS, listenIP func(listener string) string, sinkHost string, sinkPort uint32) *result.XDS {
	out := *x
	out.Listeners = make([]*listenerv3.Listener, len(x.Listeners))
	for i, l := range x.Listeners {
		c := proto.Clone(l).(*listenerv3.Listener)
		ip := listenIP(c.GetName())
		bindLoopback(c.GetAddress(), ip)
		for _, a := range c.GetAdditionalAddresses() {
			bindLoopback(a.GetAddress(), ip)
		}
		out.Listeners[i] = c
	}
	out.Endpoints = make([]*endpointv3.ClusterLoadAssignment, len(x.Endpoints))
	for i, cla := range x.Endpoints {
		c := proto.Clone(cla).(*endpointv3.ClusterLoadAssignment)
		sinkEndpoints(c, sinkHost, sinkPort)
		out.Endpoints[i] = c
	}
	out.Secrets = make([]*tlsv3.Secret, len(x.Secrets))
	for i, sec := range x.Secrets {
		out.Secrets[i] = proto.Clone(sec).(*tlsv3.Secret)
	}
	out.Clusters = make([]*clusterv3.Cluster, len(x.Clusters))
	for i, cl := range x.Clusters {
		c := proto.Clone(cl).(*clusterv3.Cluster)
		// The DNS cluster types, and the DNS cluster extension EG v1.9 emits instead.
		if t := c.GetType(); t == clusterv3.Cluster_STRICT_DNS || t == clusterv3.Cluster_LOGICAL_DNS ||
			c.GetClusterType().GetName() == "envoy.cluster.dns" {
			c.ClusterDiscoveryType = &clusterv3.Cluster_Type{Type: clusterv3.Cluster_STATIC}
		}
		if c.GetLoadAssignment() != nil {
			sinkEndpoints(c.GetLoadAssignment(), sinkHost, sinkPort)
		}
		out.Clusters[i] = c
	}
	return &out
}

func bindLoopback(a *corev3.Address, ip string) {
	sa := a.GetSocketAddress()
	if sa == nil {
		return // an internal listener or a pipe: nothing binds a port
	}
	sa.Address = ip
	sa.Ipv4Compat = false
}

func sinkEndpoints(cla *endpointv3.ClusterLoadAssignment, host string, port uint32) {
	for _, l := range cla.GetEndpoints() {
		for _, e := range l.GetLbEndpoints() {
			sa := e.GetEndpoint().GetAddress().GetSocketAddress()
			if sa == nil {
				continue
			}
			if ip := net.ParseIP(sa.GetAddress()); ip != nil && ip.IsLoopback() {
				continue
			}
			sa.Address = host
			sa.PortSpecifier = &corev3.SocketAddress_PortValue{PortValue: port}
			sa.ResolverName = ""
		}
	}
}

// moveAll points every endpoint of cla at host:port.
func moveAll(cla *endpointv3.ClusterLoadAssignment, host string, port uint32) {
	for _, l := range cla.GetEndpoints() {
		for _, e := range l.GetLbEndpoints() {
			if sa := e.GetEndpoint().GetAddress().GetSocketAddress(); sa != nil {
				sa.Address = host
				sa.PortSpecifier = &corev3.SocketAddress_PortValue{PortValue: port}
				sa.ResolverName = ""
			}
		}
	}
}

const proxyProtocolFilter = "envoy.filters.listener.proxy_protocol"

// withProxyProtocol puts a PROXY protocol listener filter first on every TCP listener that
// has none, accepting connections without the header too: a request with a clientIP is sent
// with a PROXY header naming that address, so Envoy sees the client the scenario means
// (RBAC on client CIDRs, rate limits on the remote address). Other requests send none.
func withProxyProtocol(x *result.XDS) error {
	cfg, err := anypb.New(&proxyprotocolv3.ProxyProtocol{AllowRequestsWithoutProxyProtocol: true})
	if err != nil {
		return err
	}
	for _, l := range x.Listeners {
		if l.GetAddress().GetSocketAddress().GetProtocol() == corev3.SocketAddress_UDP || l.GetUdpListenerConfig() != nil {
			continue
		}
		has := false
		for _, f := range l.GetListenerFilters() {
			has = has || f.GetName() == proxyProtocolFilter
		}
		if !has {
			l.ListenerFilters = append(
				[]*listenerv3.ListenerFilter{{Name: proxyProtocolFilter,
					ConfigType: &listenerv3.ListenerFilter_TypedConfig{TypedConfig: cfg}}}, l.ListenerFilters...)
		}
	}
	return nil
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
