package routecheck

import (
	"fmt"
	"sort"
	"strings"

	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	listenerv3 "github.com/envoyproxy/go-control-plane/envoy/config/listener/v3"
	hcmv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/network/http_connection_manager/v3"
)

const (
	hcmFilterName = "envoy.filters.network.http_connection_manager"
	hcmTypeURL    = "type.googleapis.com/envoy.extensions.filters.network.http_connection_manager.v3.HttpConnectionManager"
)

type listenerEntry struct {
	name   string
	ports  []uint32
	udp    bool
	chains []*chainEntry
	def    *chainEntry
	err    error // listener-wide problem, reported by Check
}

type chainEntry struct {
	name   string
	index  int // position in filter_chains, for messages
	match  *listenerv3.FilterChainMatch
	hcm    *hcmConfig
	hcmErr error
}

// hcmConfig is the part of the HTTP connection manager that affects routing.
type hcmConfig struct {
	rdsName          string
	inline           *routeTable
	stripAnyPort     bool
	stripMatching    bool
	stripTrailingDot bool
	normalizePath    bool
	mergeSlashes     bool
	escapedSlashes   hcmv3.HttpConnectionManager_PathWithEscapedSlashesAction
	useRemoteAddress bool
}

func compileListener(l *listenerv3.Listener) *listenerEntry {
	le := &listenerEntry{name: l.GetName()}
	addPort := func(a *corev3.Address) {
		sa := a.GetSocketAddress()
		if sa == nil {
			return
		}
		if sa.GetProtocol() == corev3.SocketAddress_UDP {
			le.udp = true
		}
		p := sa.GetPortValue()
		for _, q := range le.ports {
			if q == p {
				return
			}
		}
		le.ports = append(le.ports, p)
	}
	addPort(l.GetAddress())
	for _, aa := range l.GetAdditionalAddresses() {
		addPort(aa.GetAddress())
	}
	if l.GetFilterChainMatcher() != nil {
		le.err = fmt.Errorf("%w: listener %s uses filter_chain_matcher (unified matcher API), which routecheck does not evaluate", ErrUnsupported, le.name)
		return le
	}
	for i, fc := range l.GetFilterChains() {
		le.chains = append(le.chains, compileChain(le.name, fc, i))
	}
	if dfc := l.GetDefaultFilterChain(); dfc != nil {
		le.def = compileChain(le.name, dfc, -1)
	}
	return le
}

func compileChain(listener string, fc *listenerv3.FilterChain, index int) *chainEntry {
	ce := &chainEntry{name: fc.GetName(), index: index, match: fc.GetFilterChainMatch()}
	ce.hcm, ce.hcmErr = findHCM(listener, fc)
	return ce
}

func findHCM(listener string, fc *listenerv3.FilterChain) (*hcmConfig, error) {
	for _, f := range fc.GetFilters() {
		tc := f.GetTypedConfig()
		isHCM := tc.GetTypeUrl() == hcmTypeURL || (tc == nil && f.GetName() == hcmFilterName)
		if !isHCM && f.GetName() == hcmFilterName && tc != nil {
			return nil, fmt.Errorf("%w: listener %s filter %q has typed_config of type %q, want %s",
				ErrInvalidConfig, listener, f.GetName(), tc.GetTypeUrl(), hcmTypeURL)
		}
		if !isHCM {
			continue
		}
		if f.GetConfigDiscovery() != nil || tc == nil {
			return nil, fmt.Errorf("%w: listener %s gets its HTTP connection manager via config_discovery (ECDS)", ErrUnsupported, listener)
		}
		m := &hcmv3.HttpConnectionManager{}
		if err := tc.UnmarshalTo(m); err != nil {
			return nil, fmt.Errorf("%w: listener %s: cannot unmarshal %s: %v", ErrInvalidConfig, listener, tc.GetTypeUrl(), err)
		}
		return newHCMConfig(listener, m)
	}
	return nil, fmt.Errorf("%w: listener %s has no HTTP connection manager; TCP/UDP checks are not supported yet", ErrNoHTTPConnectionManager, listener)
}

func newHCMConfig(listener string, m *hcmv3.HttpConnectionManager) (*hcmConfig, error) {
	h := &hcmConfig{
		stripMatching:    m.GetStripMatchingHostPort(),
		stripAnyPort:     m.GetStripAnyHostPort(),
		stripTrailingDot: m.GetStripTrailingHostDot(),
		normalizePath:    m.GetNormalizePath().GetValue(),
		mergeSlashes:     m.GetMergeSlashes(),
		escapedSlashes:   m.GetPathWithEscapedSlashesAction(),
		useRemoteAddress: m.GetUseRemoteAddress().GetValue(),
	}
	switch {
	case m.GetRds() != nil:
		h.rdsName = m.GetRds().GetRouteConfigName()
	case m.GetRouteConfig() != nil:
		h.inline = compileRouteConfig(m.GetRouteConfig())
	case m.GetScopedRoutes() != nil:
		return nil, fmt.Errorf("%w: listener %s uses scoped_routes", ErrUnsupported, listener)
	default:
		return nil, fmt.Errorf("%w: listener %s: HTTP connection manager has no route specifier", ErrInvalidConfig, listener)
	}
	return h, nil
}

// selectChain follows Envoy's FilterChainManagerImpl: destination port (exact,
// then unset), server name (exact, longest wildcard, then none), transport
// protocol (exact, then unset), application protocols (offered, then unset).
// Once a server name level matches, Envoy does not fall back to a less
// specific server name even if the lower levels fail.
func (le *listenerEntry) selectChain(req Request) (*chainEntry, error) {
	var exactPort, anyPort []*chainEntry
	for _, c := range le.chains {
		dp := c.match.GetDestinationPort()
		switch {
		case dp == nil || dp.GetValue() == 0:
			anyPort = append(anyPort, c)
		case dp.GetValue() == req.Port:
			exactPort = append(exactPort, c)
		}
	}
	for _, group := range [][]*chainEntry{exactPort, anyPort} {
		if len(group) == 0 {
			continue
		}
		c, err := le.byServerName(group, req)
		if err != nil || c != nil {
			return c, err
		}
	}
	if le.def != nil {
		return le.def, nil
	}
	return nil, fmt.Errorf("%w: listener %s has no filter chain for SNI %q (transport %s) and no default_filter_chain; chains: %s",
		ErrNoFilterChain, le.name, req.SNI, transportProtocol(req), le.chainSummary())
}

func transportProtocol(req Request) string {
	if req.SNI != "" {
		return "tls"
	}
	return "raw_buffer"
}

func (le *listenerEntry) byServerName(chains []*chainEntry, req Request) (*chainEntry, error) {
	groups := map[string][]*chainEntry{}
	for _, c := range chains {
		names := c.match.GetServerNames()
		if len(names) == 0 {
			groups[""] = append(groups[""], c)
			continue
		}
		for _, n := range names {
			n = asciiLower(n)
			if strings.HasPrefix(n, "*.") {
				n = n[1:] // Envoy keys "*.example.com" as ".example.com"
			}
			groups[n] = append(groups[n], c)
		}
	}
	sni := asciiLower(req.SNI)
	if g, ok := groups[sni]; ok && sni != "" {
		return le.byTransport(g, req)
	}
	// Every dot-suffix, longest first; pos starts at 1 so ".com"-style keys
	// never match the whole name.
	for pos := indexFrom(sni, '.', 1); pos >= 0 && pos < len(sni)-1; pos = indexFrom(sni, '.', pos+1) {
		if g, ok := groups[sni[pos:]]; ok {
			return le.byTransport(g, req)
		}
	}
	if g, ok := groups[""]; ok {
		return le.byTransport(g, req)
	}
	return nil, nil
}

func indexFrom(s string, c byte, from int) int {
	if from >= len(s) {
		return -1
	}
	i := strings.IndexByte(s[from:], c)
	if i < 0 {
		return -1
	}
	return from + i
}

func (le *listenerEntry) byTransport(chains []*chainEntry, req Request) (*chainEntry, error) {
	tp := transportProtocol(req)
	var exact, any []*chainEntry
	for _, c := range chains {
		switch c.match.GetTransportProtocol() {
		case tp:
			exact = append(exact, c)
		case "":
			any = append(any, c)
		}
	}
	if len(exact) > 0 {
		return le.byALPN(exact, req)
	}
	if len(any) > 0 {
		return le.byALPN(any, req)
	}
	return nil, nil
}

func (le *listenerEntry) byALPN(chains []*chainEntry, req Request) (*chainEntry, error) {
	for _, p := range req.ALPN {
		var g []*chainEntry
		for _, c := range chains {
			for _, ap := range c.match.GetApplicationProtocols() {
				if ap == p {
					g = append(g, c)
					break
				}
			}
		}
		if len(g) > 0 {
			return le.pickOne(g)
		}
	}
	var g []*chainEntry
	for _, c := range chains {
		if len(c.match.GetApplicationProtocols()) == 0 {
			g = append(g, c)
		}
	}
	if len(g) > 0 {
		return le.pickOne(g)
	}
	return nil, nil
}

// pickOne resolves what is left after the modelled criteria. Chains can only
// still differ by IP/source criteria, which a Request cannot express; a chain
// without such criteria is taken as the one a typical client would hit.
func (le *listenerEntry) pickOne(chains []*chainEntry) (*chainEntry, error) {
	if len(chains) == 1 {
		return chains[0], nil
	}
	var plain []*chainEntry
	for _, c := range chains {
		m := c.match
		if len(m.GetPrefixRanges()) == 0 && len(m.GetSourcePrefixRanges()) == 0 &&
			len(m.GetDirectSourcePrefixRanges()) == 0 && len(m.GetSourcePorts()) == 0 &&
			m.GetSourceType() == listenerv3.FilterChainMatch_ANY {
			plain = append(plain, c)
		}
	}
	if len(plain) == 1 {
		return plain[0], nil
	}
	names := make([]string, len(chains))
	for i, c := range chains {
		names[i] = c.label()
	}
	return nil, fmt.Errorf("%w: listener %s: filter chains %s differ only by IP/source criteria, which routecheck does not model",
		ErrUnsupported, le.name, strings.Join(names, ", "))
}

func (c *chainEntry) label() string {
	if c.name != "" {
		return fmt.Sprintf("%q", c.name)
	}
	if c.index < 0 {
		return "default_filter_chain"
	}
	return fmt.Sprintf("#%d", c.index)
}

func (le *listenerEntry) chainSummary() string {
	if len(le.chains) == 0 {
		return "(none)"
	}
	parts := make([]string, len(le.chains))
	for i, c := range le.chains {
		var crit []string
		if sn := c.match.GetServerNames(); len(sn) > 0 {
			s := append([]string(nil), sn...)
			sort.Strings(s)
			crit = append(crit, "server_names="+strings.Join(s, ","))
		}
		if tp := c.match.GetTransportProtocol(); tp != "" {
			crit = append(crit, "transport_protocol="+tp)
		}
		if dp := c.match.GetDestinationPort(); dp != nil {
			crit = append(crit, fmt.Sprintf("destination_port=%d", dp.GetValue()))
		}
		if ap := c.match.GetApplicationProtocols(); len(ap) > 0 {
			crit = append(crit, "application_protocols="+strings.Join(ap, ","))
		}
		if len(crit) == 0 {
			crit = append(crit, "match-all")
		}
		parts[i] = c.label() + " [" + strings.Join(crit, " ") + "]"
	}
	return strings.Join(parts, ", ")
}
