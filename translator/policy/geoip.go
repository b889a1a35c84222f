package policy

import (
	"errors"

	egv1a1 "github.com/envoyproxy/gateway/api/v1alpha1"

	"github.com/egharness/egharness/translator/ir"
)

// usesGeoLocations reports whether an authorization has a rule whose principal names
// client IP geolocations.
func usesGeoLocations(a *egv1a1.Authorization) bool {
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

// checkGeoLocations is what EG v1.9 requires of a listener before a SecurityPolicy's
// clientIPGeoLocations can be enforced on its routes (the facts of EG's
// validateAuthorizationGeoIP, in its order): the listener's ClientTrafficPolicy detects the
// client IP in exactly one way, X-Forwarded-For without trusted CIDRs, and the Gateway's
// EnvoyProxy has a MaxMind geoIP provider with a database for every attribute the rules
// match on (country: the country or city database; region and city: city; asn, isp,
// anonymous: their own). The reference checks them and builds no geoip filter.
func checkGeoLocations(a *egv1a1.Authorization, l *ir.HTTPListener) error {
	var detect *egv1a1.ClientIPDetectionSettings
	if ct := l.Policies.ClientTraffic; ct != nil && ct.Spec != nil {
		detect = ct.Spec.ClientIPDetection
	}
	if detect == nil {
		return errors.New("authorization clientIPGeoLocations requires ClientTrafficPolicy.spec.clientIPDetection to be configured")
	}
	modes := 0
	for _, set := range []bool{detect.XForwardedFor != nil, detect.CustomHeader != nil, detect.DirectSourceIP != nil} {
		if set {
			modes++
		}
	}
	if modes != 1 {
		return errors.New("authorization clientIPGeoLocations requires exactly one of ClientTrafficPolicy.spec.clientIPDetection.{xForwardedFor,customHeader,directSourceIP}")
	}
	if xff := detect.XForwardedFor; xff != nil && len(xff.TrustedCIDRs) > 0 {
		return errors.New("authorization clientIPGeoLocations does not support ClientIPDetection.XForwardedFor.TrustedCIDRs")
	}
	var mm *egv1a1.GeoIPMaxMind
	if g := l.GeoIP; g != nil {
		if g.Provider.Type != egv1a1.GeoIPProviderTypeMaxMind {
			return errors.New(`unsupported geoIP provider type "` + string(g.Provider.Type) + `"`)
		}
		if g.Provider.MaxMind == nil {
			return errors.New("geoIP provider MaxMind is missing maxMind configuration")
		}
		mm = g.Provider.MaxMind
	}
	if mm == nil {
		return errors.New("authorization clientIPGeoLocations requires EnvoyProxy.spec.geoIP.provider to be configured")
	}
	var country, region, city, asn, isp, anonymous bool
	for _, r := range a.Rules {
		if r.Principal == nil {
			continue
		}
		for _, g := range r.Principal.ClientIPGeoLocations {
			country = country || g.Country != nil
			region = region || g.Region != nil
			city = city || g.City != nil
			asn = asn || g.ASN != nil
			isp = isp || g.ISP != nil
			anonymous = anonymous || g.Anonymous != nil
		}
	}
	switch {
	case country && mm.CountryDBSource == nil && mm.CityDBSource == nil:
		return errors.New("authorization clientIPGeoLocations.country requires EnvoyProxy.spec.geoIP.provider.maxMind.countryDbSource or cityDbSource")
	case region && mm.CityDBSource == nil:
		return errors.New("authorization clientIPGeoLocations.region requires EnvoyProxy.spec.geoIP.provider.maxMind.cityDbSource")
	case city && mm.CityDBSource == nil:
		return errors.New("authorization clientIPGeoLocations.city requires EnvoyProxy.spec.geoIP.provider.maxMind.cityDbSource")
	case asn && mm.ASNDBSource == nil:
		return errors.New("authorization clientIPGeoLocations.asn requires EnvoyProxy.spec.geoIP.provider.maxMind.asnDbSource")
	case isp && mm.ISPDBSource == nil:
		return errors.New("authorization clientIPGeoLocations.isp requires EnvoyProxy.spec.geoIP.provider.maxMind.ispDbSource")
	case anonymous && mm.AnonymousIPDBSource == nil:
		return errors.New("authorization clientIPGeoLocations.anonymous requires EnvoyProxy.spec.geoIP.provider.maxMind.anonymousIpDbSource")
	}
	return nil
}
