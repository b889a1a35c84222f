package upgrade

import (
	"encoding/json"
	"sort"
	"strings"

	egv1a1 "github.com/envoyproxy/gateway/api/v1alpha1"
	routev3 "github.com/envoyproxy/go-control-plane/envoy/config/route/v3"
	gwapiv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/egharness/egharness/translator/resource"
)

// Attribution: a finding about a piece of xDS is reported on the object the user must
// change, the policy that configures it (the SecurityPolicy defining the JWT provider, the
// BackendTrafficPolicy with the rate limit rules, the EnvoyExtensionPolicy holding the Lua
// script), with the route and Gateway it affects as context. Where no policy is found the
// finding stays on the route or Gateway the xDS belongs to.

// features of policies that produce xDS entities, by the name attribute.go gives them.
const (
	featJWT       = "jwt"
	featRateLimit = "ratelimit"
	featLua       = "lua"
)

// featureOf is the policy feature an entity comes from, or "".
func featureOf(e *entity) string {
	switch {
	case e.kind == "JWTProvider" || strings.Contains(e.text, "jwt_authn"):
		return featJWT
	case e.kind == "RateLimit" || strings.Contains(e.text, "filters.http.ratelimit"):
		return featRateLimit
	case e.kind == "Cluster" && e.name == "ratelimit_cluster":
		// The rate limit service's cluster exists for the policies with global rate limits.
		return featRateLimit
	case e.kind == "LuaScript" || strings.Contains(e.text, "filters.http.lua"):
		return featLua
	}
	return ""
}

// policyHas reports whether o is a policy configuring feat; for JWT, name (an xDS provider
// name, "" for any) must be one of its providers.
func policyHas(o resource.Object, feat, name string) bool {
	switch feat {
	case featJWT:
		sp, ok := o.Obj.(*egv1a1.SecurityPolicy)
		if !ok || sp.Spec.JWT == nil {
			return false
		}
		if name == "" {
			return true
		}
		for _, p := range sp.Spec.JWT.Providers {
			if providerNamed(p.Name, name) {
				return true
			}
		}
		return false
	case featRateLimit:
		btp, ok := o.Obj.(*egv1a1.BackendTrafficPolicy)
		return ok && btp.Spec.RateLimit != nil
	case featLua:
		eep, ok := o.Obj.(*egv1a1.EnvoyExtensionPolicy)
		return ok && len(eep.Spec.Lua) > 0
	}
	return false
}

// providerNamed reports whether the xDS name of a JWT provider is provider's: v1.8 keys it
// ".../<route rule match>/<provider>", v1.9 "<provider>_<hash>".
func providerNamed(provider, xdsName string) bool {
	if provider == "" {
		return false
	}
	if xdsName == provider || strings.HasSuffix(xdsName, "/"+provider) {
		return true
	}
	rest, ok := strings.CutPrefix(xdsName, provider+"_")
	return ok && rest != "" && !strings.Contains(rest, "_")
}

// namedPolicy reads a policy from an xDS name that carries it: a shared rate limit's
// filter and per-route key is "envoy.filters.http.ratelimit/<namespace>/<policy>".
func (d *differ) namedPolicy(feat, name string) (resource.Ref, bool) {
	if feat != featRateLimit {
		return resource.Ref{}, false
	}
	parts := strings.Split(name, "/")
	if len(parts) != 3 || !strings.HasSuffix(parts[0], "filters.http.ratelimit") {
		return resource.Ref{}, false
	}
	ref := resource.Ref{Kind: "BackendTrafficPolicy", Namespace: parts[1], Name: parts[2]}
	_, ok := d.objects[ref]
	return ref, ok
}

// policiesFor finds the policies that configure feat for route (on Gateway gw): the ones
// the xDS name names, else those targeting the route (the most specific, as EG applies
// them), else those targeting the Gateway, else, for xDS of the whole Gateway (no route),
// those targeting any route attached to it, else (a JWT provider) the SecurityPolicy of the
// namespace that defines a provider of that name. Sorted; nil when none.
func (d *differ) policiesFor(feat, name string, route, gw resource.Ref) []resource.Ref {
	if ref, ok := d.namedPolicy(feat, name); ok {
		return []resource.Ref{ref}
	}
	jwtName := ""
	if feat == featJWT {
		jwtName = name
	}
	pick := func(scope []resource.Ref) []resource.Ref {
		seen := map[resource.Ref]bool{}
		var out []resource.Ref
		for _, s := range scope {
			for _, p := range d.targets[s] {
				if o, ok := d.objects[p]; ok && !seen[p] && policyHas(o, feat, jwtName) {
					seen[p] = true
					out = append(out, p)
				}
			}
		}
		sort.Slice(out, func(i, j int) bool { return out[i].Less(out[j]) })
		return out
	}
	var scopes [][]resource.Ref
	if route != (resource.Ref{}) {
		scopes = append(scopes, []resource.Ref{route})
	}
	if gw != (resource.Ref{}) {
		scopes = append(scopes, []resource.Ref{gw})
		if route == (resource.Ref{}) {
			scopes = append(scopes, d.routesOn(gw))
		}
	}
	for _, s := range scopes {
		if ps := pick(s); len(ps) > 0 {
			return ps
		}
	}
	// A provider's name is specific enough to find its SecurityPolicy in the namespace even
	// when the targets could not be followed (a selector across namespaces, a ListenerSet).
	if jwtName != "" {
		ns := route.Namespace
		if ns == "" {
			ns = gw.Namespace
		}
		var out []resource.Ref
		for ref, o := range d.objects {
			if ref.Namespace == ns && policyHas(o, featJWT, jwtName) {
				out = append(out, ref)
			}
		}
		sort.Slice(out, func(i, j int) bool { return out[i].Less(out[j]) })
		return out
	}
	return nil
}

// routesOn lists the routes whose parentRefs name Gateway gw, sorted.
func (d *differ) routesOn(gw resource.Ref) []resource.Ref {
	if d.gwRoutes == nil {
		d.gwRoutes = map[resource.Ref][]resource.Ref{}
		refs := make([]resource.Ref, 0, len(d.objects))
		for ref := range d.objects {
			refs = append(refs, ref)
		}
		sort.Slice(refs, func(i, j int) bool { return refs[i].Less(refs[j]) })
		for _, ref := range refs {
			for _, p := range routeParents(d.objects[ref]) {
				d.gwRoutes[p] = append(d.gwRoutes[p], ref)
			}
		}
	}
	return d.gwRoutes[gw]
}

// routeParents reads the Gateways a route's spec.parentRefs name (any route kind: they all
// share the shape).
func routeParents(o resource.Object) []resource.Ref {
	if !isRouteKind(o.Kind) {
		return nil
	}
	var spec struct {
		ParentRefs []gwapiv1.ParentReference `json:"parentRefs"`
	}
	if !readSpec(o, &spec) {
		return nil
	}
	var out []resource.Ref
	for _, p := range spec.ParentRefs {
		if p.Kind != nil && *p.Kind != "Gateway" {
			continue
		}
		ns := o.Obj.GetNamespace()
		if p.Namespace != nil && *p.Namespace != "" {
			ns = string(*p.Namespace)
		}
		out = append(out, resource.Ref{Kind: "Gateway", Namespace: ns, Name: string(p.Name)})
	}
	return out
}

func isRouteKind(kind string) bool {
	switch kind {
	case "HTTPRoute", "GRPCRoute", "TLSRoute", "TCPRoute", "UDPRoute":
		return true
	}
	return false
}

// attribute sets who a finding about e goes to: the policies configuring it, with the
// route and Gateway as context; else the route (or Gateway) it belongs to, with the
// Gateway as context. name is the xDS name that may carry the policy or provider.
func (c *collector) attribute(e *entity, name string, route, gw resource.Ref) {
	if !isRouteKind(route.Kind) {
		route = resource.Ref{}
	}
	if gw.Kind != "Gateway" {
		gw = resource.Ref{}
	}
	if feat := featureOf(e); feat != "" {
		if feat == featJWT && e.kind != "JWTProvider" {
			name = "" // a filter or per-route config: the policies of every provider there
		}
		if ps := c.d.policiesFor(feat, name, route, gw); len(ps) > 0 {
			e.owner, e.owners = ps[0], ps
			_, e.named = c.d.namedPolicy(feat, name)
		}
	}
	e.ctx = nil
	for _, r := range []resource.Ref{route, gw} {
		if r != (resource.Ref{}) && r != e.owner && !containsRef(e.owners, r) {
			e.ctx = append(e.ctx, r)
		}
	}
}

func containsRef(list []resource.Ref, r resource.Ref) bool {
	for _, x := range list {
		if x == r {
			return true
		}
	}
	return false
}

// addEntity records a finding about e on each object it is attributed to, with its context.
func (d *differ) addEntity(change Change, e *entity, subjects []string, text, summary, before, after string,
	x *XDSRef) {
	owners := e.owners
	if len(owners) == 0 {
		owners = []resource.Ref{e.owner}
	}
	for _, o := range owners {
		d.add(change, o, subjects, text, summary, before, after, x)
		d.findings[len(d.findings)-1].Context = e.ctx
	}
}

// moveOwner is the entity a move or rename is attributed to: the side whose name says
// which policy it is (a shared rate limit's after side), else the before side.
func moveOwner(b, a *entity) *entity {
	if a.named && !b.named {
		return a
	}
	return b
}

// systemCASecret is the one Secret v1.9 generates for every BackendTLSPolicy that trusts the
// system CA bundle (v1.8 made one per policy).
const systemCASecret = "system_ca_certificates"

// systemCAPolicies lists the BackendTLSPolicies that trust wellKnownCACertificates: System,
// sorted: the objects behind the system CA secret.
func (d *differ) systemCAPolicies() []resource.Ref {
	var out []resource.Ref
	for ref, o := range d.objects {
		p, ok := o.Obj.(*gwapiv1.BackendTLSPolicy)
		if ok && p.Spec.Validation.WellKnownCACertificates != nil &&
			*p.Spec.Validation.WellKnownCACertificates == gwapiv1.WellKnownCACertificatesSystem {
			out = append(out, ref)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Less(out[j]) })
	return out
}

// rateLimitPatchers lists the EnvoyPatchPolicies whose operations made the route action's
// rate limits of route in route configuration rc on this side: operations that hit under
// .../rate_limits of rc, on a route whose policy rate limits are in its typedPerFilterConfig
// (v1.9 and later put no policy rule in the route action then, so those are the patch's).
func (c *collector) rateLimitPatchers(rc string, route *routev3.Route) []resource.Ref {
	if len(route.GetRoute().GetRateLimits()) == 0 {
		return nil
	}
	perRoute := false
	for k := range route.GetTypedPerFilterConfig() {
		if strings.Contains(k, "filters.http.ratelimit") {
			perRoute = true
		}
	}
	if !perRoute {
		return nil
	}
	seen := map[resource.Ref]bool{}
	var out []resource.Ref
	for _, p := range c.res.Patches {
		if !p.Hit || seen[p.Policy] {
			continue
		}
		op, ok := c.d.opOf(p.Policy, p.Operation)
		if ok && strings.HasSuffix(op.typ, "RouteConfiguration") && op.name == rc &&
			strings.Contains(op.path, "/rate_limits") {
			seen[p.Policy] = true
			out = append(out, p.Policy)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Less(out[j]) })
	return out
}

// readSpec reads the object's spec into spec, a shape of the caller's (the parts that all
// the kinds it reads share), through the object's JSON form; false when it does not fit.
func readSpec(o resource.Object, spec any) bool {
	b, err := json.Marshal(o.Obj)
	if err != nil {
		return false
	}
	doc := struct {
		Spec any `json:"spec"`
	}{Spec: spec}
	return json.Unmarshal(b, &doc) == nil
}
