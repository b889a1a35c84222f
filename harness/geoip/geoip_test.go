package geoip

import (
	"net/netip"
	"strconv"
	"testing"

	"github.com/oschwald/maxminddb-golang/v2"
)

// The databases written hold what Lookup says, read back with a MaxMind reader the way
// Envoy's provider reads them (the same paths into the record).
func TestDatabasesHoldTheTable(t *testing.T) {
	paths, err := WriteDatabases(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	readers := map[Kind]*maxminddb.Reader{}
	for k, p := range paths {
		r, err := maxminddb.Open(p)
		if err != nil {
			t.Fatalf("%s: %v", k, err)
		}
		defer r.Close()
		if got, want := r.Metadata.DatabaseType, databaseTypes[k]; got != want {
			t.Errorf("%s: database_type %q, want %q", k, got, want)
		}
		readers[k] = r
	}
	// What Envoy's MaxMind provider reads, by field.
	paths2 := map[string][]any{
		"country": {"country", "iso_code"}, "region": {"subdivisions", 0, "iso_code"}, "city": {"city", "names", "en"},
		"asn": {"autonomous_system_number"}, "isp": {"isp"},
		"is_anon": {"is_anonymous"}, "anon_vpn": {"is_anonymous_vpn"}, "anon_hosting": {"is_hosting_provider"},
		"anon_tor": {"is_tor_exit_node"}, "anon_proxy": {"is_public_proxy"},
	}
	for _, addr := range []string{"192.0.2.1", "192.0.2.200", "198.51.100.7", "198.51.100.130", "203.0.113.9",
		"203.0.113.130", "203.0.113.250", "127.0.0.1", "127.1.2.3", "::1", "::ffff:192.0.2.1", "8.8.8.8", "2001:db8::1"} {
		ip := netip.MustParseAddr(addr)
		loc, found := Lookup(ip)
		for _, k := range Kinds {
			res := readers[k].Lookup(ip)
			if err := res.Err(); err != nil {
				t.Fatalf("%s in %s: %v", addr, k, err)
			}
			for _, f := range k.Fields() {
				var got string
				var v any
				if res.Found() {
					if err := res.DecodePath(&v, paths2[f]...); err != nil {
						t.Fatalf("%s %s in %s: %v", addr, f, k, err)
					}
				}
				switch x := v.(type) {
				case string:
					got = x
				case uint64:
					got = strconv.FormatUint(x, 10)
				case bool:
					got = strconv.FormatBool(x)
				}
				want := ""
				if found {
					want = loc.Value(f)
				}
				if got != want {
					t.Errorf("%s %s in the %s database: %q, the table says %q", addr, f, k, got, want)
				}
			}
		}
	}
}

func TestLookup(t *testing.T) {
	for addr, want := range map[string]string{"192.0.2.1": "US", "198.51.100.1": "DE", "203.0.113.1": "CA",
		"127.0.0.1": "JP", "::1": "JP", "::ffff:203.0.113.1": "CA", "10.0.0.1": "", "203.0.113.200": ""} {
		l, _ := Lookup(netip.MustParseAddr(addr))
		if l.Country != want {
			t.Errorf("%s: %q, want %q", addr, l.Country, want)
		}
	}
	if l, _ := Lookup(netip.MustParseAddr("192.0.2.200")); l.Value("anon_proxy") != "true" ||
		l.Value("is_anon") != "true" || l.Value("anon_vpn") != "" {
		t.Errorf("192.0.2.200: %+v", l.Anonymous)
	}
	if l, _ := Lookup(netip.MustParseAddr("192.0.2.1")); l.Value("is_anon") != "" {
		t.Errorf("192.0.2.1 is anonymous: %+v", l.Anonymous)
	}
}
