package upgrade

import (
	"fmt"
	"sort"
	"strings"

	clusterv3 "github.com/envoyproxy/go-control-plane/envoy/config/cluster/v3"
	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	endpointv3 "github.com/envoyproxy/go-control-plane/envoy/config/endpoint/v3"
	listenerv3 "github.com/envoyproxy/go-control-plane/envoy/config/listener/v3"
	routev3 "github.com/envoyproxy/go-control-plane/envoy/config/route/v3"
	jwtv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/http/jwt_authn/v3"
	luav3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/http/lua/v3"
	ratelimitv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/http/ratelimit/v3"
	hcmv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/network/http_connection_manager/v3"

	// linked in so that walkStrings opens tcp_proxy configs
	_ "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/network/tcp_proxy/v3"
	tlsv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/transport_sockets/tls/v3"
	"google.golang.org/protobuf/proto"

	"github.com/egharness/egharness/harness/facts"
	"github.com/egharness/egharness/translator/resource"
	"github.com/egharness/egharness/translator/result"
)

// Collecting the entities of one side's xDS: listeners, filter chains, HTTP filters, route
// configurations, virtual hosts, routes, clusters and secrets, each with its identity,
// name, place and owners.

func (d *differ) collect(r *result.Result) []*entity {
	c := &collector{d: d, res: r, gwsAt: d.gatewaysByPort(), namedBy: map[string]resource.Ref{},
		jwks: map[string]*entity{}}
	rcRefs := map[string][]string{} // route configuration name → filter chain identities
	rcOwner := map[string]resource.Ref{}
	for _, l := range r.XDS.Listeners {
		c.listener(l, rcRefs, rcOwner)
	}
	for _, rc := range r.XDS.Routes {
		c.routeConfig(rc, rcRefs[rc.GetName()], rcOwner[rc.GetName()])
	}
	cla := map[string]*endpointv3.ClusterLoadAssignment{}
	for _, e := range r.XDS.Endpoints {
		cla[e.GetClusterName()] = e
	}
	for _, cl := range r.XDS.Clusters {
		loc := xdsLoc{"Cluster", cl.GetName()}
		eps := cl.GetLoadAssignment()
		if eps == nil {
			name := cl.GetEdsClusterConfig().GetServiceName()
			if name == "" {
				name = cl.GetName()
			}
			eps = cla[name]
		}
		addrs, pipe := endpointAddrs(eps)
		owners := metaOwners(cl.GetMetadata())
		id := "endpoints=" + strings.Join(addrs, ",")
		if pipe != "" {
			id = "pipe:" + pipe
		} else {
			var os []string
			for _, o := range owners {
				os = append(os, o.String())
			}
			id = "serves=" + strings.Join(os, ",") + " " + id
		}
		shape := cl.GetType().String()
		if ct := cl.GetClusterType(); ct != nil {
			shape = ct.GetName()
		}
		fallback := resource.Ref{Kind: "Cluster", Name: cl.GetName()}
		if o, ok := c.namedBy[cl.GetName()]; ok {
			fallback = o
		}
		cowner := c.owner(cl.GetName(), owners, fallback)
		cent := &entity{kind: "Cluster", identity: id, name: cl.GetName(), shape: shape, res: loc, owner: cowner}
		if p := c.jwks[cl.GetName()]; p != nil && len(owners) == 0 {
			cent.owner, cent.owners, cent.ctx = p.owner, p.owners, p.ctx
		}
		if featureOf(cent) == featRateLimit && len(owners) == 0 {
			// The rate limit service's cluster is there for the Gateway's rate limit policies.
			c.attribute(cent, cl.GetName(), resource.Ref{}, cowner)
		}
		c.add(cent)
		for i, t := range upstreamTLS(cl) {
			c.add(&entity{kind: "UpstreamTLS", identity: fmt.Sprintf("%s tls#%d sni=%s", id, i, t.sni), name: cl.GetName(),
				where: "SNI " + t.sni, place: id, shape: t.versions, owner: cowner, owners: cent.owners, ctx: cent.ctx, res: loc,
				parent: cent.key()})
		}
	}
	for _, s := range r.XDS.Secrets {
		cp := proto.Clone(s).(*tlsv3.Secret)
		cp.Name = ""
		kind := "generic"
		switch s.GetType().(type) {
		case *tlsv3.Secret_TlsCertificate:
			kind = "tls_certificate"
		case *tlsv3.Secret_ValidationContext:
			kind = "validation_context"
		case *tlsv3.Secret_SessionTicketKeys:
			kind = "session_ticket_keys"
		}
		sent := &entity{kind: "Secret", identity: kind + " " + fp(cp), name: s.GetName(), text: s.GetName(),
			res:   xdsLoc{"Secret", s.GetName()},
			owner: c.owner(s.GetName(), nil, resource.Ref{Kind: "Secret", Name: s.GetName()})}
		if s.GetName() == systemCASecret {
			if ps := d.systemCAPolicies(); len(ps) > 0 {
				sent.owner, sent.owners = ps[0], ps
			}
		}
		c.add(sent)
	}
	return c.ents
}

func (c *collector) add(e *entity) { c.ents = append(c.ents, e) }

func (c *collector) listener(l *listenerv3.Listener, rcRefs map[string][]string, rcOwner map[string]resource.Ref) {
	sa := l.GetAddress().GetSocketAddress()
	lid := fmt.Sprintf("%s %s:%d", sa.GetProtocol(), sa.GetAddress(), sa.GetPortValue())
	owner := resource.Ref{Kind: "Listener", Name: l.GetName()}
	// Each Gateway is its own fleet of proxies (unless Gateways are merged, when the
	// listener is named after the first of them): listeners of different Gateways share an
	// address and port without being the same listener, so the Gateway is part of the
	// identity, when it is known from the names or is the only one on the port.
	gws := c.gwsAt[sa.GetPortValue()]
	if gw, ok := c.d.gatewayOfListener(l); ok {
		owner = gw
		lid = gw.String() + " " + lid
	} else if len(gws) == 1 {
		owner = gws[0]
		lid = gws[0].String() + " " + lid
	} else if len(gws) > 0 {
		owner = gws[0]
	}
	loc := xdsLoc{"Listener", l.GetName()}
	lent := &entity{kind: "Listener", identity: lid, name: l.GetName(), owner: owner, res: loc}
	c.add(lent)
	// Clusters a listener names (SDS servers through envoy_grpc, tcp_proxy targets)
	// belong to its Gateway when nothing else claims them.
	walkStrings(l, func(field, value string) {
		if field == "cluster_name" || field == "cluster" {
			if _, ok := c.namedBy[value]; !ok && value != "" {
				c.namedBy[value] = owner
			}
		}
	})
	chains := l.GetFilterChains()
	if dc := l.GetDefaultFilterChain(); dc != nil {
		chains = append(chains, dc)
	}
	for i, fc := range chains {
		fcid := lid + " " + chainMatch(fc.GetFilterChainMatch())
		if i == len(l.GetFilterChains()) {
			fcid = lid + " default"
		}
		for _, nf := range fc.GetFilters() {
			var hcm hcmv3.HttpConnectionManager
			if nf.GetTypedConfig() == nil || !nf.GetTypedConfig().MessageIs(&hcm) ||
				nf.GetTypedConfig().UnmarshalTo(&hcm) != nil {
				continue
			}
			// HTTP filter chains are named by the scheme (NAME-02); layer-4 chains are named
			// after their route, whose own changes tell the story.
			if fc.GetName() != "" {
				c.add(&entity{kind: "FilterChain", identity: fcid, name: fc.GetName(), where: "listener " + l.GetName(), place: lid,
					owner: owner, res: loc, parent: lent.key()})
			}
			if rc := hcm.GetRds().GetRouteConfigName(); rc != "" {
				rcRefs[rc] = append(rcRefs[rc], fcid)
				if _, ok := rcOwner[rc]; !ok {
					rcOwner[rc] = owner
				}
			}
			where := "listener " + l.GetName()
			if fc.GetName() != "" && fc.GetName() != l.GetName() {
				where += " filter chain " + fc.GetName()
			}
			for _, hf := range hcm.GetHttpFilters() {
				c.httpFilter(hf, fcid, where, owner, loc, lent.key())
			}
		}
	}
}

func (c *collector) httpFilter(hf *hcmv3.HttpFilter, fcid, where string, owner resource.Ref, loc xdsLoc,
	parent string) {
	a := hf.GetTypedConfig()
	tu := a.GetTypeUrl()
	msg := facts.Unpack(a)
	fowner := c.owner(hf.GetName(), nil, owner)
	conf := fpAny(a, msg)
	fent := &entity{kind: "HTTPFilter", identity: fcid + " " + tu + " " + conf, name: hf.GetName(), where: where,
		place: fcid, shape: conf,
		text: tu + " " + hf.GetName(), owner: fowner, res: loc, parent: parent}
	c.attribute(fent, hf.GetName(), fowner, owner)
	c.add(fent)
	switch m := msg.(type) {
	case *luav3.Lua:
		for _, src := range luaSources(m) {
			lent := &entity{kind: "LuaScript", identity: "source " + hash(src), name: hf.GetName(), where: where, place: fcid,
				text: tu + " " + hf.GetName(), owner: fowner, res: loc}
			c.attribute(lent, hf.GetName(), fowner, owner)
			c.add(lent)
		}
	case *jwtv3.JwtAuthentication:
		keys := make([]string, 0, len(m.GetProviders()))
		for k := range m.GetProviders() {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			powner := c.owner(k, nil, fowner)
			pent := &entity{kind: "JWTProvider", identity: "provider " + fp(m.GetProviders()[k]), name: k,
				where: where + " HTTP filter " + hf.GetName(), place: fcid, text: tu + " " + k,
				owner: powner, res: loc}
			c.attribute(pent, k, powner, owner)
			c.add(pent)
			if cl := m.GetProviders()[k].GetRemoteJwks().GetHttpUri().GetCluster(); cl != "" && len(pent.owners) > 0 {
				c.jwks[cl] = pent
			}
		}
	}
}

func luaSources(m *luav3.Lua) []string {
	var out []string
	if s := m.GetDefaultSourceCode().GetInlineString(); s != "" {
		out = append(out, s)
	}
	if s := m.GetInlineCode(); s != "" {
		out = append(out, s)
	}
	keys := make([]string, 0, len(m.GetSourceCodes()))
	for k := range m.GetSourceCodes() {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if s := m.GetSourceCodes()[k].GetInlineString(); s != "" {
			out = append(out, s)
		}
	}
	return out
}

func chainMatch(m *listenerv3.FilterChainMatch) string {
	if m == nil {
		return "match=any"
	}
	names := append([]string(nil), m.GetServerNames()...)
	sort.Strings(names)
	return "sni=" + strings.Join(names, ",") + " match=" + fp(m)
}

func (c *collector) routeConfig(rc *routev3.RouteConfiguration, refs []string, owner resource.Ref) {
	sort.Strings(refs)
	rcid := "served by " + strings.Join(refs, " | ")
	if len(refs) == 0 {
		rcid = "unreferenced " + rc.GetName()
	}
	if owner == (resource.Ref{}) {
		owner = resource.Ref{Kind: "RouteConfiguration", Name: rc.GetName()}
	}
	loc := xdsLoc{"RouteConfiguration", rc.GetName()}
	rent := &entity{kind: "RouteConfiguration", identity: rcid, name: rc.GetName(), owner: owner, res: loc}
	c.add(rent)
	for _, vh := range rc.GetVirtualHosts() {
		domains := append([]string(nil), vh.GetDomains()...)
		sort.Strings(domains)
		vhid := rcid + " domains=" + strings.Join(domains, ",")
		vent := &entity{kind: "VirtualHost", identity: vhid, name: vh.GetName(), where: "route configuration " + rc.GetName(),
			place: rcid,
			owner: owner, res: loc, parent: rent.key()}
		c.add(vent)
		for _, route := range vh.GetRoutes() {
			m := fp(route.GetMatch())
			rid := fmt.Sprintf("%s match=%s", vhid, m)
			rowner := c.owner(route.GetName(), metaOwners(route.GetMetadata()), owner)
			rtent := &entity{kind: "Route", identity: rid, name: route.GetName(), where: "virtual host " + vh.GetName(),
				place: vhid,
				shape: routeShape(route), owner: rowner, res: loc, parent: vent.key()}
			c.attribute(rtent, "", rowner, owner)
			c.add(rtent)
			at := "route " + route.GetName()
			// ent adds an entity of this route, attributed from name.
			ent := func(e *entity, name string) {
				c.attribute(e, name, rowner, owner)
				c.add(e)
			}
			patchers := c.rateLimitPatchers(rc.GetName(), route)
			for _, rl := range route.GetRoute().GetRateLimits() {
				e := &entity{kind: "RateLimit", identity: rid + " " + fp(rl), where: at + ": route.rateLimits",
					place: rid + " route.rateLimits",
					text:  "rate_limits", owner: rowner, res: loc, parent: rtent.key(), parts: actionParts(rl)}
				ent(e, "")
				if len(patchers) > 0 {
					// Made by a patch, not by a policy: the patch is what to change.
					e.owner, e.owners = patchers[0], patchers
				}
			}
			keys := make([]string, 0, len(route.GetTypedPerFilterConfig()))
			for k := range route.GetTypedPerFilterConfig() {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			perType := map[string]int{}
			for _, k := range keys {
				a := route.GetTypedPerFilterConfig()[k]
				inner := a
				var fc routev3.FilterConfig
				if a.MessageIs(&fc) && a.UnmarshalTo(&fc) == nil && fc.GetConfig() != nil {
					inner = fc.GetConfig()
				}
				tu := inner.GetTypeUrl()
				msg := facts.Unpack(inner)
				n := perType[tu]
				perType[tu]++
				ent(&entity{kind: "PerFilterConfig", identity: fmt.Sprintf("%s %s#%d", rid, tu, n), name: k, where: at, place: rid,
					shape: short(msg, inner), text: tu + " " + k, owner: rowner, res: loc, parent: rtent.key()}, k)
				switch pm := msg.(type) {
				case *ratelimitv3.RateLimitPerRoute:
					for _, rl := range pm.GetRateLimits() {
						ent(&entity{kind: "RateLimit", identity: rid + " " + fp(rl),
							where: at + ": typedPerFilterConfig[" + k + "].rateLimits", place: rid + " typedPerFilterConfig " + tu,
							text:  tu + " " + k,
							owner: rowner, res: loc, parent: rtent.key(), parts: actionParts(rl)}, k)
					}
				case *luav3.LuaPerRoute:
					if src := pm.GetSourceCode().GetInlineString(); src != "" {
						ent(&entity{kind: "LuaScript", identity: "source " + hash(src), name: k, where: at, place: rid,
							text: tu + " " + k, owner: rowner, res: loc}, k)
					}
				}
			}
		}
	}
}

// upstreamTLS reads each TLS context a cluster originates (its transport socket, then its
// transport socket matches): the SNI (part of its identity) and the protocol versions (its
// shape). Secret names are left out: their renames are found on the secrets.
func upstreamTLS(cl *clusterv3.Cluster) []upstream {
	sockets := []*corev3.TransportSocket{cl.GetTransportSocket()}
	for _, m := range cl.GetTransportSocketMatches() {
		sockets = append(sockets, m.GetTransportSocket())
	}
	var out []upstream
	for _, ts := range sockets {
		var ctx tlsv3.UpstreamTlsContext
		a := ts.GetTypedConfig()
		if a == nil || !a.MessageIs(&ctx) || a.UnmarshalTo(&ctx) != nil {
			continue
		}
		p := ctx.GetCommonTlsContext().GetTlsParams()
		out = append(out, upstream{sni: ctx.GetSni(), versions: fmt.Sprintf("minVersion=%s maxVersion=%s",
			p.GetTlsMinimumProtocolVersion(), p.GetTlsMaximumProtocolVersion())})
	}
	return out
}

type upstream struct{ sni, versions string }

// routeShape is what a route does: forward, redirect, or answer by itself.
func routeShape(route *routev3.Route) string {
	switch a := route.GetAction().(type) {
	case *routev3.Route_Route:
		return "forwards"
	case *routev3.Route_Redirect:
		return "redirects"
	case *routev3.Route_DirectResponse:
		return fmt.Sprintf("answers %d directly", a.DirectResponse.GetStatus())
	case nil:
		return ""
	}
	return "other action"
}

// endpointAddrs lists a cluster's endpoint addresses, sorted, and its pipe path when it
// talks to a unix socket (SDS).
func endpointAddrs(cla *endpointv3.ClusterLoadAssignment) ([]string, string) {
	var out []string
	pipe := ""
	for _, l := range cla.GetEndpoints() {
		for _, e := range l.GetLbEndpoints() {
			addr := e.GetEndpoint().GetAddress()
			if p := addr.GetPipe(); p != nil {
				pipe = p.GetPath()
				continue
			}
			sa := addr.GetSocketAddress()
			out = append(out, fmt.Sprintf("%s:%d", sa.GetAddress(), sa.GetPortValue()))
		}
	}
	sort.Strings(out)
	return out, pipe
}
