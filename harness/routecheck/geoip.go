package routecheck

import (
	"fmt"
	"net/netip"
	"strings"

	geoipv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/http/geoip/v3"
	maxmindv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/geoip_providers/maxmind/v3"

	"github.com/egharness/egharness/harness/geoip"
)

// ipDetection is a connection manager's original IP detection extension.
type ipDetection struct {
	header       string // custom_header: the header holding the client address
	xff          bool   // the xff extension
	hops         uint32 // its xff_num_trusted_hops
	trustedCIDRs bool   // its xff_trusted_cidrs are set (not evaluated)
	skipAppend   bool   // its skip_xff_append
}

// tierClient is the address of a request that names no clientIP: the real Envoy tier's
// client connects from loopback.
var tierClient = netip.MustParseAddr("127.0.0.1")

// connAddr is the connection's source: the request's clientIP (the tier sends it in a
// PROXY protocol header), else the tier's loopback client.
func (state *requestState) connAddr() (netip.Addr, error) {
	if state.req.ClientIP == "" {
		return tierClient, nil
	}
	ip, err := netip.ParseAddr(state.req.ClientIP)
	if err != nil {
		return netip.Addr{}, fmt.Errorf("clientIP %q: %v", state.req.ClientIP, err)
	}
	return ip.Unmap(), nil
}

// lastXFF is Envoy's Utility::getLastAddressFromXFF: the address skip entries from the
// right of an X-Forwarded-For value, false when there are not that many or it is no IP.
func lastXFF(xff string, skip uint32) (netip.Addr, bool) {
	if xff == "" {
		return netip.Addr{}, false
	}
	parts := strings.Split(xff, ",")
	if uint32(len(parts)) <= skip {
		return netip.Addr{}, false
	}
	ip, err := netip.ParseAddr(strings.TrimSpace(parts[len(parts)-1-int(skip)]))
	if err != nil {
		return netip.Addr{}, false
	}
	return ip.Unmap(), true
}

// remoteAddress is the downstream remote address the connection manager settles on
// (ConnectionManagerUtility::mutateRequestHeaders), the one filters look up by default:
// with use_remote_address the connection's source, or the X-Forwarded-For hop
// xff_num_trusted_hops trusts; else what the first detection extension finds (a custom
// header, the X-Forwarded-For hop), and the connection's source when it finds nothing.
func remoteAddress(h *hcmConfig, state *requestState) (netip.Addr, error) {
	conn, err := state.connAddr()
	if err != nil {
		return conn, err
	}
	xff := state.headers["x-forwarded-for"]
	if h.useRemoteAddress {
		if h.xffHops > 0 {
			if a, ok := lastXFF(xff, h.xffHops-1); ok {
				return a, nil
			}
		}
		return conn, nil
	}
	switch d := h.detect; {
	case d == nil:
		if a, ok := lastXFF(xff, h.xffHops); ok {
			return a, nil
		}
	case d.xff && d.trustedCIDRs:
		return conn, fmt.Errorf("%w: X-Forwarded-For detection on trusted CIDRs is not evaluated", ErrUnsupported)
	case d.xff:
		if a, ok := lastXFF(xff, d.hops); ok {
			return a, nil
		}
	default:
		if a, err := netip.ParseAddr(strings.TrimSpace(state.headers[d.header])); err == nil {
			return a.Unmap(), nil
		}
	}
	return conn, nil
}

// xffSeen is the X-Forwarded-For header the HTTP filters see: the client's, with the
// connection's source appended when the connection manager appends it: use_remote_address
// without skip_xff_append, or (real Envoy 1.39.3, scenario authorization-geoip) an xff
// detection extension without skip_xff_append, whether it found an address or not. For a
// loopback source Envoy appends its own local address, which the stand-in geolocation
// places where it places every loopback address.
func xffSeen(h *hcmConfig, state *requestState) (string, error) {
	xff := state.headers["x-forwarded-for"]
	appendConn := h.useRemoteAddress && !h.skipXffAppend
	if d := h.detect; !h.useRemoteAddress && d != nil && d.xff && !d.skipAppend {
		appendConn = true
	}
	if !appendConn {
		return xff, nil
	}
	conn, err := state.connAddr()
	if err != nil {
		return "", err
	}
	if xff == "" {
		return conn.String(), nil
	}
	return xff + "," + conn.String(), nil
}

// geoFields are the MaxMind provider's field keys (the headers it writes) by harness/geoip
// field, with the database kinds that answer each, the first configured one asked.
func geoFields(c *maxmindv3.MaxMindConfig) []struct{ field, header string } {
	k := c.GetCommonProviderConfig().GetGeoFieldKeys()
	old := c.GetCommonProviderConfig().GetGeoHeadersToAdd()
	pick := func(a, b string) string {
		if a != "" {
			return a
		}
		return b
	}
	return []struct{ field, header string }{
		{"country", pick(k.GetCountry(), old.GetCountry())},
		{"region", pick(k.GetRegion(), old.GetRegion())},
		{"city", pick(k.GetCity(), old.GetCity())},
		{"asn", pick(k.GetAsn(), old.GetAsn())},
		{"isp", k.GetIsp()},
		{"is_anon", pick(k.GetAnon(), old.GetIsAnon())},
		{"anon_vpn", pick(k.GetAnonVpn(), old.GetAnonVpn())},
		{"anon_hosting", pick(k.GetAnonHosting(), old.GetAnonHosting())},
		{"anon_tor", pick(k.GetAnonTor(), old.GetAnonTor())},
		{"anon_proxy", pick(k.GetAnonProxy(), old.GetAnonProxy())},
	}
}

// geoDatabases says whether the provider has a database that answers a field.
func geoDatabases(c *maxmindv3.MaxMindConfig, field string) bool {
	have := map[geoip.Kind]bool{
		geoip.City: c.GetCityDbPath() != "", geoip.Country: c.GetCountryDbPath() != "",
		geoip.ASN: c.GetAsnDbPath() != "", geoip.ISP: c.GetIspDbPath() != "", geoip.Anonymity: c.GetAnonDbPath() != "",
	}
	for _, k := range geoip.Kinds {
		if !have[k] {
			continue
		}
		for _, f := range k.Fields() {
			if f == field {
				return true
			}
		}
	}
	return false
}

// evalGeoIP runs a geoip filter with a MaxMind provider: the address looked up is the
// custom header's, the X-Forwarded-For hop xff_num_trusted_hops (above zero) skips, or
// else the downstream remote address (remoteAddress); its location comes from the stand-in
// geolocation (harness/geoip), whose databases the real Envoy tier gives every MaxMind
// provider, and each field the provider writes replaces its request header. A field the
// databases hold nothing for leaves the header as the client sent it, as Envoy does.
func evalGeoIP(f httpFilterEntry, h *hcmConfig, state *requestState, eff *FilterEffect) (map[string]string, error) {
	g := &geoipv3.Geoip{}
	if err := f.cfg.UnmarshalTo(g); err != nil {
		return nil, err
	}
	if name := g.GetProvider().GetName(); name != "envoy.geoip_providers.maxmind" {
		return nil, fmt.Errorf("%w: geoip provider %s", ErrUnsupported, name)
	}
	mm := &maxmindv3.MaxMindConfig{}
	if err := g.GetProvider().GetTypedConfig().UnmarshalTo(mm); err != nil {
		return nil, err
	}
	var (
		addr netip.Addr
		ok   bool
	)
	switch {
	case g.GetCustomHeaderConfig() != nil:
		a, err := netip.ParseAddr(
			strings.TrimSpace(state.headers[strings.ToLower(g.GetCustomHeaderConfig().GetHeaderName())]))
		addr, ok = a.Unmap(), err == nil
	case g.GetXffConfig().GetXffNumTrustedHops() > 0:
		xff, err := xffSeen(h, state)
		if err != nil {
			return nil, err
		}
		addr, ok = lastXFF(xff, g.GetXffConfig().GetXffNumTrustedHops())
	}
	if !ok {
		a, err := remoteAddress(h, state)
		if err != nil {
			return nil, err
		}
		addr = a
	}
	eff.Mode = addr.String()
	loc, found := geoip.Lookup(addr)
	if !found {
		eff.Outcome = "not in the stand-in databases"
		return nil, nil
	}
	out := map[string]string{}
	var set []string
	fields := geoFields(mm)
	// Envoy 1.39.3's MaxMind provider asks its Anonymous IP database only when the is_anon
	// or anon_vpn key is set (GeoipProvider::lookupInAnonDb): anon_hosting, anon_tor and
	// anon_proxy alone are never written (scenario authorization-geoip).
	anonAsked := false
	for _, fk := range fields {
		anonAsked = anonAsked || (fk.header != "" && (fk.field == "is_anon" || fk.field == "anon_vpn"))
	}
	for _, fk := range fields {
		if fk.header == "" || !geoDatabases(mm, fk.field) {
			continue
		}
		if strings.HasPrefix(fk.field, "anon_") && !anonAsked {
			continue
		}
		if v := loc.Value(fk.field); v != "" {
			out[strings.ToLower(fk.header)] = v
			set = append(set, fk.field+"="+v)
		}
	}
	eff.Outcome = "located " + strings.Join(set, " ")
	return out, nil
}
