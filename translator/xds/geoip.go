package xds

import (
	"strconv"

	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	geoipv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/http/geoip/v3"
	hcmv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/network/http_connection_manager/v3"
	geocommonv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/geoip_providers/common/v3"
	maxmindv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/geoip_providers/maxmind/v3"

	"github.com/egharness/egharness/translator/ir"
)

// SecurityPolicy clientIPGeoLocations (S0-54): EG v1.9 puts a geoip filter before RBAC on
// the listener, which looks the client address up in the EnvoyProxy's MaxMind databases
// and writes each geolocation field a rule uses to an internal request header; the RBAC
// rules match those headers, and every route of the listener removes them before the
// request goes upstream.

const maxMindProvider = "envoy.geoip_providers.maxmind"

// geoHeaders are EG's internal request headers, by geolocation field.
var geoHeaders = map[string]string{
	"country":     "x-eg-internal-geoip-country",
	"region":      "x-eg-internal-geoip-region",
	"city":        "x-eg-internal-geoip-city",
	"asn":         "x-eg-internal-geoip-asn",
	"isp":         "x-eg-internal-geoip-isp",
	"anon":        "x-eg-internal-geoip-anon",
	"anonVPN":     "x-eg-internal-geoip-anon-vpn",
	"anonHosting": "x-eg-internal-geoip-anon-hosting",
	"anonTor":     "x-eg-internal-geoip-anon-tor",
	"anonProxy":   "x-eg-internal-geoip-anon-proxy",
}

// geoHeadersToRemove are the internal headers of the listener's geolocation fields, in
// field order.
func geoHeadersToRemove(l *ir.HTTPListener) []string {
	if l.GeoIP == nil {
		return nil
	}
	out := make([]string, 0, len(l.GeoIP.Fields))
	for _, f := range l.GeoIP.Fields {
		out = append(out, geoHeaders[f])
	}
	return out
}

// geoIPFilter is the listener's geoip filter, nil when no policy validated on it (EG then
// leaves the filter out and the policy's routes answer 500).
func geoIPFilter(l *ir.HTTPListener) *hcmv3.HttpFilter {
	g := l.GeoIP
	if g == nil || g.MaxMind == nil || len(g.Fields) == 0 {
		return nil
	}
	keys := &geocommonv3.CommonGeoipProviderConfig_GeolocationFieldKeys{}
	for _, f := range g.Fields {
		h := geoHeaders[f]
		switch f {
		case "country":
			keys.Country = h
		case "region":
			keys.Region = h
		case "city":
			keys.City = h
		case "asn":
			keys.Asn = h
		case "isp":
			keys.Isp = h
		case "anon":
			keys.Anon = h
		case "anonVPN":
			keys.AnonVpn = h
		case "anonHosting":
			keys.AnonHosting = h
		case "anonTor":
			keys.AnonTor = h
		case "anonProxy":
			keys.AnonProxy = h
		}
	}
	mm := g.MaxMind
	provider := &maxmindv3.MaxMindConfig{
		CityDbPath:           mm.CityDBPath,
		AsnDbPath:            mm.ASNDBPath,
		AnonDbPath:           mm.AnonymousIPDBPath,
		IspDbPath:            mm.ISPDBPath,
		CountryDbPath:        mm.CountryDBPath,
		CommonProviderConfig: &geocommonv3.CommonGeoipProviderConfig{GeoFieldKeys: keys},
	}
	cfg := &geoipv3.Geoip{Provider: &corev3.TypedExtensionConfig{Name: maxMindProvider, TypedConfig: mustAny(provider)}}
	// The address looked up: the custom header, the X-Forwarded-For hop, or (directSourceIP,
	// and X-Forwarded-For without trusted hops) Envoy's default, the connection's source.
	if ct := l.Policies.ClientTrafficSettings; ct != nil && ct.ClientIP != nil {
		ip := ct.ClientIP
		switch {
		case ip.CustomHeader != nil:
			cfg.CustomHeaderConfig = &geoipv3.Geoip_CustomHeaderConfig{HeaderName: ip.CustomHeader.Name}
		case ip.XForwardedFor != nil && ip.XForwardedFor.NumTrustedHops != nil:
			hops := *ip.XForwardedFor.NumTrustedHops
			if hops > 0 {
				hops--
			}
			cfg.XffConfig = &geoipv3.Geoip_XffConfig{XffNumTrustedHops: hops}
		}
	}
	return typedFilter(ir.FilterGeoIP, cfg)
}

// geoPredicate ORs a rule's locations; each location ANDs its fields, matched on the
// internal headers (names case-insensitively, numbers and booleans exactly).
func geoPredicate(locs []ir.GeoLocation) *predicate {
	var any []*predicate
	for _, g := range locs {
		var all []*predicate
		add := func(field, value string, ignoreCase bool) {
			all = append(all, headerPredicates(geoHeaders[field], []string{value}, ignoreCase)...)
		}
		if g.Country != nil {
			add("country", *g.Country, true)
		}
		if g.Region != nil {
			add("region", *g.Region, true)
		}
		if g.City != nil {
			add("city", *g.City, true)
		}
		if g.ASN != nil {
			add("asn", strconv.FormatUint(uint64(*g.ASN), 10), false)
		}
		if g.ISP != nil {
			add("isp", *g.ISP, true)
		}
		for _, b := range []struct {
			field string
			v     *bool
		}{{"anon", g.IsAnonymous}, {"anonVPN", g.IsVPN}, {"anonHosting", g.IsHosting}, {"anonTor", g.IsTor},
			{"anonProxy", g.IsProxy}} {
			if b.v != nil {
				add(b.field, strconv.FormatBool(*b.v), false)
			}
		}
		switch len(all) {
		case 0:
		case 1:
			any = append(any, all[0])
		default:
			any = append(any, allOf(all))
		}
	}
	switch len(any) {
	case 0:
		return nil
	case 1:
		return any[0]
	}
	return anyOf(any)
}
