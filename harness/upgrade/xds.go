package upgrade

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"sort"
	"strings"
	"sync"

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
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/known/anypb"
	gwapiv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/egharness/egharness/translator/resource"
	"github.com/egharness/egharness/translator/result"
)

// An entity is one thing in the xDS that users address by name (a listener, a filter, a
// JWT provider, a rate-limit rule...), with an identity that says what it is independently
// of its name: two entities with the same kind and identity on both sides are the same
// thing, and a different name or place is a rename or a move.
//
// Identities: listeners by protocol and address:port; filter chains by their listener and
// match; route configurations by the filter chains whose RDS names them; virtual hosts by
// their route configuration and domains; routes by their virtual host and match; clusters
// by the objects they serve and their endpoints (SDS clusters by socket path); HTTP filters
// by listener, type URL and config; JWT providers by config; Lua scripts by source; rate
// limits by route and descriptor actions; per-route filter configs by route and type URL;
// secrets by kind and content.
type entity struct {
	kind     string
	identity string
	name     string
	where    string // the place it lives, in words
	place    string // the place it lives, by identity: a move is a change of place, not of words
	shape    string // a summary whose change on a matched entity is a finding
	text     string // what rules match on (type URL, names)
	owner    resource.Ref
	// owners are all the policies it is attributed to (owner is the first), ctx the route
	// and Gateway it affects (see attribute.go); named: the policy is read from its name.
	owners []resource.Ref
	ctx    []resource.Ref
	named  bool
	res    xdsLoc // the top-level resource holding it
	parent string // kind and identity of the entity holding it ("" for top-level ones)
	// parts are fingerprints of a rate limit's actions, in order: a patch that appended
	// actions to one changes its identity but keeps its first actions.
	parts []string
}

type xdsLoc struct{ typ, name string }

func (e *entity) key() string   { return e.kind + "\x00" + e.identity }
func (e *entity) label() string { return e.name + "\x00" + e.place }

// nameAt words an entity's name and place for before/after.
func (e *entity) nameAt() string {
	if e.name == "" {
		return e.where
	}
	if e.where == "" {
		return e.name
	}
	return e.name + " (" + e.where + ")"
}

// collector gathers one side's entities.
type collector struct {
	d     *differ
	res   *result.Result // the side being collected
	ents  []*entity
	gwsAt map[uint32][]resource.Ref
	// namedBy: the owner of the listener that names a cluster (tcp_proxy, SDS config), for
	// clusters without metadata such as EmptyCluster and SDS clusters.
	namedBy map[string]resource.Ref
	// jwks: the JWT provider entity whose remote JWKS a cluster fetches: the cluster is
	// attributed to the same policy.
	jwks map[string]*entity
}

func (d *differ) collect(r *result.Result) []*entity {
	c := &collector{d: d, res: r, gwsAt: d.gatewaysByPort(), namedBy: map[string]resource.Ref{}, jwks: map[string]*entity{}}
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
				where: "SNI " + t.sni, place: id, shape: t.versions, owner: cowner, owners: cent.owners, ctx: cent.ctx, res: loc, parent: cent.key()})
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
			res: xdsLoc{"Secret", s.GetName()}, owner: c.owner(s.GetName(), nil, resource.Ref{Kind: "Secret", Name: s.GetName()})}
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

// owner is the object an xDS thing belongs to: the envoy-gateway metadata's first resource,
// else an object named inside the xDS name ("httproute/ns/name/...",
// ".../envoyextensionpolicy/ns/name/..."), else fallback.
func (c *collector) owner(name string, meta []resource.Ref, fallback resource.Ref) resource.Ref {
	if len(meta) > 0 {
		return meta[0]
	}
	parts := strings.Split(name, "/")
	for i := 0; i+2 < len(parts); i++ {
		if kind, ok := c.d.byKindLower[strings.ToLower(parts[i])]; ok {
			ref := resource.Ref{Kind: kind, Namespace: parts[i+1], Name: parts[i+2]}
			if _, ok := c.d.objects[ref]; ok {
				return ref
			}
		}
		// A kind EG names resources after (httproute/ns/name/...), even when the object
		// is not among the input (an implementation may report what it was given apart).
		if kind, ok := knownLower()[parts[i]]; ok && parts[i+1] != "" && parts[i+2] != "" {
			return resource.Ref{Kind: kind, Namespace: parts[i+1], Name: parts[i+2]}
		}
	}
	// A per-resource CA secret of v1.8 is "<name>/<namespace>-ca" (SDS-03).
	if len(parts) == 2 && strings.HasSuffix(parts[1], "-ca") {
		for _, kind := range []string{"BackendTLSPolicy", "Backend"} {
			ref := resource.Ref{Kind: kind, Namespace: strings.TrimSuffix(parts[1], "-ca"), Name: parts[0]}
			if _, ok := c.d.objects[ref]; ok {
				return ref
			}
		}
	}
	if len(parts) >= 2 {
		for _, kind := range []string{"Secret", "BackendTLSPolicy", "Backend"} {
			ref := resource.Ref{Kind: kind, Namespace: parts[0], Name: parts[1]}
			if _, ok := c.d.objects[ref]; ok {
				return ref
			}
		}
	}
	return fallback
}

// knownLower maps the lower-case spelling of every kind egharness reads to the kind.
var knownLower = sync.OnceValue(func() map[string]string {
	out := map[string]string{}
	for _, k := range resource.KnownKinds() {
		out[strings.ToLower(k)] = k
	}
	return out
})

// gatewayOfListener is the Gateway a listener belongs to: from its name
// (NAMESPACE/GATEWAY/LISTENER), else from its first filter chain's (the V2 name scheme names
// listeners by protocol and port and their chains after the Gateway listener), when the
// input holds that Gateway.
func (d *differ) gatewayOfListener(l *listenerv3.Listener) (resource.Ref, bool) {
	if gw, ok := d.gatewayOf(l.GetName()); ok {
		return gw, true
	}
	chains := l.GetFilterChains()
	if dc := l.GetDefaultFilterChain(); dc != nil {
		chains = append(chains[:len(chains):len(chains)], dc)
	}
	for _, fc := range chains {
		if gw, ok := d.gatewayOf(fc.GetName()); ok {
			return gw, true
		}
	}
	return resource.Ref{}, false
}

// gatewayOf is the Gateway of a name NAMESPACE/GATEWAY/LISTENER, when the input holds it.
func (d *differ) gatewayOf(name string) (resource.Ref, bool) {
	parts := strings.SplitN(name, "/", 3)
	if len(parts) < 3 {
		return resource.Ref{}, false
	}
	ref := resource.Ref{Kind: "Gateway", Namespace: parts[0], Name: parts[1]}
	if _, ok := d.objects[ref]; !ok {
		return resource.Ref{}, false
	}
	return ref, true
}

// gatewaysByPort maps an Envoy port to the Gateways with a listener on it (EG binds
// privileged ports 10000 higher).
func (d *differ) gatewaysByPort() map[uint32][]resource.Ref {
	out := map[uint32][]resource.Ref{}
	refs := make([]resource.Ref, 0)
	for ref := range d.objects {
		if ref.Kind == "Gateway" {
			refs = append(refs, ref)
		}
	}
	sort.Slice(refs, func(i, j int) bool { return refs[i].Less(refs[j]) })
	for _, ref := range refs {
		gw, ok := d.objects[ref].Obj.(*gwapiv1.Gateway)
		if !ok {
			continue
		}
		seen := map[uint32]bool{}
		for _, l := range gw.Spec.Listeners {
			p := uint32(l.Port)
			if p < 1024 {
				p += 10000
			}
			if !seen[p] {
				seen[p] = true
				out[p] = append(out[p], ref)
			}
		}
	}
	return out
}

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
			if nf.GetTypedConfig() == nil || !nf.GetTypedConfig().MessageIs(&hcm) || nf.GetTypedConfig().UnmarshalTo(&hcm) != nil {
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

func (c *collector) httpFilter(hf *hcmv3.HttpFilter, fcid, where string, owner resource.Ref, loc xdsLoc, parent string) {
	a := hf.GetTypedConfig()
	tu := a.GetTypeUrl()
	msg := unpack(a)
	fowner := c.owner(hf.GetName(), nil, owner)
	conf := fpAny(a, msg)
	fent := &entity{kind: "HTTPFilter", identity: fcid + " " + tu + " " + conf, name: hf.GetName(), where: where, place: fcid, shape: conf,
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
		vent := &entity{kind: "VirtualHost", identity: vhid, name: vh.GetName(), where: "route configuration " + rc.GetName(), place: rcid,
			owner: owner, res: loc, parent: rent.key()}
		c.add(vent)
		for _, rt := range vh.GetRoutes() {
			m := fp(rt.GetMatch())
			rid := fmt.Sprintf("%s match=%s", vhid, m)
			rowner := c.owner(rt.GetName(), metaOwners(rt.GetMetadata()), owner)
			rtent := &entity{kind: "Route", identity: rid, name: rt.GetName(), where: "virtual host " + vh.GetName(), place: vhid,
				shape: routeShape(rt), owner: rowner, res: loc, parent: vent.key()}
			c.attribute(rtent, "", rowner, owner)
			c.add(rtent)
			at := "route " + rt.GetName()
			// ent adds an entity of this route, attributed from name.
			ent := func(e *entity, name string) {
				c.attribute(e, name, rowner, owner)
				c.add(e)
			}
			patchers := c.rateLimitPatchers(rc.GetName(), rt)
			for _, rl := range rt.GetRoute().GetRateLimits() {
				e := &entity{kind: "RateLimit", identity: rid + " " + fp(rl), where: at + ": route.rateLimits", place: rid + " route.rateLimits",
					text: "rate_limits", owner: rowner, res: loc, parent: rtent.key(), parts: actionParts(rl)}
				ent(e, "")
				if len(patchers) > 0 {
					// Made by a patch, not by a policy: the patch is what to change.
					e.owner, e.owners = patchers[0], patchers
				}
			}
			keys := make([]string, 0, len(rt.GetTypedPerFilterConfig()))
			for k := range rt.GetTypedPerFilterConfig() {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			perType := map[string]int{}
			for _, k := range keys {
				a := rt.GetTypedPerFilterConfig()[k]
				inner := a
				var fc routev3.FilterConfig
				if a.MessageIs(&fc) && a.UnmarshalTo(&fc) == nil && fc.GetConfig() != nil {
					inner = fc.GetConfig()
				}
				tu := inner.GetTypeUrl()
				msg := unpack(inner)
				n := perType[tu]
				perType[tu]++
				ent(&entity{kind: "PerFilterConfig", identity: fmt.Sprintf("%s %s#%d", rid, tu, n), name: k, where: at, place: rid,
					shape: short(msg, inner), text: tu + " " + k, owner: rowner, res: loc, parent: rtent.key()}, k)
				switch pm := msg.(type) {
				case *ratelimitv3.RateLimitPerRoute:
					for _, rl := range pm.GetRateLimits() {
						ent(&entity{kind: "RateLimit", identity: rid + " " + fp(rl),
							where: at + ": typedPerFilterConfig[" + k + "].rateLimits", place: rid + " typedPerFilterConfig " + tu, text: tu + " " + k,
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
func routeShape(rt *routev3.Route) string {
	switch a := rt.GetAction().(type) {
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

// metaOwners reads EG's filter metadata (envoy-gateway.resources) naming the objects an
// xDS resource was made for.
func metaOwners(md *corev3.Metadata) []resource.Ref {
	st := md.GetFilterMetadata()["envoy-gateway"]
	var out []resource.Ref
	for _, v := range st.GetFields()["resources"].GetListValue().GetValues() {
		f := v.GetStructValue().GetFields()
		ref := resource.Ref{Kind: f["kind"].GetStringValue(), Namespace: f["namespace"].GetStringValue(), Name: f["name"].GetStringValue()}
		if ref.Kind != "" && ref.Name != "" {
			out = append(out, ref)
		}
	}
	return out
}

// walkStrings calls fn with the name and value of every string field of m, opening the
// Any fields whose types are linked in.
func walkStrings(m proto.Message, fn func(field, value string)) {
	var walk func(protoreflect.Message, int)
	walk = func(r protoreflect.Message, depth int) {
		if depth > 64 {
			return
		}
		if a, ok := r.Interface().(*anypb.Any); ok {
			if inner := unpack(a); inner != nil {
				walk(inner.ProtoReflect(), depth+1)
			}
			return
		}
		r.Range(func(fd protoreflect.FieldDescriptor, v protoreflect.Value) bool {
			switch {
			case fd.IsList() && fd.Kind() == protoreflect.MessageKind:
				for i := 0; i < v.List().Len(); i++ {
					walk(v.List().Get(i).Message(), depth+1)
				}
			case fd.IsMap():
				if fd.MapValue().Kind() == protoreflect.MessageKind {
					v.Map().Range(func(_ protoreflect.MapKey, mv protoreflect.Value) bool {
						walk(mv.Message(), depth+1)
						return true
					})
				}
			case fd.Kind() == protoreflect.MessageKind:
				walk(v.Message(), depth+1)
			case fd.Kind() == protoreflect.StringKind && !fd.IsList():
				fn(string(fd.Name()), v.String())
			}
			return true
		})
	}
	walk(m.ProtoReflect(), 0)
}

// unpack opens an Any whose type is linked in; nil otherwise.
func unpack(a *anypb.Any) proto.Message {
	if a == nil {
		return nil
	}
	m, err := a.UnmarshalNew()
	if err != nil {
		return nil
	}
	return m
}

// fp is a short fingerprint of a message: deterministic bytes (map order fixed), hashed.
func fp(m proto.Message) string {
	b, err := proto.MarshalOptions{Deterministic: true}.Marshal(m)
	if err != nil {
		return "unmarshalable"
	}
	return hashBytes(b)
}

// actionParts fingerprints a rate limit's actions.
func actionParts(rl *routev3.RateLimit) []string {
	out := make([]string, 0, len(rl.GetActions()))
	for _, a := range rl.GetActions() {
		out = append(out, fp(a))
	}
	return out
}

// patchedRateLimits pairs a rate limit that is gone with a new one on the same route when
// one's actions begin with all of the other's: an EnvoyPatchPolicy appended actions on one
// side (to the rule where it was), so the fingerprints differ though the rule is the same.
// A pair is matched as one entity (a move, BTP-03); the rest stay gone or born.
func (d *differ) patchedRateLimits(gone, born []*entity) ([]*entity, []*entity) {
	used := map[*entity]bool{}
	var restGone []*entity
	for _, b := range gone {
		var pair *entity
		if b.kind == "RateLimit" {
			for _, a := range born {
				if !used[a] && a.kind == "RateLimit" && a.parent == b.parent && (isPrefix(a.parts, b.parts) || isPrefix(b.parts, a.parts)) {
					pair = a
					break
				}
			}
		}
		if pair == nil {
			restGone = append(restGone, b)
			continue
		}
		used[pair] = true
		d.matched([]*entity{b}, []*entity{pair})
	}
	var restBorn []*entity
	for _, a := range born {
		if !used[a] {
			restBorn = append(restBorn, a)
		}
	}
	return restGone, restBorn
}

// isPrefix: short is non-empty and long begins with it.
func isPrefix(short, long []string) bool {
	if len(short) == 0 || len(short) > len(long) {
		return false
	}
	for i := range short {
		if short[i] != long[i] {
			return false
		}
	}
	return true
}

func fpAny(a *anypb.Any, m proto.Message) string {
	if m != nil {
		return fp(m)
	}
	return hashBytes(a.GetValue())
}

func hash(s string) string { return hashBytes([]byte(s)) }

func hashBytes(b []byte) string {
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:8])
}

// short renders a small message for before/after (long ones by fingerprint).
func short(m proto.Message, a *anypb.Any) string {
	if m == nil {
		return a.GetTypeUrl() + " " + hashBytes(a.GetValue())
	}
	b, err := result.MarshalResource(m)
	if err != nil {
		return fp(m)
	}
	s := string(b)
	if len(s) > 200 {
		return s[:160] + "… (" + fp(m) + ")"
	}
	return s
}

// kinds whose appearance or disappearance is reported (the others are parts whose
// container tells the story).
var reportPresence = map[string]bool{"Listener": true, "RouteConfiguration": true, "VirtualHost": true, "Route": true,
	"Cluster": true, "Secret": true, "HTTPFilter": true, "JWTProvider": true, "LuaScript": true, "RateLimit": true,
	"PerFilterConfig": true, "UpstreamTLS": true}

func (d *differ) xds() {
	be, ae := d.collect(d.before), d.collect(d.after)
	group := func(es []*entity) (map[string][]*entity, []string) {
		m := map[string][]*entity{}
		var keys []string
		for _, e := range es {
			k := e.key()
			if _, ok := m[k]; !ok {
				keys = append(keys, k)
			}
			m[k] = append(m[k], e)
		}
		return m, keys
	}
	bg, bkeys := group(be)
	ag, akeys := group(ae)
	keys := append(bkeys, akeys...)
	sort.Strings(keys)
	var gone, born []*entity
	for i, k := range keys {
		if i > 0 && keys[i-1] == k {
			continue
		}
		bs, as := bg[k], ag[k]
		switch {
		case len(as) == 0:
			for _, b := range bs {
				if reportPresence[b.kind] && (b.parent == "" || len(ag[b.parent]) > 0) {
					gone = append(gone, b)
				}
			}
		case len(bs) == 0:
			for _, a := range as {
				if reportPresence[a.kind] && (a.parent == "" || len(bg[a.parent]) > 0) {
					born = append(born, a)
				}
			}
		default:
			d.matched(bs, as)
		}
	}
	gone, born = d.patchedRateLimits(gone, born)
	// An HTTP filter is identified by its config: one that keeps its name and place but
	// changes its config is a change, not a removal and an addition.
	reconfigured := map[string]*entity{}
	for _, a := range born {
		if a.kind == "HTTPFilter" {
			reconfigured[a.label()] = a
		}
	}
	paired := map[*entity]bool{}
	for _, b := range gone {
		if a := reconfigured[b.label()]; a != nil && b.kind == "HTTPFilter" && !paired[a] {
			paired[a] = true
			d.addEntity(ShapeChanged, b, []string{b.kind}, b.text+" "+a.text, fmt.Sprintf("HTTPFilter %s changes its config (%s)", a.name, a.where),
				"config "+b.shape, "config "+a.shape, &XDSRef{Type: b.res.typ, Before: b.res.name, After: a.res.name})
			continue
		}
		d.addEntity(Removed, b, []string{b.kind}, b.text+" "+b.name, fmt.Sprintf("%s %s is no longer generated", b.kind, b.nameAt()),
			b.nameAt(), "absent", &XDSRef{Type: b.res.typ, Before: b.res.name, After: d.counterpart(ag, b)})
	}
	for _, a := range born {
		if paired[a] {
			continue
		}
		d.addEntity(Added, a, []string{a.kind}, a.text+" "+a.name, fmt.Sprintf("new %s %s", a.kind, a.nameAt()),
			"absent", a.nameAt(), &XDSRef{Type: a.res.typ, Before: d.counterpart(bg, a), After: a.res.name})
	}
}

// counterpart names the resource on the other side that holds the container of e, for
// the side-by-side view of an addition or removal inside a resource that stays.
func (d *differ) counterpart(other map[string][]*entity, e *entity) string {
	if e.parent == "" {
		return ""
	}
	if os := other[e.parent]; len(os) > 0 {
		return os[0].res.name
	}
	return ""
}

// matched compares the entities of one identity: names and places, then shapes. An entity
// without a counterpart of the same name and place is renamed (or moved) to one that is
// new on the other side; when there is none left, it is gone. New entities nobody was
// renamed to are additions.
func (d *differ) matched(bs, as []*entity) {
	alabels := map[string]*entity{}
	for _, a := range as {
		alabels[a.label()] = a
	}
	blabels := map[string]bool{}
	for _, b := range bs {
		blabels[b.label()] = true
	}
	used := map[*entity]bool{}
	for _, b := range bs {
		if a := alabels[b.label()]; a != nil {
			used[a] = true
		}
	}
	for _, b := range bs {
		a := alabels[b.label()]
		if a == nil {
			// The counterpart: the same name elsewhere (a move), else a new label.
			for _, x := range as {
				if x.name == b.name && !blabels[x.label()] {
					a = x
					break
				}
			}
			if a == nil {
				for _, x := range as {
					if !blabels[x.label()] && (a == nil || (used[a] && !used[x])) {
						a = x
					}
				}
			}
			if a == nil {
				if reportPresence[b.kind] {
					d.addEntity(Removed, b, []string{b.kind}, b.text+" "+b.name, fmt.Sprintf("%s %s is no longer generated", b.kind, b.nameAt()),
						b.nameAt(), "absent", &XDSRef{Type: b.res.typ, Before: b.res.name})
				}
				continue
			}
			used[a] = true
			change, summary := Renamed, fmt.Sprintf("%s renamed: %s → %s", b.kind, b.name, a.name)
			if a.name == b.name {
				change, summary = Moved, fmt.Sprintf("%s moved: %s → %s", b.kind, b.where, a.where)
			}
			text := b.identity + " | " + b.text + " " + a.text + " " + b.name + " " + a.name
			d.addEntity(change, moveOwner(b, a), []string{b.kind}, text, summary, b.nameAt(), a.nameAt(),
				&XDSRef{Type: b.res.typ, Before: b.res.name, After: a.res.name})
			id := d.findings[len(d.findings)-1].ID
			if b.name != "" && b.name != a.name {
				d.renames[b.name] = id
			}
			if b.res.name != a.res.name && b.res.typ == a.res.typ {
				d.resRenamed[b.res.typ+"\x00"+b.res.name] = a.res.name
			}
			if change == Moved && b.text != "" {
				d.movedKeys[b.res.name] = append(d.movedKeys[b.res.name], keyID{key: b.text, id: id})
			}
		}
		if b.shape != a.shape && b.shape != "" && a.shape != "" {
			change := ShapeChanged
			summary := fmt.Sprintf("%s %s changes: %s → %s", b.kind, a.name, b.shape, a.shape)
			if b.kind == "Route" && b.shape == "forwards" && strings.HasPrefix(a.shape, "answers") {
				change = FailClosed
				summary = fmt.Sprintf("route %s no longer forwards: it %s (fails closed)", a.name, a.shape)
			}
			d.addEntity(change, a, []string{b.kind}, b.shape+" → "+a.shape+" "+a.text, summary, b.shape, a.shape,
				&XDSRef{Type: b.res.typ, Before: b.res.name, After: a.res.name})
		}
	}
	for _, a := range as {
		if !used[a] && reportPresence[a.kind] {
			d.addEntity(Added, a, []string{a.kind}, a.text+" "+a.name, fmt.Sprintf("new %s %s", a.kind, a.nameAt()),
				"absent", a.nameAt(), &XDSRef{Type: a.res.typ, After: a.res.name})
		}
	}
}
