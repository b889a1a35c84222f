package routecheck

import (
	"fmt"
	"math"

	matcherv3 "github.com/cncf/xds/go/xds/type/matcher/v3"
	listenerv3 "github.com/envoyproxy/go-control-plane/envoy/config/listener/v3"
	tcpv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/network/tcp_proxy/v3"
	udpv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/udp/udp_proxy/v3"
)

// Layer-4 proxies: tcp_proxy as the terminal network filter of a filter
// chain, and udp_proxy as the listener filter of a UDP listener.

const (
	tcpProxyFilterName = "envoy.filters.network.tcp_proxy"
	tcpProxyTypeURL    = "type.googleapis.com/envoy.extensions.filters.network.tcp_proxy.v3.TcpProxy"
	udpProxyFilterName = "envoy.filters.udp_listener.udp_proxy"
	udpProxyTypeURL    = "type.googleapis.com/envoy.extensions.filters.udp.udp_proxy.v3.UdpProxyConfig"
	udpRouteTypeURL    = "type.googleapis.com/envoy.extensions.filters.udp.udp_proxy.v3.Route"
)

// tcpProxyEntry is a compiled tcp_proxy: either one cluster or weighted
// clusters.
type tcpProxyEntry struct {
	cluster  string
	weighted []weightedEntry // name and weight only
	total    uint64
}

func compileTCPProxy(listener, chain string, f *listenerv3.Filter) (*tcpProxyEntry, error) {
	typedConfig := f.GetTypedConfig()
	if f.GetConfigDiscovery() != nil || typedConfig == nil {
		return nil, fmt.Errorf("%w: listener %s filter chain %s gets its tcp_proxy via config_discovery (ECDS)",
			ErrUnsupported, listener, chain)
	}
	m := &tcpv3.TcpProxy{}
	if err := unpackTypedConfig(listener, "filter", f.GetName(), typedConfig, tcpProxyTypeURL, m); err != nil {
		return nil, err
	}
	bad := func(format string, args ...any) error {
		return fmt.Errorf("%w: listener %s filter chain %s: tcp_proxy %s", ErrInvalidConfig, listener, chain,
			fmt.Sprintf(format, args...))
	}
	t := &tcpProxyEntry{}
	switch cs := m.GetClusterSpecifier().(type) {
	case *tcpv3.TcpProxy_Cluster:
		if cs.Cluster == "" {
			return nil, bad("has an empty cluster")
		}
		t.cluster = cs.Cluster
	case *tcpv3.TcpProxy_WeightedClusters:
		for _, c := range cs.WeightedClusters.GetClusters() {
			if c.GetName() == "" {
				return nil, bad("has a weighted cluster without a name")
			}
			t.weighted = append(t.weighted, weightedEntry{name: c.GetName(), weight: uint64(c.GetWeight())})
			t.total += uint64(c.GetWeight())
		}
		if t.total == 0 {
			return nil, bad("weighted_clusters: sum of weights must be greater than 0")
		}
		if t.total > math.MaxUint32 {
			return nil, bad("weighted_clusters: sum of weights exceeds %d", uint64(math.MaxUint32))
		}
	default:
		return nil, bad("has no cluster specifier")
	}
	return t, nil
}

// pick mirrors WeightedClusterUtil::pickCluster as tcp_proxy calls it: the
// random value modulo the weight sum falls into one cluster's range, in
// configuration order.
func (t *tcpProxyEntry) pick(random uint64) string {
	if t.weighted == nil {
		return t.cluster
	}
	sel := random % t.total
	var end uint64
	for _, w := range t.weighted {
		end += w.weight
		if sel < end {
			return w.name
		}
	}
	return "" // unreachable: sel < total
}

// udpProxyEntry is a compiled udp_proxy listener filter: the cluster every
// datagram goes to, or why routecheck cannot tell.
type udpProxyEntry struct {
	cluster string
	err     error
}

func compileUDPProxy(listener string, lf *listenerv3.ListenerFilter) *udpProxyEntry {
	typedConfig := lf.GetTypedConfig()
	if lf.GetConfigDiscovery() != nil || typedConfig == nil {
		return &udpProxyEntry{err: fmt.Errorf("%w: listener %s gets its udp_proxy via config_discovery (ECDS)",
			ErrUnsupported, listener)}
	}
	m := &udpv3.UdpProxyConfig{}
	err := unpackTypedConfig(listener, "listener filter", lf.GetName(), typedConfig, udpProxyTypeURL, m)
	if err != nil {
		return &udpProxyEntry{err: err}
	}
	switch specifier := m.GetRouteSpecifier().(type) {
	case *udpv3.UdpProxyConfig_Cluster:
		if specifier.Cluster == "" {
			return &udpProxyEntry{err: fmt.Errorf("%w: listener %s: udp_proxy has an empty cluster", ErrInvalidConfig, listener)}
		}
		return &udpProxyEntry{cluster: specifier.Cluster}
	case *udpv3.UdpProxyConfig_Matcher:
		c, err := udpRouteCluster(listener, specifier.Matcher)
		return &udpProxyEntry{cluster: c, err: err}
	}
	return &udpProxyEntry{err: fmt.Errorf("%w: listener %s: udp_proxy has no route specifier (cluster or matcher)",
		ErrInvalidConfig, listener)}
}

// udpRouteCluster resolves a udp_proxy matcher that does not look at the
// datagram: on_no_match, possibly through nested matchers, must end in a
// udp_proxy Route action. Matchers with matcher_list / matcher_tree select by
// source or destination address, which a Request does not model.
func udpRouteCluster(listener string, m *matcherv3.Matcher) (string, error) {
	for {
		if m.GetMatcherType() != nil {
			return "", fmt.Errorf(
				"%w: listener %s: udp_proxy matcher uses matcher_list/matcher_tree (address inputs), which "+
					"routecheck does not evaluate",
				ErrUnsupported, listener)
		}
		onNoMatch := m.GetOnNoMatch()
		if nested := onNoMatch.GetMatcher(); nested != nil {
			m = nested
			continue
		}
		action := onNoMatch.GetAction()
		if action == nil {
			return "", fmt.Errorf(
				"%w: listener %s: udp_proxy matcher has no on_no_match action; Envoy drops every datagram (no route)",
				ErrNoRoute, listener)
		}
		typedConfig := action.GetTypedConfig()
		if typedConfig.GetTypeUrl() != udpRouteTypeURL {
			return "", fmt.Errorf("%w: listener %s: udp_proxy action %q has typed_config of type %q, want %s",
				ErrInvalidConfig, listener, action.GetName(), typedConfig.GetTypeUrl(), udpRouteTypeURL)
		}
		r := &udpv3.Route{}
		if err := typedConfig.UnmarshalTo(r); err != nil {
			return "", fmt.Errorf("%w: listener %s: cannot unmarshal %s: %v", ErrInvalidConfig, listener,
				typedConfig.GetTypeUrl(), err)
		}
		if r.GetCluster() == "" {
			return "", fmt.Errorf("%w: listener %s: udp_proxy route action has an empty cluster", ErrInvalidConfig, listener)
		}
		return r.GetCluster(), nil
	}
}
