package geoip

import (
	"fmt"
	"net"
	"os"
	"path/filepath"

	"github.com/maxmind/mmdbwriter"
	"github.com/maxmind/mmdbwriter/mmdbtype"
)

// databaseTypes are the database_type metadata of each kind, as MaxMind names its editions.
var databaseTypes = map[Kind]string{
	City:      "GeoIP2-City",
	Country:   "GeoIP2-Country",
	ASN:       "GeoLite2-ASN",
	ISP:       "GeoIP2-ISP",
	Anonymity: "GeoIP2-Anonymous-IP",
}

// FileName is the stand-in database of a kind in the directory WriteDatabases writes.
func FileName(k Kind) string { return "egharness-" + databaseTypes[k] + ".mmdb" }

// record is a location as a database of the kind stores it; nil when it has no record.
func record(k Kind, l Location) mmdbtype.Map {
	switch k {
	case City:
		return mmdbtype.Map{
			"country":      mmdbtype.Map{"iso_code": mmdbtype.String(l.Country)},
			"subdivisions": mmdbtype.Slice{mmdbtype.Map{"iso_code": mmdbtype.String(l.Region)}},
			"city":         mmdbtype.Map{"names": mmdbtype.Map{"en": mmdbtype.String(l.City)}},
		}
	case Country:
		return mmdbtype.Map{"country": mmdbtype.Map{"iso_code": mmdbtype.String(l.Country)}}
	case ASN:
		return mmdbtype.Map{"autonomous_system_number": mmdbtype.Uint32(l.ASN),
			"autonomous_system_organization": mmdbtype.String(l.ISP)}
	case ISP:
		return mmdbtype.Map{"autonomous_system_number": mmdbtype.Uint32(l.ASN), "isp": mmdbtype.String(l.ISP),
			"organization": mmdbtype.String(l.ISP)}
	case Anonymity:
		a := l.Anonymous
		if a == nil {
			return nil
		}
		m := mmdbtype.Map{"is_anonymous": mmdbtype.Bool(true)}
		for key, set := range map[mmdbtype.String]bool{"is_anonymous_vpn": a.VPN, "is_hosting_provider": a.Hosting,
			"is_tor_exit_node": a.Tor, "is_public_proxy": a.Proxy} {
			if set {
				m[key] = mmdbtype.Bool(true)
			}
		}
		return m
	}
	return nil
}

// Database is the stand-in database of a kind, as MMDB bytes written to w.
func writeDatabase(path string, k Kind) error {
	w, err := mmdbwriter.New(mmdbwriter.Options{
		DatabaseType:            databaseTypes[k],
		Description:             map[string]string{"en": "egharness stand-in " + databaseTypes[k] + " (harness/geoip)"},
		IncludeReservedNetworks: true, // the table is documentation prefixes and loopback
		RecordSize:              28,
		BuildEpoch:              1735689600, // fixed: the same bytes every run
	})
	if err != nil {
		return err
	}
	for _, n := range Table {
		// A more specific network's record replaces the one it is in; one without a record
		// (not anonymous) is left out of the Anonymous IP database.
		rec := record(k, n.Location)
		if rec == nil {
			continue
		}
		_, ipnet, err := net.ParseCIDR(n.Prefix.String())
		if err != nil {
			return err
		}
		if err := w.Insert(ipnet, rec); err != nil {
			return fmt.Errorf("%s: %s: %w", databaseTypes[k], n.Prefix, err)
		}
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if _, err := w.WriteTo(f); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// WriteDatabases writes one stand-in database of each kind into dir and returns their
// paths by kind.
func WriteDatabases(dir string) (map[Kind]string, error) {
	out := map[Kind]string{}
	for _, k := range Kinds {
		p := filepath.Join(dir, FileName(k))
		if err := writeDatabase(p, k); err != nil {
			return nil, fmt.Errorf("stand-in geolocation database: %w", err)
		}
		out[k] = p
	}
	return out, nil
}
