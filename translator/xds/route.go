package xds

import (
	"strings"

	routev3 "github.com/envoyproxy/go-control-plane/envoy/config/route/v3"
	matcherv3 "github.com/envoyproxy/go-control-plane/envoy/type/matcher/v3"

	"github.com/egharness/egharness/translator/ir"
)

func buildRoute(r *ir.HTTPRoute, metadata *metadataTable) *routev3.Route {
	out := &routev3.Route{
		Name:     r.Name,
		Match:    buildMatch(r),
		Metadata: metadata.of(routeMetadata(r)),
	}
	switch {
	case r.DirectResponse != nil:
		out.Action = &routev3.Route_DirectResponse{DirectResponse: directResponseAction(r.DirectResponse)}
	case r.Redirect != nil:
		out.Action = &routev3.Route_Redirect{Redirect: redirectAction(r)}
	case r.Destination != nil:
		out.Action = &routev3.Route_Route{Route: buildAction(r.Destination, r.IsHTTP2)}
	}
	applyRouteFilters(out, r)
	return out
}

func buildAction(d *ir.Destination, http2 bool) *routev3.RouteAction {
	a := &routev3.RouteAction{}
	if !http2 {
		// HTTP routes may upgrade to WebSocket; gRPC routes never do.
		a.UpgradeConfigs = []*routev3.RouteAction_UpgradeConfig{{UpgradeType: "websocket"}}
	}
	merged := d.MergedBackends()
	d = d.Unmerged()
	switch {
	case len(merged) == 0 && !perBackendClusters(d):
		a.ClusterSpecifier = &routev3.RouteAction_Cluster{Cluster: d.Name}
		return a
	case len(merged) == 1 && len(d.Settings) == 0:
		// One backend, in a cluster its Gateway's routes share (mergeBackends).
		a.ClusterSpecifier = &routev3.RouteAction_Cluster{Cluster: merged[0].Merged}
		return a
	}
	// Some backends are invalid: their share goes to a cluster that does not exist, which
	// Envoy answers with 500 (RT-12); the valid ones keep their own clusters, as do backends
	// with filters of their own (applied on their weighted entry). Shared clusters
	// (mergeBackends) come last, each with its backend's weight, as EG lists them.
	_, invalid := d.ValidWeight()
	wc := &routev3.WeightedCluster{}
	if invalid > 0 {
		wc.Clusters = append(wc.Clusters,
			&routev3.WeightedCluster_ClusterWeight{Name: invalidBackendCluster, Weight: u32(invalid)})
	}
	for _, s := range d.Settings {
		if s.Invalid {
			continue
		}
		cw := &routev3.WeightedCluster_ClusterWeight{Name: s.Name, Weight: u32(s.Weight)}
		applyBackendFilters(cw, s.Filters)
		wc.Clusters = append(wc.Clusters, cw)
	}
	for _, s := range merged {
		wc.Clusters = append(wc.Clusters, &routev3.WeightedCluster_ClusterWeight{Name: s.Merged, Weight: u32(s.Weight)})
	}
	a.ClusterSpecifier = &routev3.RouteAction_WeightedClusters{WeightedClusters: wc}
	if !http2 {
		// EG v1.9 sets the 500 for HTTPRoutes only; a gRPC route keeps Envoy's 503.
		a.ClusterNotFoundResponseCode = routev3.RouteAction_INTERNAL_SERVER_ERROR
	}
	return a
}

func buildMatch(r *ir.HTTPRoute) *routev3.RouteMatch {
	m := &routev3.RouteMatch{}
	switch p := r.PathMatch; {
	case p == nil:
		m.PathSpecifier = &routev3.RouteMatch_Prefix{Prefix: "/"}
	case p.Exact != nil:
		m.PathSpecifier = &routev3.RouteMatch_Path{Path: *p.Exact}
	case p.SafeRegex != nil:
		m.PathSpecifier = &routev3.RouteMatch_SafeRegex{SafeRegex: &matcherv3.RegexMatcher{Regex: *p.SafeRegex}}
	case *p.Prefix == "/":
		m.PathSpecifier = &routev3.RouteMatch_Prefix{Prefix: "/"}
	default:
		// Gateway API prefixes match whole path segments; one trailing "/" is dropped.
		m.PathSpecifier = &routev3.RouteMatch_PathSeparatedPrefix{PathSeparatedPrefix: strings.TrimSuffix(*p.Prefix, "/")}
	}
	for _, h := range r.Headers {
		m.Headers = append(m.Headers, &routev3.HeaderMatcher{
			Name:                 h.Name,
			HeaderMatchSpecifier: &routev3.HeaderMatcher_StringMatch{StringMatch: stringMatcher(h)},
		})
	}
	for _, c := range r.Cookies {
		m.Cookies = append(m.Cookies, &routev3.CookieMatcher{Name: c.Name, StringMatch: stringMatcher(c)})
	}
	for _, q := range r.QueryParams {
		m.QueryParameters = append(m.QueryParameters, &routev3.QueryParameterMatcher{
			Name:                         q.Name,
			QueryParameterMatchSpecifier: &routev3.QueryParameterMatcher_StringMatch{StringMatch: stringMatcher(q)},
		})
	}
	return m
}

func stringMatcher(s *ir.StringMatch) *matcherv3.StringMatcher {
	switch {
	case s.Exact != nil:
		return &matcherv3.StringMatcher{MatchPattern: &matcherv3.StringMatcher_Exact{Exact: *s.Exact}}
	case s.Prefix != nil:
		return &matcherv3.StringMatcher{MatchPattern: &matcherv3.StringMatcher_Prefix{Prefix: *s.Prefix}}
	case s.Suffix != nil:
		return &matcherv3.StringMatcher{MatchPattern: &matcherv3.StringMatcher_Suffix{Suffix: *s.Suffix}}
	default:
		return &matcherv3.StringMatcher{
			MatchPattern: &matcherv3.StringMatcher_SafeRegex{SafeRegex: &matcherv3.RegexMatcher{Regex: s.Value()}}}
	}
}
