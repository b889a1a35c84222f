package xds

import (
	"sort"
	"strconv"
	"strings"

	egv1a1 "github.com/envoyproxy/gateway/api/v1alpha1"
	hcmv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/network/http_connection_manager/v3"
)

// httpFilterRanks is where EG v1.9 puts each kind of HTTP filter in the connection manager
// (a fact of its output): authentication before authorization, extensions in the middle,
// the router last. Kinds with several instances (Lua, ext_proc, Wasm) add the instance's
// index to their rank; kinds not listed rank 50.
var httpFilterRanks = []struct {
	kind    egv1a1.EnvoyFilter
	rank    int
	indexed bool
}{
	{egv1a1.EnvoyFilterCustomResponse, 0, false},
	{egv1a1.EnvoyFilterHealthCheck, 1, false},
	{egv1a1.EnvoyFilterFault, 2, false},
	{egv1a1.EnvoyFilterCORS, 3, false},
	{egv1a1.EnvoyFilterCSRF, 4, false},
	{egv1a1.EnvoyFilterHeaderMutation, 5, false},
	{egv1a1.EnvoyFilterExtAuthz, 6, false},
	{egv1a1.EnvoyFilterAPIKeyAuth, 7, false},
	{egv1a1.EnvoyFilterBasicAuth, 8, false},
	{egv1a1.EnvoyFilterOAuth2, 9, false},
	{egv1a1.EnvoyFilterJWTAuthn, 10, false},
	{egv1a1.EnvoyFilterSessionPersistence, 11, false},
	{egv1a1.EnvoyFilterBuffer, 12, false},
	{egv1a1.EnvoyFilterLua, 13, true},
	{egv1a1.EnvoyFilterExtProc, 100, true},
	{egv1a1.EnvoyFilterWasm, 200, true},
	{egv1a1.EnvoyFilterDynamicModules, 250, true},
	{egv1a1.EnvoyFilterGeoIP, 300, false},
	{egv1a1.EnvoyFilterRBAC, 301, false},
	{egv1a1.EnvoyFilterLocalRateLimit, 302, false},
	{egv1a1.EnvoyFilterRateLimit, 303, false},
	{egv1a1.EnvoyFilterBandwidthLimit, 304, false},
	{egv1a1.EnvoyFilterGRPCWeb, 305, false},
	{egv1a1.EnvoyFilterGRPCStats, 306, false},
	{egv1a1.EnvoyFilterCredentialInjector, 307, false},
	{egv1a1.EnvoyFilterCompressor, 308, false},
	{egv1a1.EnvoyFilterDynamicForwardProxy, 309, false},
	{egv1a1.EnvoyFilterRouter, 310, false},
}

const defaultFilterRank = 50

// httpFilterRank is the rank of a filter by its name. A filter's kind is the prefix of its
// name (EG names instances "<kind>/<config name>"); an indexed kind's instance index is
// the last "/" segment of the name.
func httpFilterRank(name string) int {
	for _, r := range httpFilterRanks {
		if !strings.HasPrefix(name, string(r.kind)) {
			continue
		}
		if !r.indexed {
			return r.rank
		}
		i := strings.LastIndexByte(name, '/')
		idx, err := strconv.Atoi(name[i+1:])
		if i < 0 || err != nil {
			return r.rank
		}
		return r.rank + idx
	}
	return defaultFilterRank
}

// sortHTTPFilters puts filters in EG's order; filters of equal rank go by name, so the
// order never depends on the order routes were visited in.
func sortHTTPFilters(fs []*hcmv3.HttpFilter) {
	sort.SliceStable(fs, func(i, j int) bool {
		ri, rj := httpFilterRank(fs[i].Name), httpFilterRank(fs[j].Name)
		if ri != rj {
			return ri < rj
		}
		return fs[i].Name < fs[j].Name
	})
}
