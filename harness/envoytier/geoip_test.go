package envoytier

import (
	"os"
	"strings"
	"testing"

	maxmindv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/geoip_providers/maxmind/v3"
	"google.golang.org/protobuf/proto"

	"github.com/egharness/egharness/harness/geoip"
	"github.com/egharness/egharness/translator/result"
)

// maxMindConfigs are the MaxMind provider configs in x's listeners and routes.
func maxMindConfigs(x *result.XDS) []*maxmindv3.MaxMindConfig {
	var out []*maxmindv3.MaxMindConfig
	visit := func(m proto.Message) bool {
		if c, ok := m.(*maxmindv3.MaxMindConfig); ok {
			out = append(out, proto.Clone(c).(*maxmindv3.MaxMindConfig))
		}
		return false
	}
	walkListenersAndRoutes(x, visit)
	return out
}

// Every geoip filter's databases move to the tier's stand-ins, kind for kind; the
// translation itself keeps EG's paths.
func TestStandInGeoIP(t *testing.T) {
	dir := t.TempDir()
	dbs, err := geoip.WriteDatabases(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range dbs {
		if _, err := os.Stat(p); err != nil {
			t.Fatal(err)
		}
	}
	for _, name := range []string{"authorization-geoip", "authorization-geoip-prerequisites"} {
		res := translate(t, name)
		before := jsonOf(t, &res.XDS)
		x := onLoopbackBy(&res.XDS, func(string) string { return "127.0.0.9" }, "127.0.0.1", 9)
		standInGeoIP(x, dbs)
		got := maxMindConfigs(x)
		if len(got) == 0 {
			t.Fatalf("%s: no geoip filter", name)
		}
		for _, c := range got {
			for kind, p := range map[geoip.Kind]string{geoip.City: c.GetCityDbPath(), geoip.Country: c.GetCountryDbPath(),
				geoip.ASN: c.GetAsnDbPath(), geoip.ISP: c.GetIspDbPath(), geoip.Anonymity: c.GetAnonDbPath()} {
				if p != "" && p != dbs[kind] {
					t.Errorf("%s: %s database %s, want the stand-in %s", name, kind, p, dbs[kind])
				}
			}
		}
		if after := jsonOf(t, &res.XDS); after != before || !strings.Contains(after, ".mmdb") ||
			strings.Contains(after, dir) {
			t.Errorf("%s: the translation changed", name)
		}
	}
	// The scenario's own paths, and the kinds they are.
	orig := maxMindConfigs(&translate(t, "authorization-geoip").XDS)
	if len(orig) == 0 || orig[0].GetCityDbPath() != "/geo/GeoLite2-City.mmdb" ||
		orig[0].GetAnonDbPath() != "/geo/GeoIP2-Anonymous-IP.mmdb" {
		t.Errorf("authorization-geoip translates to %v", orig)
	}
}
