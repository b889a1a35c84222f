// Package profile names the Envoy Gateway versions whose behavior the reference translator
// reproduces. A Profile is a value handed down the pipeline; each difference it makes is a
// field named after the behavior ID it implements.
package profile

import (
	"fmt"
	"sort"
	"strings"

	egv1a1 "github.com/envoyproxy/gateway/api/v1alpha1"
)

// Profile is one EG version's behavior.
type Profile struct {
	Name string
	// RouteRulesOverlap (RT-11): the route status carries the RouteRulesOverlap condition.
	RouteRulesOverlap bool
	// DefaultOnFlags are the runtime flags on unless the config disables them (EPP-05, NAME-02).
	DefaultOnFlags []egv1a1.RuntimeFlag
	// DNSClusterExtension (UPG-01): DNS clusters use the envoy.cluster.dns extension.
	DNSClusterExtension bool
	// JWTStableNames (SP-06): jwt_authn providers and requirements get content-derived names
	// shared by the routes that use the same config; v1.8 named them after each route.
	JWTStableNames bool
	// LuaPolicyFilters (EEP-03): one disabled listener-level Lua filter per policy script,
	// enabled per route (with its filterContext); v1.8 used per-index slot filters with the
	// script as per-route source code.
	LuaPolicyFilters bool
	// LuaDefaultOn (EEP-02): Lua runs unless the config turns it off (v1.8); v1.9 runs it
	// only when the config turns it on.
	LuaDefaultOn bool
	// CRDs is the EG release whose CRDs (EG's and the Gateway API ones it bundles) the API
	// server holds: admission applies them, so every schema and CEL rule that differs
	// between releases (MRG-01, CTP-04, UPG-03, the ListenerSet targets of SP-01, BTP-01,
	// CTP-01, EEP-01, the served versions of UPG-02) is the release's own.
	CRDs string
	// ListenerSDSSecrets (TLS-08): listener certificateRefs may name SDS reference Secrets
	// (v1.9+, with extensionApis.enableSDSSecretRef); v1.8 takes only kubernetes.io/tls.
	ListenerSDSSecrets bool
	// UpstreamTLSMax (BTLS-03) is the highest TLS version Envoy offers a backend by default:
	// "1.3" from v1.9, "1.2" in v1.8.
	UpstreamTLSMax string
	// SharedSystemCASecret (SDS-03): System-trusting backends share the SDS secret
	// system_ca_certificates (v1.9+); v1.8 made one per resource, as the
	// PerResourceSystemCASecret runtime flag still does.
	SharedSystemCASecret bool
	// RateLimitPerDomain (BTP-03): a route's global rate limits go in the ratelimit
	// filters' typedPerFilterConfig, one RateLimitPerRoute per domain (shared rules in
	// their policy's domain) (v1.9+); v1.8 put every rule of a route with a shared rule in
	// the route action's rateLimits.
	RateLimitPerDomain bool
	// EnvoyProxyDeprecations (EP-02): an accepted EnvoyProxy that sets spec.luaValidation
	// gets a Warning condition (DeprecatedField) pointing to spec.lua.validationType
	// (v1.10-preview: EG's main branch after v1.9).
	EnvoyProxyDeprecations bool
}

// API versions of TCPRoute and UDPRoute (UPG-02).
const (
	GatewayV1       = "gateway.networking.k8s.io/v1"
	GatewayV1Alpha2 = "gateway.networking.k8s.io/v1alpha2"
)

// Default is the profile used when none is named.
const Default = "v1.9"

var profiles = map[string]Profile{
	"v1.8": {Name: "v1.8", CRDs: "v1.8.0", UpstreamTLSMax: "1.2", LuaDefaultOn: true},
	"v1.9": {Name: "v1.9", CRDs: "v1.9.1", RouteRulesOverlap: true, DNSClusterExtension: true,
		JWTStableNames: true, LuaPolicyFilters: true, ListenerSDSSecrets: true, UpstreamTLSMax: "1.3",
		SharedSystemCASecret: true,
		RateLimitPerDomain:   true},
	"v1.10-preview": {
		Name: "v1.10-preview",
		// No v1.10 release exists yet: the API server holds v1.9.1's CRDs with the
		// changes EG's main branch made since, each named (translator/crds/additions).
		CRDs:                 "v1.10-preview",
		RouteRulesOverlap:    true,
		DefaultOnFlags:       []egv1a1.RuntimeFlag{egv1a1.XDSNameSchemeV2},
		DNSClusterExtension:  true,
		JWTStableNames:       true,
		LuaPolicyFilters:     true,
		ListenerSDSSecrets:   true,
		UpstreamTLSMax:       "1.3",
		SharedSystemCASecret: true,
		RateLimitPerDomain:   true,
		// The behavior that comes with the envoyproxy-lua-config addition.
		EnvoyProxyDeprecations: true,
	},
}

// Get returns the named profile.
func Get(name string) (Profile, error) {
	if name == "" {
		name = Default
	}
	p, ok := profiles[name]
	if !ok {
		return Profile{}, fmt.Errorf("unknown profile %q (known: %s)", name, strings.Join(Names(), ", "))
	}
	return p, nil
}

// Names lists the known profiles, sorted.
func Names() []string {
	out := make([]string, 0, len(profiles))
	for n := range profiles {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// FlagOn reports whether a runtime flag is in force: the config's enabled and disabled lists
// win over the profile's default.
func (p Profile) FlagOn(flag egv1a1.RuntimeFlag, flags *egv1a1.RuntimeFlags) bool {
	if flags != nil {
		for _, f := range flags.Disabled {
			if f == flag {
				return false
			}
		}
		for _, f := range flags.Enabled {
			if f == flag {
				return true
			}
		}
	}
	for _, f := range p.DefaultOnFlags {
		if f == flag {
			return true
		}
	}
	return false
}

// CRDRelease is the EG release whose CRDs admission applies (v1.9.1 when unset).
func (p Profile) CRDRelease() string {
	if p.CRDs == "" {
		return "v1.9.1"
	}
	return p.CRDs
}
