// Package geoip holds the harness's stand-in geolocation: a fixed table of networks and
// where they are, written as real MaxMind databases (MMDB) for the real Envoy tier, and
// looked up by the route checker, so both sides of a geolocation rule see the same client.
//
// EG's proxies open the MaxMind databases an EnvoyProxy names (spec.geoIP); the test
// machine has none, and Envoy aborts when a geoip filter's database cannot be opened. The
// tier writes the stand-ins at start (WriteDatabases) and points every geoip filter at them,
// one database of each kind; the route checker answers a geoip filter from Table.
//
// The table (docs/real-envoy.md, "Stand-in geolocation"):
//
//	192.0.2.0/24     US, region WA, Seattle,  ASN 64496, ISP "Example Transit"
//	192.0.2.128/25     … and an anonymous public proxy
//	198.51.100.0/24  DE, region BE, Berlin,   ASN 64497, ISP "Example Carrier"
//	198.51.100.128/25  … and an anonymous VPN
//	203.0.113.0/25   CA, region QC, Montreal, ASN 64512, ISP "Example Hosting"
//	203.0.113.128/26   … and an anonymous hosting provider and Tor exit node
//	203.0.113.192/26 in no database
//	127.0.0.0/8, ::1 JP, region 13, Tokyo,    ASN 64500, ISP "Example Loopback"
//
// Every other address is in no database (203.0.113.192/26 is the documentation addresses
// of a client the databases do not know). As in MaxMind's Anonymous IP database, only the
// anonymous networks have a record there, holding only the flags that are true.
package geoip

import (
	"net/netip"
	"strconv"
)

// Location is what the stand-in databases hold for a network.
type Location struct {
	Country string // country.iso_code
	Region  string // subdivisions[0].iso_code
	City    string // city.names.en
	ASN     uint32 // autonomous_system_number
	ISP     string // isp
	// Anonymous is the Anonymous IP record; nil: the network has none.
	Anonymous *Anonymous
}

// Anonymous is an Anonymous IP record: the flags that are true.
type Anonymous struct {
	VPN, Hosting, Tor, Proxy bool
}

// Network is one row of the table.
type Network struct {
	Prefix   netip.Prefix
	Location Location
}

func row(prefix string, l Location) Network {
	return Network{Prefix: netip.MustParsePrefix(prefix), Location: l}
}

var (
	seattle  = Location{Country: "US", Region: "WA", City: "Seattle", ASN: 64496, ISP: "Example Transit"}
	berlin   = Location{Country: "DE", Region: "BE", City: "Berlin", ASN: 64497, ISP: "Example Carrier"}
	montreal = Location{Country: "CA", Region: "QC", City: "Montreal", ASN: 64512, ISP: "Example Hosting"}
	tokyo    = Location{Country: "JP", Region: "13", City: "Tokyo", ASN: 64500, ISP: "Example Loopback"}
)

func with(l Location, a Anonymous) Location {
	l.Anonymous = &a
	return l
}

// Table is the stand-in geolocation, a more specific network after the one it is in.
var Table = []Network{
	row("192.0.2.0/24", seattle),
	row("192.0.2.128/25", with(seattle, Anonymous{Proxy: true})),
	row("198.51.100.0/24", berlin),
	row("198.51.100.128/25", with(berlin, Anonymous{VPN: true})),
	row("203.0.113.0/25", montreal),
	row("203.0.113.128/26", with(montreal, Anonymous{Hosting: true, Tor: true})),
	row("127.0.0.0/8", tokyo),
	row("::1/128", tokyo),
}

// Lookup is the location of an address: the most specific network of the table that holds
// it (IPv4-mapped IPv6 addresses as IPv4).
func Lookup(ip netip.Addr) (Location, bool) {
	ip = ip.Unmap()
	best, found, bits := Location{}, false, -1
	for _, n := range Table {
		if n.Prefix.Contains(ip) && n.Prefix.Bits() > bits {
			best, found, bits = n.Location, true, n.Prefix.Bits()
		}
	}
	return best, found
}

// Kind is a MaxMind database kind, as the MaxMind provider of Envoy's geoip filter names
// its paths.
type Kind string

const (
	City      Kind = "city"
	Country   Kind = "country"
	ASN       Kind = "asn"
	ISP       Kind = "isp"
	Anonymity Kind = "anon"
)

// Kinds are all kinds, in the order WriteDatabases writes them.
var Kinds = []Kind{City, Country, ASN, ISP, Anonymity}

// Fields are the geolocation fields a database of the kind answers, by the MaxMind
// provider's field key names (geo_field_keys).
func (k Kind) Fields() []string {
	switch k {
	case City:
		return []string{"country", "region", "city"}
	case Country:
		return []string{"country"}
	case ASN:
		return []string{"asn"}
	case ISP:
		return []string{"isp", "asn"}
	case Anonymity:
		return []string{"is_anon", "anon_vpn", "anon_hosting", "anon_tor", "anon_proxy"}
	}
	return nil
}

// Value is a field of a location as the MaxMind provider writes it to its header, "" when
// the database holds nothing for it (Envoy then leaves the header as it is): strings as
// they are, the ASN in decimal, anonymity flags "true" (a false flag is not in the record).
func (l Location) Value(field string) string {
	a := l.Anonymous
	flag := func(b bool) string {
		if a != nil && b {
			return "true"
		}
		return ""
	}
	switch field {
	case "country":
		return l.Country
	case "region":
		return l.Region
	case "city":
		return l.City
	case "asn":
		if l.ASN == 0 {
			return ""
		}
		return strconv.FormatUint(uint64(l.ASN), 10)
	case "isp":
		return l.ISP
	case "is_anon":
		return flag(a != nil)
	case "anon_vpn":
		return flag(a != nil && a.VPN)
	case "anon_hosting":
		return flag(a != nil && a.Hosting)
	case "anon_tor":
		return flag(a != nil && a.Tor)
	case "anon_proxy":
		return flag(a != nil && a.Proxy)
	}
	return ""
}
