package policy

import (
	"errors"
	"fmt"

	egv1a1 "github.com/envoyproxy/gateway/api/v1alpha1"

	"github.com/egharness/egharness/translator/ir"
)

// Geolocation fields of SecurityPolicy clientIPGeoLocations, in the order EG v1.9 lists
// them (its internal geoip headers and the MaxMind provider's field keys follow it).
var geoFields = []string{"country", "region", "city", "asn", "isp", "anon", "anonVPN", "anonHosting", "anonTor",
	"anonProxy"}

// usesGeoIP says whether an authorization has a rule on client geolocations (S0-54).
func usesGeoIP(a *egv1a1.Authorization) bool {
	if a == nil {
		return false
	}
	for _, r := range a.Rules {
		if r.Principal != nil && len(r.Principal.ClientIPGeoLocations) > 0 {
			return true
		}
	}
	return false
}

// geoFieldsOf are the geolocation fields an authorization's rules match on.
func geoFieldsOf(a *egv1a1.Authorization) map[string]bool {
	out := map[string]bool{}
	if a == nil {
		return out
	}
	for _, r := range a.Rules {
		if r.Principal == nil {
			continue
		}
		for _, g := range r.Principal.ClientIPGeoLocations {
			out["country"] = out["country"] || g.Country != nil
			out["region"] = out["region"] || g.Region != nil
			out["city"] = out["city"] || g.City != nil
			out["asn"] = out["asn"] || g.ASN != nil
			out["isp"] = out["isp"] || g.ISP != nil
			if an := g.Anonymous; an != nil {
				out["anonymous"] = true
				out["anon"] = out["anon"] || an.IsAnonymous != nil
				out["anonVPN"] = out["anonVPN"] || an.IsVPN != nil
				out["anonHosting"] = out["anonHosting"] || an.IsHosting != nil
				out["anonTor"] = out["anonTor"] || an.IsTor != nil
				out["anonProxy"] = out["anonProxy"] || an.IsProxy != nil
			}
		}
	}
	return out
}

// requireGeoFields adds an authorization's geolocation fields to its listener's.
func requireGeoFields(l *ir.HTTPListener, a *egv1a1.Authorization) {
	want := geoFieldsOf(a)
	if l.GeoIP == nil {
		l.GeoIP = &ir.ListenerGeoIP{}
	}
	have := map[string]bool{}
	for _, f := range l.GeoIP.Fields {
		have[f] = true
	}
	var fields []string
	for _, f := range geoFields {
		if have[f] || want[f] {
			fields = append(fields, f)
		}
	}
	l.GeoIP.Fields = fields
}

// validateGeoIP is EG v1.9's check of an authorization on client geolocations against the
// listener it runs on: the client address must be known the one way a ClientTrafficPolicy
// says (X-Forwarded-For without trusted CIDRs, a custom header, or the connection's source
// with directSourceIP: what makes geolocation usable behind an L4 load balancer that keeps
// the client address), and the Gateway's EnvoyProxy must name a MaxMind provider with a
// database for each field the rules use. It returns the provider.
func validateGeoIP(a *egv1a1.Authorization, l *ir.HTTPListener) (*egv1a1.GeoIPMaxMind, error) {
	var ip *egv1a1.ClientIPDetectionSettings
	if ct := l.Policies.ClientTraffic; ct != nil && ct.Spec != nil {
		ip = ct.Spec.ClientIPDetection
	}
	if ip == nil {
		return nil, errors.New(
			"authorization clientIPGeoLocations requires ClientTrafficPolicy.spec.clientIPDetection to be configured")
	}
	modes := 0
	for _, set := range []bool{ip.XForwardedFor != nil, ip.CustomHeader != nil, ip.DirectSourceIP != nil} {
		if set {
			modes++
		}
	}
	if modes != 1 {
		return nil, errors.New(
			"authorization clientIPGeoLocations requires exactly one of " +
				"ClientTrafficPolicy.spec.clientIPDetection.{xForwardedFor,customHeader,directSourceIP}")
	}
	if ip.XForwardedFor != nil && len(ip.XForwardedFor.TrustedCIDRs) > 0 {
		return nil, errors.New(
			"authorization clientIPGeoLocations does not support ClientIPDetection.XForwardedFor.TrustedCIDRs")
	}
	var mm *egv1a1.GeoIPMaxMind
	if g := l.EnvoyProxyGeoIP; g != nil {
		switch g.Provider.Type {
		case egv1a1.GeoIPProviderTypeMaxMind:
			if g.Provider.MaxMind == nil {
				return nil, errors.New("geoIP provider MaxMind is missing maxMind configuration")
			}
			mm = g.Provider.MaxMind
		default:
			return nil, fmt.Errorf("unsupported geoIP provider type %q", g.Provider.Type)
		}
	}
	if mm == nil {
		return nil, errors.New("authorization clientIPGeoLocations requires EnvoyProxy.spec.geoIP.provider to be configured")
	}
	want := geoFieldsOf(a)
	// Each field the rules may match on, in the order checked (the first missing database is
	// the error): whether the databases it is looked up in are missing, and the fields of
	// maxMind that name them.
	for _, need := range []struct {
		field     string
		missing   bool
		databases string
	}{
		{"country", mm.CountryDBSource == nil && mm.CityDBSource == nil, "countryDbSource or cityDbSource"},
		{"region", mm.CityDBSource == nil, "cityDbSource"},
		{"city", mm.CityDBSource == nil, "cityDbSource"},
		{"asn", mm.ASNDBSource == nil, "asnDbSource"},
		{"isp", mm.ISPDBSource == nil, "ispDbSource"},
		{"anonymous", mm.AnonymousIPDBSource == nil, "anonymousIpDbSource"},
	} {
		if want[need.field] && need.missing {
			return nil, fmt.Errorf("authorization clientIPGeoLocations.%s requires EnvoyProxy.spec.geoIP.provider.maxMind.%s",
				need.field, need.databases)
		}
	}
	return mm, nil
}

// maxMindDatabases is the path of each database of the provider, as the geoip filter takes
// them.
func maxMindDatabases(mm *egv1a1.GeoIPMaxMind) *ir.GeoIPMaxMind {
	path := func(s *egv1a1.GeoIPDBSource) string {
		if s == nil {
			return ""
		}
		return s.Local.Path
	}
	return &ir.GeoIPMaxMind{
		CityDBPath:        path(mm.CityDBSource),
		ASNDBPath:         path(mm.ASNDBSource),
		AnonymousIPDBPath: path(mm.AnonymousIPDBSource),
		ISPDBPath:         path(mm.ISPDBSource),
		CountryDBPath:     path(mm.CountryDBSource),
	}
}
