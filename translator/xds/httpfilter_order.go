package xds

import (
	"sort"
	"strconv"
	"strings"

	hcmv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/network/http_connection_manager/v3"

	"github.com/egharness/egharness/translator/ir"
)

// httpFilterRanks is where EG v1.9 puts each kind of HTTP filter in the connection manager
// (a fact of its output): authentication before authorization, extensions in the middle,
// the router last. Kinds with several instances (Lua, ext_proc, Wasm) add the instance's
// index to their rank; kinds not listed rank 50.
var httpFilterRanks = []struct {
	kind    string
	rank    int
	indexed bool
}{
	{ir.FilterCustomResponse, 0, false},
	{ir.FilterHealthCheck, 1, false},
	{ir.FilterFault, 2, false},
	{ir.FilterCORS, 3, false},
	{ir.FilterCSRF, 4, false},
	{ir.FilterHeaderMutation, 5, false},
	{ir.FilterExtAuthz, 6, false},
	{ir.FilterAPIKeyAuth, 7, false},
	{ir.FilterBasicAuth, 8, false},
	{ir.FilterOAuth2, 9, false},
	{ir.FilterJWTAuthn, 10, false},
	{ir.FilterSessionPersistence, 11, false},
	{ir.FilterBuffer, 12, false},
	{ir.FilterLua, 13, true},
	{ir.FilterExtProc, 100, true},
	{ir.FilterWasm, 200, true},
	{ir.FilterDynamicModules, 250, true},
	{ir.FilterGeoIP, 300, false},
	{ir.FilterRBAC, 301, false},
	{ir.FilterLocalRateLimit, 302, false},
	{ir.FilterRateLimit, 303, false},
	{ir.FilterBandwidthLimit, 304, false},
	{ir.FilterGRPCWeb, 305, false},
	{ir.FilterGRPCStats, 306, false},
	{ir.FilterCredentialInjector, 307, false},
	{ir.FilterCompressor, 308, false},
	{ir.FilterDynamicForwardProxy, 309, false},
	{ir.FilterRouter, 310, false},
}

const defaultFilterRank = 50

// httpFilterRank is the rank of a filter by its name. A filter's kind is the prefix of its
// name (EG names instances "<kind>/<config name>"); an indexed kind's instance index is
// the last "/" segment of the name.
func httpFilterRank(name string) int {
	for _, r := range httpFilterRanks {
		if !strings.HasPrefix(name, r.kind) {
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

// applyFilterOrder moves filters as an EnvoyProxy's spec.filterOrder says, one entry after
// the other on the result of the previous one (EG v1.9's order of application): all the
// filters of the entry's kind go, in their current order, right before the first filter of
// kind Before or right after the last filter of kind After. An entry whose kind or anchor
// has no filter on the listener changes nothing.
func applyFilterOrder(fs []*hcmv3.HttpFilter, order []ir.FilterPosition) []*hcmv3.HttpFilter {
	for _, p := range order {
		var moved, rest []*hcmv3.HttpFilter
		for _, f := range fs {
			if strings.HasPrefix(f.Name, p.Name) {
				moved = append(moved, f)
			} else {
				rest = append(rest, f)
			}
		}
		if len(moved) == 0 {
			continue
		}
		at := -1 // where in rest the moved filters go
		switch {
		case p.Before != "":
			for i, f := range rest {
				if strings.HasPrefix(f.Name, p.Before) {
					at = i
					break
				}
			}
		case p.After != "":
			for i, f := range rest {
				if strings.HasPrefix(f.Name, p.After) {
					at = i + 1
				}
			}
		}
		if at < 0 {
			continue
		}
		out := make([]*hcmv3.HttpFilter, 0, len(fs))
		out = append(append(append(out, rest[:at]...), moved...), rest[at:]...)
		fs = out
	}
	return fs
}
