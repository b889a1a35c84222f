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
	// L4RouteVersion (UPG-02) is the apiVersion EG reads TCPRoutes and UDPRoutes as;
	// objects of the other version are not seen.
	L4RouteVersion string
	// DNSClusterExtension (UPG-01): DNS clusters use the envoy.cluster.dns extension.
	DNSClusterExtension bool
	// ListenerSDSSecrets (TLS-08): listener certificateRefs may name SDS reference Secrets
	// (v1.9+, with extensionApis.enableSDSSecretRef); v1.8 takes only kubernetes.io/tls.
	ListenerSDSSecrets bool
}

// API versions of TCPRoute and UDPRoute (UPG-02).
const (
	GatewayV1       = "gateway.networking.k8s.io/v1"
	GatewayV1Alpha2 = "gateway.networking.k8s.io/v1alpha2"
)

// Default is the profile used when none is named.
const Default = "v1.9"

var profiles = map[string]Profile{
	"v1.8": {Name: "v1.8", L4RouteVersion: GatewayV1Alpha2},
	"v1.9": {Name: "v1.9", RouteRulesOverlap: true, L4RouteVersion: GatewayV1, DNSClusterExtension: true, ListenerSDSSecrets: true},
	"v1.10-preview": {
		Name:                "v1.10-preview",
		RouteRulesOverlap:   true,
		DefaultOnFlags:      []egv1a1.RuntimeFlag{egv1a1.XDSNameSchemeV2},
		L4RouteVersion:      GatewayV1,
		DNSClusterExtension: true,
		ListenerSDSSecrets:  true,
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
