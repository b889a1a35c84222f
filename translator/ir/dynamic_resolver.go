package ir

import "time"

// DNS is the dns of the BackendTrafficPolicy in force on a route (EG v1.9's
// ClusterSettings.dns), resolved by the policy stage. The reference applies it to the DNS
// cache of a dynamic resolver's cluster; EG also applies it to a route's DNS clusters,
// which the reference does not model yet.
type DNS struct {
	// Policy is the BackendTrafficPolicy that set it (namespace/name): EG names the DNS
	// cache after it, so that routes with different settings get caches of their own.
	Policy string `json:"policy"`
	// LookupFamily is the policy's lookupFamily as EG spells it (IPv4, IPv6, IPv4Preferred,
	// IPv6Preferred, IPv4AndIPv6); "" when the policy sets none.
	LookupFamily string `json:"lookupFamily,omitempty"`
	// RefreshRate is the policy's dnsRefreshRate; nil when unset or not a duration.
	RefreshRate *time.Duration `json:"refreshRate,omitempty"`
	// RespectTTL is the policy's respectDnsTtl.
	RespectTTL *bool `json:"respectTTL,omitempty"`
}

// DynamicResolver says whether the destination forwards to whatever host the request (or
// the TLS connection's SNI) names: its one backend is an EG Backend of type
// DynamicResolver. EG refuses a dynamic resolver next to other backends, so a destination
// that has one has nothing else.
func (d *Destination) DynamicResolver() bool {
	return d != nil && len(d.Settings) == 1 && d.Settings[0].DynamicResolver
}
