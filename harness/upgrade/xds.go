package upgrade

import (
	"fmt"
	"sort"
	"strings"

	// linked in so that walkStrings opens tcp_proxy configs
	_ "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/network/tcp_proxy/v3"

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
				if !used[a] && a.kind == "RateLimit" && a.parent == b.parent &&
					(isPrefix(a.parts, b.parts) || isPrefix(b.parts, a.parts)) {
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
			d.addEntity(ShapeChanged, b, []string{b.kind}, b.text+" "+a.text,
				fmt.Sprintf("HTTPFilter %s changes its config (%s)", a.name, a.where),
				"config "+b.shape, "config "+a.shape, &XDSRef{Type: b.res.typ, Before: b.res.name, After: a.res.name})
			continue
		}
		d.addEntity(Removed, b, []string{b.kind}, b.text+" "+b.name,
			fmt.Sprintf("%s %s is no longer generated", b.kind, b.nameAt()),
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
					d.addEntity(Removed, b, []string{b.kind}, b.text+" "+b.name,
						fmt.Sprintf("%s %s is no longer generated", b.kind, b.nameAt()),
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
