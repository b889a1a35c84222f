package check

import (
	"encoding/json"
	"fmt"
	"reflect"
	"sort"

	listenerv3 "github.com/envoyproxy/go-control-plane/envoy/config/listener/v3"
	hcmv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/network/http_connection_manager/v3"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"

	"github.com/egharness/egharness/harness/scenario"
	"github.com/egharness/egharness/translator/result"
)

// filterChainHCM checks fields of the HTTP connection manager of a filter chain.
func (c *collector) filterChainHCM(where, what string, fc *listenerv3.FilterChain, x scenario.XDSExpect) {
	if x.HCM == nil {
		return
	}
	var hcm hcmv3.HttpConnectionManager
	found := false
	for _, f := range fc.GetFilters() {
		if tc := f.GetTypedConfig(); tc != nil && tc.UnmarshalTo(&hcm) == nil {
			found = true
			break
		}
	}
	if !found {
		c.failf("xds", where, "%s: has no HTTP connection manager", what)
		return
	}
	if msg := protoHasFields(&hcm, x.HCM); msg != "" {
		c.failf("xds", where, "%s: connection manager %s", what, msg)
	}
}

// routeFields checks fields of a route (In: its virtual host).
func (c *collector) routeFields(where, what string, x *result.XDS, e scenario.XDSExpect) {
	for _, rc := range x.Routes {
		for vh := range namedIn(rc.GetVirtualHosts(), e.In) {
			for _, r := range vh.GetRoutes() {
				if r.GetName() != e.Name {
					continue
				}
				if msg := protoHasFields(r, e.Fields); msg != "" {
					c.failf("xds", where, "%s: %s", what, msg)
				}
				return
			}
		}
	}
}

// clusterFields checks fields of a cluster.
func (c *collector) clusterFields(where, what string, x *result.XDS, e scenario.XDSExpect) {
	for _, cl := range x.Clusters {
		if cl.GetName() == e.Name {
			if msg := protoHasFields(cl, e.Fields); msg != "" {
				c.failf("xds", where, "%s: %s", what, msg)
			}
			return
		}
	}
}

// protoHasFields says how m's protojson differs from the fields wanted, "" when it has them.
func protoHasFields(m proto.Message, want map[string]any) string {
	b, err := protojson.Marshal(m)
	if err != nil {
		return "cannot be read: " + err.Error()
	}
	var got any
	if err := json.Unmarshal(b, &got); err != nil {
		return "cannot be read: " + err.Error()
	}
	wb, err := json.Marshal(want)
	if err != nil {
		return "expectation cannot be read: " + err.Error()
	}
	var w any
	_ = json.Unmarshal(wb, &w)
	return subsetDiff("", w, got)
}

// subsetDiff compares JSON values: objects by the wanted keys (a key wanted as null must be
// absent), lists element by element.
func subsetDiff(path string, want, got any) string {
	switch w := want.(type) {
	case map[string]any:
		g, ok := got.(map[string]any)
		if !ok {
			return fmt.Sprintf("%s is %s, expected an object", orRoot(path), compactJSON(got))
		}
		keys := make([]string, 0, len(w))
		for k := range w {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			gv, ok := g[k]
			// A wanted null is a field left unset: protojson writes no unset field.
			switch {
			case w[k] == nil && !ok:
				continue
			case w[k] == nil:
				return fmt.Sprintf("%s is %s, expected it unset", path+"."+k, compactJSON(gv))
			case !ok:
				return fmt.Sprintf("has no %s (expected %s)", path+"."+k, compactJSON(w[k]))
			}
			if d := subsetDiff(path+"."+k, w[k], gv); d != "" {
				return d
			}
		}
		return ""
	case []any:
		g, ok := got.([]any)
		if !ok || len(g) != len(w) {
			return fmt.Sprintf("%s is %s, expected %s", orRoot(path), compactJSON(got), compactJSON(w))
		}
		for i := range w {
			if d := subsetDiff(fmt.Sprintf("%s[%d]", path, i), w[i], g[i]); d != "" {
				return d
			}
		}
		return ""
	}
	if !reflect.DeepEqual(want, got) {
		return fmt.Sprintf("%s is %s, expected %s", orRoot(path), compactJSON(got), compactJSON(want))
	}
	return ""
}

func orRoot(p string) string {
	if p == "" {
		return "it"
	}
	return p[1:]
}
