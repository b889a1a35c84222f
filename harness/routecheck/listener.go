package routecheck

import (
	"fmt"
	"sort"
	"strings"

	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	listenerv3 "github.com/envoyproxy/go-control-plane/envoy/config/listener/v3"
	hcmv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/network/http_connection_manager/v3"
	customheaderv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/http/original_ip_detection/custom_header/v3"
	xffv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/http/original_ip_detection/xff/v3"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/anypb"
)

const (
	hcmFilterName = "envoy.filters.network.http_connection_manager"
	hcmTypeURL    = "type.googleapis.com/" +
		"envoy.extensions.filters.network.http_connection_manager.v3.HttpConnectionManager"
	customHeaderTypeURL = "type.googleapis.com/" +
		"envoy.extensions.http.original_ip_detection.custom_header.v3.CustomHeaderConfig"
	xffTypeURL          = "type.googleapis.com/envoy.extensions.http.original_ip_detection.xff.v3.XffConfig"
	tlsInspectorName    = "envoy.filters.listener.tls_inspector"
	tlsInspectorTypeURL = "type.googleapis.com/envoy.extensions.filters.listener.tls_inspector.v3.TlsInspector"
)

type listenerEntry struct {
	name   string
	ports  []uint32
	udp    bool
	chains []*chainEntry
	def    *chainEntry
	err    error // listener-wide problem, reported by Check

	// seesTLS: the listener learns SNI and ALPN from the ClientHello (see
	// connFor); false for plain TCP listeners.
	seesTLS bool
	// udpProxy is set for a UDP listener with a udp_proxy listener filter,
	// which answers every datagram without filter chains.
	udpProxy *udpProxyEntry
}

// chainEntry is one filter chain. Its terminal network filter is either the
// HTTP connection manager (hcm) or tcp_proxy (tcp); err says why neither
// could be compiled.
type chainEntry struct {
	name  string
	index int // position in filter_chains, for messages
	match *listenerv3.FilterChainMatch
	hcm   *hcmConfig
	tcp   *tcpProxyEntry
	err   error
	// rbac is a network RBAC filter before the terminal filter (client-IP authorization).
	rbac *anypb.Any
}

// conn is what filter chain selection sees of a connection: the destination
// port and what the listener filters detected.
type conn struct {
	port       uint32
	sni        string
	alpn       []string
	transport  string // detected transport protocol: "raw_buffer", "tls" or "quic"
	ignoredSNI string // Request.SNI the listener cannot see (no tls_inspector)
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
	// ipHeader and ipReject: a custom_header original IP detection extension with
	// reject_with_status: a request without a valid IP in that header gets that status
	// before routing (ClientTrafficPolicy customHeader.failClosed).
	ipHeader string
	ipReject int
	// xffHops and skipXffAppend are the connection manager's own X-Forwarded-For settings;
	// detect is its first original IP detection extension (nil: none). They decide the
	// downstream remote address (the client address filters see, see remoteAddress).
	xffHops       uint32
	skipXffAppend bool
	detect        *ipDetection
	// filters are the HTTP filters in order (see httpfilters.go).
	filters []httpFilterEntry
	// maxHeaderBytes is the largest request header block the codec takes
	// (max_request_headers_kb, 60 KiB unless set); a larger one is answered 431.
	maxHeaderBytes int
}

// defaultMaxRequestHeadersKB is Envoy's max_request_headers_kb when the connection manager
// sets none.
const defaultMaxRequestHeadersKB = 60

func compileListener(l *listenerv3.Listener) *listenerEntry {
	entry := &listenerEntry{name: l.GetName()}
	addPort := func(a *corev3.Address) {
		sa := a.GetSocketAddress()
		if sa == nil {
			return
		}
		if sa.GetProtocol() == corev3.SocketAddress_UDP {
			entry.udp = true
		}
		p := sa.GetPortValue()
		for _, q := range entry.ports {
			if q == p {
				return
			}
		}
		entry.ports = append(entry.ports, p)
	}
	addPort(l.GetAddress())
	for _, aa := range l.GetAdditionalAddresses() {
		addPort(aa.GetAddress())
	}
	hasInspector := false
	var listenerFilters []string
	for _, lf := range l.GetListenerFilters() {
		listenerFilters = append(listenerFilters, lf.GetName())
		switch {
		case isListenerFilter(lf, tlsInspectorName, tlsInspectorTypeURL):
			hasInspector = true
		case entry.udp && entry.udpProxy == nil &&
			(lf.GetName() == udpProxyFilterName || lf.GetTypedConfig().GetTypeUrl() == udpProxyTypeURL):
			// A datagram goes to the first udp_proxy; later ones never see it.
			entry.udpProxy = compileUDPProxy(entry.name, lf)
		}
	}
	entry.seesTLS = hasInspector || matchesOnTLS(l)
	if entry.udp && entry.udpProxy == nil && len(l.GetFilterChains()) == 0 && l.GetDefaultFilterChain() == nil {
		entry.err = fmt.Errorf(
			"%w: UDP listener %s has neither a %s listener filter nor (QUIC) filter chains; listener filters: [%s]",
			ErrUnsupported, entry.name, udpProxyFilterName, strings.Join(listenerFilters, ", "))
		return entry
	}
	if l.GetFilterChainMatcher() != nil {
		entry.err = fmt.Errorf(
			"%w: listener %s uses filter_chain_matcher (unified matcher API), which routecheck does not evaluate",
			ErrUnsupported, entry.name)
		return entry
	}
	for i, fc := range l.GetFilterChains() {
		entry.chains = append(entry.chains, compileChain(entry.name, fc, i))
	}
	if dfc := l.GetDefaultFilterChain(); dfc != nil {
		entry.def = compileChain(entry.name, dfc, -1)
	}
	return entry
}

func compileChain(listener string, fc *listenerv3.FilterChain, index int) *chainEntry {
	ce := &chainEntry{name: fc.GetName(), index: index, match: fc.GetFilterChainMatch()}
	// Both filters are terminal, so Envoy only accepts them as the last filter;
	// the first one found decides.
	var names []string
	for _, f := range fc.GetFilters() {
		names = append(names, f.GetName())
		if f.GetName() == networkRBACName {
			ce.rbac = f.GetTypedConfig()
			continue
		}
		if f.GetName() == hcmFilterName || f.GetTypedConfig().GetTypeUrl() == hcmTypeURL {
			ce.hcm, ce.err = compileHCM(listener, f)
			return ce
		}
		if f.GetName() == tcpProxyFilterName || f.GetTypedConfig().GetTypeUrl() == tcpProxyTypeURL {
			ce.tcp, ce.err = compileTCPProxy(listener, ce.label(), f)
			return ce
		}
	}
	ce.err = fmt.Errorf(
		"%w: listener %s filter chain %s has neither an HTTP connection manager nor a tcp_proxy filter (filters: [%s])",
		ErrNoHTTPConnectionManager, listener, ce.label(), strings.Join(names, ", "))
	return ce
}

func compileHCM(listener string, f *listenerv3.Filter) (*hcmConfig, error) {
	typedConfig := f.GetTypedConfig()
	if f.GetConfigDiscovery() != nil || typedConfig == nil {
		return nil, fmt.Errorf("%w: listener %s gets its HTTP connection manager via config_discovery (ECDS)", ErrUnsupported,
			listener)
	}
	m := &hcmv3.HttpConnectionManager{}
	if err := unpackTypedConfig(listener, "filter", f.GetName(), typedConfig, hcmTypeURL, m); err != nil {
		return nil, err
	}
	return newHCMConfig(listener, m)
}

// unpackTypedConfig unmarshals config into m, which is of typeURL; a config of another type
// is invalid. holder and name say whose config it is in the error ("filter", its name).
func unpackTypedConfig(listener, holder, name string, config *anypb.Any, typeURL string, m proto.Message) error {
	if config.GetTypeUrl() != typeURL {
		return fmt.Errorf("%w: listener %s %s %q has typed_config of type %q, want %s",
			ErrInvalidConfig, listener, holder, name, config.GetTypeUrl(), typeURL)
	}
	if err := config.UnmarshalTo(m); err != nil {
		return fmt.Errorf("%w: listener %s: cannot unmarshal %s: %v", ErrInvalidConfig, listener,
			config.GetTypeUrl(), err)
	}
	return nil
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
		filters:          compileHTTPFilters(m.GetHttpFilters()),
		maxHeaderBytes:   defaultMaxRequestHeadersKB * 1024,
	}
	if kb := m.GetMaxRequestHeadersKb(); kb != nil {
		h.maxHeaderBytes = int(kb.GetValue()) * 1024
	}
	h.xffHops, h.skipXffAppend = m.GetXffNumTrustedHops(), m.GetSkipXffAppend()
	for _, ext := range m.GetOriginalIpDetectionExtensions() {
		typedConfig := ext.GetTypedConfig()
		if typedConfig.GetTypeUrl() == xffTypeURL {
			x := &xffv3.XffConfig{}
			if err := typedConfig.UnmarshalTo(x); err != nil {
				return nil, fmt.Errorf("%w: listener %s: cannot unmarshal %s: %v", ErrInvalidConfig, listener,
					typedConfig.GetTypeUrl(), err)
			}
			h.detect = &ipDetection{xff: true, hops: x.GetXffNumTrustedHops(),
				trustedCIDRs: len(x.GetXffTrustedCidrs().GetCidrs()) > 0, skipAppend: x.GetSkipXffAppend().GetValue()}
			break
		}
		if typedConfig.GetTypeUrl() != customHeaderTypeURL {
			continue
		}
		ch := &customheaderv3.CustomHeaderConfig{}
		if err := typedConfig.UnmarshalTo(ch); err != nil {
			return nil, fmt.Errorf("%w: listener %s: cannot unmarshal %s: %v", ErrInvalidConfig, listener,
				typedConfig.GetTypeUrl(), err)
		}
		if reject := ch.GetRejectWithStatus(); reject != nil {
			h.ipHeader, h.ipReject = strings.ToLower(ch.GetHeaderName()), int(reject.GetCode())
		}
		h.detect = &ipDetection{header: strings.ToLower(ch.GetHeaderName())}
		break // the first extension decides (later ones are tried only on failure without reject)
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
func (entry *listenerEntry) selectChain(req conn) (*chainEntry, error) {
	var exactPort, anyPort []*chainEntry
	for _, c := range entry.chains {
		dp := c.match.GetDestinationPort()
		switch {
		case dp == nil || dp.GetValue() == 0:
			anyPort = append(anyPort, c)
		case dp.GetValue() == req.port:
			exactPort = append(exactPort, c)
		}
	}
	for _, group := range [][]*chainEntry{exactPort, anyPort} {
		if len(group) == 0 {
			continue
		}
		c, err := entry.byServerName(group, req)
		if err != nil || c != nil {
			return c, err
		}
	}
	if entry.def != nil {
		return entry.def, nil
	}
	var note string
	if req.ignoredSNI != "" {
		note = fmt.Sprintf(" (the listener has no %s listener filter, so the client's SNI %q is not seen)", tlsInspectorName,
			req.ignoredSNI)
	}
	return nil, fmt.Errorf(
		"%w: listener %s has no filter chain for SNI %q (transport %s)%s and no default_filter_chain; chains: %s",
		ErrNoFilterChain, entry.name, req.sni, req.transport, note, entry.chainSummary())
}

// connFor is what the listener filters detect for a request. A TCP listener
// learns SNI and ALPN only from a TLS inspector (seesTLS, see matchesOnTLS);
// without one the connection is "raw_buffer" with no server name whatever the
// client sends. QUIC always carries both in its handshake.
func (entry *listenerEntry) connFor(req Request) conn {
	c := conn{port: req.Port, transport: "raw_buffer"}
	switch {
	case entry.udp:
		c.sni, c.alpn, c.transport = req.SNI, req.ALPN, "quic"
	case entry.seesTLS:
		c.sni, c.alpn = req.SNI, req.ALPN
		if req.SNI != "" {
			c.transport = "tls"
		}
	default:
		c.ignoredSNI = req.SNI
	}
	return c
}

// matchesOnTLS: a filter chain matches on what only a TLS inspector can
// detect. Envoy once added the inspector to such listeners by itself; current
// Envoy needs it configured. routecheck keeps honouring Request.SNI on these
// listeners even without one, so the HTTP answers given so far do not change,
// and the SNI is dropped only on plain listeners, where no chain looks at it
// except through transport_protocol "raw_buffer".
func matchesOnTLS(l *listenerv3.Listener) bool {
	for _, fc := range l.GetFilterChains() {
		m := fc.GetFilterChainMatch()
		if m.GetTransportProtocol() == "tls" || len(m.GetServerNames()) > 0 || len(m.GetApplicationProtocols()) > 0 {
			return true
		}
	}
	return false
}

func isListenerFilter(lf *listenerv3.ListenerFilter, name, typeURL string) bool {
	typedConfig := lf.GetTypedConfig()
	return typedConfig.GetTypeUrl() == typeURL || (typedConfig == nil && lf.GetName() == name)
}

func (entry *listenerEntry) byServerName(chains []*chainEntry, req conn) (*chainEntry, error) {
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
	sni := asciiLower(req.sni)
	if g, ok := groups[sni]; ok && sni != "" {
		return entry.byTransport(g, req)
	}
	// Every dot-suffix, longest first; pos starts at 1 so ".com"-style keys
	// never match the whole name.
	for pos := indexFrom(sni, '.', 1); pos >= 0 && pos < len(sni)-1; pos = indexFrom(sni, '.', pos+1) {
		if g, ok := groups[sni[pos:]]; ok {
			return entry.byTransport(g, req)
		}
	}
	if g, ok := groups[""]; ok {
		return entry.byTransport(g, req)
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

func (entry *listenerEntry) byTransport(chains []*chainEntry, req conn) (*chainEntry, error) {
	tp := req.transport
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
		return entry.byALPN(exact, req)
	}
	if len(any) > 0 {
		return entry.byALPN(any, req)
	}
	return nil, nil
}

func (entry *listenerEntry) byALPN(chains []*chainEntry, req conn) (*chainEntry, error) {
	for _, p := range req.alpn {
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
			return entry.pickOne(g)
		}
	}
	var g []*chainEntry
	for _, c := range chains {
		if len(c.match.GetApplicationProtocols()) == 0 {
			g = append(g, c)
		}
	}
	if len(g) > 0 {
		return entry.pickOne(g)
	}
	return nil, nil
}

// pickOne resolves what is left after the modelled criteria. Chains can only
// still differ by IP/source criteria, which a Request cannot express; a chain
// without such criteria is taken as the one a typical client would hit.
func (entry *listenerEntry) pickOne(chains []*chainEntry) (*chainEntry, error) {
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
	return nil, fmt.Errorf(
		"%w: listener %s: filter chains %s differ only by IP/source criteria, which routecheck does not model",
		ErrUnsupported, entry.name, strings.Join(names, ", "))
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

func (entry *listenerEntry) chainSummary() string {
	if len(entry.chains) == 0 {
		return "(none)"
	}
	parts := make([]string, len(entry.chains))
	for i, c := range entry.chains {
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
