package envoytier

import (
	"slices"

	routev3 "github.com/envoyproxy/go-control-plane/envoy/config/route/v3"
	maxmindv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/geoip_providers/maxmind/v3"
	"google.golang.org/protobuf/proto"

	"github.com/egharness/egharness/harness/geoip"
	"github.com/egharness/egharness/translator/result"
)

// standInGeoIP points the MaxMind provider of every geoip filter (listener HTTP filters,
// and any per-route or per-filter config that holds one) at the tier's stand-in databases
// (harness/geoip, written at start into the tier's directory): EG's proxies open the files
// an EnvoyProxy's spec.geoIP names, which this machine does not have, and Envoy aborts
// when it cannot open one. Each path set moves to the stand-in of its kind, so the
// provider keeps the databases it had and Envoy validates the same config. Listeners are
// the tier's copies (changed in place); a route configuration that holds one is copied
// first, the translation's own being shared.
func standInGeoIP(x *result.XDS, dbs map[geoip.Kind]string) {
	visit := func(m proto.Message) bool {
		c, ok := m.(*maxmindv3.MaxMindConfig)
		if !ok {
			return false
		}
		changed := false
		for _, p := range []struct {
			path *string
			kind geoip.Kind
		}{{&c.CityDbPath, geoip.City}, {&c.CountryDbPath, geoip.Country}, {&c.AsnDbPath, geoip.ASN},
			{&c.IspDbPath, geoip.ISP}, {&c.AnonDbPath, geoip.Anonymity}} {
			if *p.path != "" && *p.path != dbs[p.kind] {
				*p.path = dbs[p.kind]
				changed = true
			}
		}
		return changed
	}
	for _, l := range x.Listeners {
		walk(l.ProtoReflect(), visit)
	}
	copied := false
	for i, rc := range x.Routes {
		c := proto.Clone(rc).(*routev3.RouteConfiguration)
		if !walk(c.ProtoReflect(), visit) {
			continue
		}
		if !copied {
			x.Routes, copied = slices.Clone(x.Routes), true
		}
		x.Routes[i] = c
	}
}
