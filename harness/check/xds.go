package check

import (
	"fmt"
	"iter"
	"slices"
	"strings"

	listenerv3 "github.com/envoyproxy/go-control-plane/envoy/config/listener/v3"
	routev3 "github.com/envoyproxy/go-control-plane/envoy/config/route/v3"

	"github.com/egharness/egharness/harness/scenario"
	"github.com/egharness/egharness/translator/result"
)

func (c *collector) xds(exp []scenario.XDSExpect, res *result.Result, section string) {
	c.section = section
	for i, x := range exp {
		where := fmt.Sprintf("xds[%d]", i)
		if x.Prefix != "" {
			var got []string
			for _, n := range resourceNames(x, &res.XDS) {
				if strings.HasPrefix(n, x.Prefix) {
					got = append(got, n)
				}
			}
			if !slices.Equal(got, x.Names) {
				c.failf("xds", where, "%s %s*: names in order are\n    %s\n  expected\n    %s", x.Kind, x.Prefix,
					strings.Join(orNoneList(got), "\n    "), strings.Join(x.Names, "\n    "))
			}
			continue
		}
		found, detail := lookup(x, &res.XDS)
		what := x.Kind + " " + x.Name
		if x.In != "" {
			what += " in " + x.In
		}
		switch {
		case x.Absent && found:
			c.failf("xds", where, "%s: expected absent, but it is there", what)
		case !x.Absent && !found:
			c.failf("xds", where, "%s: not found (%s)", what, detail)
		case found && x.Kind == scenario.KindCluster && x.ClusterType != "":
			if got := clusterType(&res.XDS, x.Name); got != x.ClusterType {
				c.failf("xds", where, "%s: cluster type is %s, expected %s", what, got, x.ClusterType)
			}
		case found && x.Kind == scenario.KindCluster && (len(x.HealthChecks) > 0 || x.OutlierDetection != nil):
			c.clusterHealth(where, what, &res.XDS, x)
		case found && x.Kind == scenario.KindHTTPFilter && x.Disabled != nil:
			if got := httpFilterDisabled(&res.XDS, x.In, x.Name); got != *x.Disabled {
				c.failf("xds", where, "%s: disabled is %v, expected %v", what, got, *x.Disabled)
			}
		case found && x.Kind == scenario.KindSecret:
			c.secretPEM(where, what, findSecret(&res.XDS, x.Name), x)
			c.secretTrustedCAs(where, what, findSecret(&res.XDS, x.Name), x)
		case found && x.Kind == scenario.KindFilterChain:
			c.filterChainTLS(where, what, findFilterChain(&res.XDS, x.In, x.Name), x)
			c.filterChainClientTLS(where, what, findFilterChain(&res.XDS, x.In, x.Name), x)
			c.filterChainHCM(where, what, findFilterChain(&res.XDS, x.In, x.Name), x)
		case found && x.Kind == scenario.KindRoute && x.Fields != nil:
			c.routeFields(where, what, &res.XDS, x)
		case found && x.Kind == scenario.KindCluster && x.Fields != nil:
			c.clusterFields(where, what, &res.XDS, x)
		case found && x.Kind == scenario.KindListener && x.Fields != nil:
			for _, l := range res.XDS.Listeners {
				if l.GetName() == x.Name {
					if msg := protoHasFields(l, x.Fields); msg != "" {
						c.failf("xds", where, "%s: %s", what, msg)
					}
				}
			}
		case found && x.Kind == scenario.KindSecret && x.Fields != nil:
			c.secretPEM(where, what, findSecret(&res.XDS, x.Name), x)
			c.secretTrustedCAs(where, what, findSecret(&res.XDS, x.Name), x)
			if msg := protoHasFields(findSecret(&res.XDS, x.Name), x.Fields); msg != "" {
				c.failf("xds", where, "%s: %s", what, msg)
			}
		case found && x.Kind == scenario.KindVirtualHost:
			vh := findVirtualHost(&res.XDS, x.In, x.Name)
			if len(x.Routes) > 0 {
				got := routeNames(vh)
				if !slices.Equal(got, x.Routes) {
					c.failf("xds", where, "%s: routes in order are\n    %s\n  expected\n    %s", what, strings.Join(got, "\n    "),
						strings.Join(x.Routes, "\n    "))
				}
			}
			if len(x.Domains) > 0 && !slices.Equal(vh.GetDomains(), x.Domains) {
				c.failf("xds", where, "%s: domains are %v, expected %v", what, vh.GetDomains(), x.Domains)
			}
		}
	}
}

// lookup finds the named resource; detail lists what exists, for the failure message.
func lookup(x scenario.XDSExpect, xds *result.XDS) (bool, string) {
	names := resourceNames(x, xds)
	return slices.Contains(names, x.Name), "present: " + orNone(names)
}

func orNoneList(names []string) []string {
	if len(names) == 0 {
		return []string{"(none)"}
	}
	return names
}

// resourceNames lists the names of x's kind (within x.In where the kind has one), in the
// translation's order.
func resourceNames(x scenario.XDSExpect, xds *result.XDS) []string {
	var names []string
	switch x.Kind {
	case scenario.KindListener:
		names = result.Names(xds.Listeners)
	case scenario.KindRouteConfig:
		names = result.Names(xds.Routes)
	case scenario.KindCluster:
		names = result.Names(xds.Clusters)
	case scenario.KindLoadAssign:
		for _, e := range xds.Endpoints {
			names = append(names, e.GetClusterName())
		}
	case scenario.KindSecret:
		names = result.Names(xds.Secrets)
	case scenario.KindVirtualHost:
		for rc := range namedIn(xds.Routes, x.In) {
			for _, vh := range rc.GetVirtualHosts() {
				names = append(names, vh.GetName())
			}
		}
	case scenario.KindRoute:
		for _, rc := range xds.Routes {
			for vh := range namedIn(rc.GetVirtualHosts(), x.In) {
				names = append(names, routeNames(vh)...)
			}
		}
	case scenario.KindFilterChain:
		for l := range namedIn(xds.Listeners, x.In) {
			for _, fc := range chainsOf(l) {
				names = append(names, fc.GetName())
			}
		}
	case scenario.KindHTTPFilter:
		for l := range namedIn(xds.Listeners, x.In) {
			names = append(names, httpFilterNames(l)...)
		}
	default:
		names = policyPartNames(x, xds)
	}
	return names
}

// namedIn yields the resources of list named in, or all of them when in is empty: what an
// expectation's In narrows a search to (a listener, a route configuration, a virtual host).
func namedIn[T interface{ GetName() string }](list []T, in string) iter.Seq[T] {
	return func(yield func(T) bool) {
		for _, r := range list {
			if in != "" && r.GetName() != in {
				continue
			}
			if !yield(r) {
				return
			}
		}
	}
}

func findVirtualHost(xds *result.XDS, in, name string) *routev3.VirtualHost {
	for rc := range namedIn(xds.Routes, in) {
		for _, vh := range rc.GetVirtualHosts() {
			if vh.GetName() == name {
				return vh
			}
		}
	}
	return nil
}

func routeNames(vh *routev3.VirtualHost) []string {
	out := make([]string, 0, len(vh.GetRoutes()))
	for _, r := range vh.GetRoutes() {
		out = append(out, r.GetName())
	}
	return out
}

// httpFilterNames lists the HTTP filters of every HTTP connection manager on the listener.
func httpFilterNames(l *listenerv3.Listener) []string {
	var out []string
	for _, hf := range hcmFilters(l) {
		if !slices.Contains(out, hf.GetName()) {
			out = append(out, hf.GetName())
		}
	}
	return out
}

// clusterType is a cluster's discovery type, or its extension's name for a custom type.
func clusterType(x *result.XDS, name string) string {
	for _, c := range x.Clusters {
		if c.GetName() != name {
			continue
		}
		if ct := c.GetClusterType(); ct != nil {
			return ct.GetName()
		}
		return c.GetType().String()
	}
	return ""
}
