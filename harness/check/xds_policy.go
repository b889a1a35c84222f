package check

import (
	"slices"
	"sort"

	listenerv3 "github.com/envoyproxy/go-control-plane/envoy/config/listener/v3"
	jwtauthnv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/http/jwt_authn/v3"
	hcmv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/network/http_connection_manager/v3"

	"github.com/egharness/egharness/harness/scenario"
	"github.com/egharness/egharness/translator/result"
)

// policyPartNames lists the names of the policy feature parts of one kind (see
// scenario.KindJWTProvider...), narrowed by In.
func policyPartNames(x scenario.XDSExpect, xds *result.XDS) []string {
	var names []string
	add := func(n string) {
		if !slices.Contains(names, n) {
			names = append(names, n)
		}
	}
	switch x.Kind {
	case scenario.KindJWTProvider, scenario.KindJWTRequirement:
		for l := range namedIn(xds.Listeners, x.In) {
			for _, hf := range hcmFilters(l) {
				if hf.GetName() != "envoy.filters.http.jwt_authn" {
					continue
				}
				var j jwtauthnv3.JwtAuthentication
				if hf.GetTypedConfig().UnmarshalTo(&j) != nil {
					continue
				}
				m := j.GetProviders()
				keys := make([]string, 0, len(m))
				for k := range m {
					keys = append(keys, k)
				}
				if x.Kind == scenario.KindJWTRequirement {
					keys = keys[:0]
					for k := range j.GetRequirementMap() {
						keys = append(keys, k)
					}
				}
				sort.Strings(keys)
				for _, k := range keys {
					add(k)
				}
			}
		}
	case scenario.KindNetworkFilter:
		for l := range namedIn(xds.Listeners, x.In) {
			for _, fc := range chainsOf(l) {
				for _, f := range fc.GetFilters() {
					add(f.GetName())
				}
			}
		}
	case scenario.KindRouteFilter:
		for _, rc := range xds.Routes {
			for _, vh := range rc.GetVirtualHosts() {
				for r := range namedIn(vh.GetRoutes(), x.In) {
					keys := make([]string, 0, len(r.GetTypedPerFilterConfig()))
					for k := range r.GetTypedPerFilterConfig() {
						keys = append(keys, k)
					}
					sort.Strings(keys)
					for _, k := range keys {
						add(k)
					}
				}
			}
		}
	}
	return names
}

// chainsOf is the filter chains of a listener, its default chain (a plain HTTP port's one
// chain) last.
func chainsOf(l *listenerv3.Listener) []*listenerv3.FilterChain {
	chains := append([]*listenerv3.FilterChain{}, l.GetFilterChains()...)
	if l.GetDefaultFilterChain() != nil {
		chains = append(chains, l.GetDefaultFilterChain())
	}
	return chains
}

// hcmFilters are the HTTP filters of every connection manager of the listener.
func hcmFilters(l *listenerv3.Listener) []*hcmv3.HttpFilter {
	var out []*hcmv3.HttpFilter
	for _, fc := range chainsOf(l) {
		for _, f := range fc.GetFilters() {
			var hcm hcmv3.HttpConnectionManager
			if f.GetTypedConfig() == nil || f.GetTypedConfig().UnmarshalTo(&hcm) != nil {
				continue
			}
			out = append(out, hcm.GetHttpFilters()...)
		}
	}
	return out
}

// httpFilterDisabled: the named HTTP filter is disabled on the listener(s).
func httpFilterDisabled(xds *result.XDS, in, name string) bool {
	for l := range namedIn(xds.Listeners, in) {
		for _, hf := range hcmFilters(l) {
			if hf.GetName() == name {
				return hf.GetDisabled()
			}
		}
	}
	return false
}
