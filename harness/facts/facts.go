// Package facts reduces a translation result to the facts two implementations must agree
// on — resource names, route order per virtual host, route actions, the filters present and
// the conditions of routes, listeners and policies — so that a peer (a released egctl, a
// vendor's implementation) is compared with the reference where it matters, not byte for
// byte: field defaults, ordering inside a resource and messages may differ.
package facts

import (
	"fmt"
	"sort"
	"strings"

	listenerv3 "github.com/envoyproxy/go-control-plane/envoy/config/listener/v3"
	routev3 "github.com/envoyproxy/go-control-plane/envoy/config/route/v3"
	hcmv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/network/http_connection_manager/v3"
	tcpv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/network/tcp_proxy/v3"
	udpv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/udp/udp_proxy/v3"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/anypb"

	"github.com/egharness/egharness/translator/result"
)

// Set maps a fact's key (what it is about) to its value.
type Set map[string]string

// Options leave out what an implementation never produces.
type Options struct {
	NoAdmission bool // no admission facts
	NoSecrets   bool // no xDS secrets
	// NoPatchStatus: no Programmed condition on EnvoyPatchPolicies (EG sets it once the
	// patches are applied to the xDS; egctl prints statuses from before that).
	NoPatchStatus bool
}

// Of extracts the facts of a result.
func Of(res *result.Result, o Options) Set {
	f := Set{}
	if !o.NoAdmission {
		for _, a := range res.Admission {
			if !a.Allowed {
				f["admission "+a.Object.String()] = "refused"
			}
		}
	}
	for _, s := range res.Statuses {
		obj := s.Object.String()
		if len(s.Conditions) > 0 {
			f["status "+obj] = conds(s.Conditions)
		}
		for _, l := range s.Listeners {
			f["status "+obj+" listener "+l.Name] = fmt.Sprintf("attachedRoutes=%d %s", l.AttachedRoutes, conds(l.Conditions))
		}
		for _, p := range s.Parents {
			cs := p.Conditions
			if o.NoPatchStatus && s.Object.Kind == "EnvoyPatchPolicy" {
				cs = nil
				for _, c := range p.Conditions {
					if c.Type != "Programmed" {
						cs = append(cs, c)
					}
				}
			}
			f["status "+obj+" parent "+p.Ref.String()] = conds(cs)
		}
	}
	x := res.XDS
	for _, l := range x.Listeners {
		listener(f, l)
	}
	for _, rc := range x.Routes {
		f["route-config "+rc.GetName()] = "present"
		for _, vh := range rc.GetVirtualHosts() {
			at := rc.GetName() + " " + vh.GetName()
			domains := append([]string(nil), vh.GetDomains()...)
			sort.Strings(domains)
			f["domains "+at] = strings.Join(domains, ", ")
			names := make([]string, 0, len(vh.GetRoutes()))
			for _, r := range vh.GetRoutes() {
				names = append(names, r.GetName())
				f["route-action "+at+" "+r.GetName()] = action(r)
				if fl := routeFilters(r); fl != "" {
					f["route-filters "+at+" "+r.GetName()] = fl
				}
			}
			f["routes "+at] = strings.Join(names, ", ")
		}
	}
	for _, c := range x.Clusters {
		t := c.GetType().String()
		if ct := c.GetClusterType(); ct != nil {
			t = ct.GetName()
		}
		f["cluster "+c.GetName()] = t
	}
	for _, e := range x.Endpoints {
		f["endpoints "+e.GetClusterName()] = "present"
	}
	if !o.NoSecrets {
		for _, s := range x.Secrets {
			f["secret "+s.GetName()] = "present"
		}
	}
	return f
}

// conds is a condition list as type=status/reason, by type; messages are left out.
func conds(cs []result.Condition) string {
	out := make([]string, 0, len(cs))
	for _, c := range cs {
		out = append(out, c.Type+"="+c.Status+"/"+c.Reason)
	}
	sort.Strings(out)
	return strings.Join(out, " ")
}

// listener records a listener's port, and per filter chain its match, network filters and
// HTTP filters.
func listener(f Set, l *listenerv3.Listener) {
	name := l.GetName()
	port := uint32(0)
	if sa := l.GetAddress().GetSocketAddress(); sa != nil {
		port = sa.GetPortValue()
	}
	var lf []string
	for _, x := range l.GetListenerFilters() {
		lf = append(lf, x.GetName())
		if x.GetName() == "envoy.filters.udp_listener.udp_proxy" {
			var u udpv3.UdpProxyConfig
			if x.GetTypedConfig().UnmarshalTo(&u) == nil {
				f["udp-proxy "+name] = "cluster" + udpCluster(&u)
			}
		}
	}
	f["listener "+name] = fmt.Sprintf("port %d; listener filters: %s", port, strings.Join(lf, ", "))
	chains := l.GetFilterChains()
	if d := l.GetDefaultFilterChain(); d != nil {
		chains = append(append([]*listenerv3.FilterChain(nil), chains...), d)
	}
	for i, fc := range chains {
		cn := fc.GetName()
		if cn == "" {
			cn = fmt.Sprintf("#%d", i)
		}
		if fc == l.GetDefaultFilterChain() {
			cn += " (default)"
		}
		at := name + " " + cn
		sni := append([]string(nil), fc.GetFilterChainMatch().GetServerNames()...)
		sort.Strings(sni)
		var nf []string
		for _, x := range fc.GetFilters() {
			desc := x.GetName()
			switch msg := Unpack(x.GetTypedConfig()).(type) {
			case *hcmv3.HttpConnectionManager:
				if rds := msg.GetRds(); rds != nil {
					desc += " (rds " + rds.GetRouteConfigName() + ")"
				}
				var hf []string
				for _, h := range msg.GetHttpFilters() {
					hf = append(hf, h.GetName())
				}
				f["http-filters "+at] = strings.Join(hf, ", ")
			case *tcpv3.TcpProxy:
				desc += " (cluster " + msg.GetCluster() + ")"
			}
			nf = append(nf, desc)
		}
		f["filter-chain "+at] = fmt.Sprintf("sni: %s; filters: %s", strings.Join(sni, ", "), strings.Join(nf, ", "))
	}
}

func udpCluster(u *udpv3.UdpProxyConfig) string {
	var r udpv3.Route
	if a := u.GetMatcher().GetOnNoMatch().GetAction(); a != nil && a.GetTypedConfig().UnmarshalTo(&r) == nil {
		return " " + r.GetCluster()
	}
	return ""
}

// Unpack returns the message inside an Any, or nil when it is not a linked-in type.
func Unpack(a *anypb.Any) proto.Message {
	if a == nil {
		return nil
	}
	m, err := a.UnmarshalNew()
	if err != nil {
		return nil
	}
	return m
}

// action is what a route does: the cluster(s) it forwards to, a redirect or a direct
// response.
func action(r *routev3.Route) string {
	switch a := r.GetAction().(type) {
	case *routev3.Route_Route:
		ra := a.Route
		switch {
		case ra.GetCluster() != "":
			return "cluster " + ra.GetCluster()
		case ra.GetWeightedClusters() != nil:
			var cs []string
			for _, c := range ra.GetWeightedClusters().GetClusters() {
				cs = append(cs, fmt.Sprintf("%s:%d", c.GetName(), c.GetWeight().GetValue()))
			}
			return "weighted " + strings.Join(cs, ", ")
		case ra.GetClusterHeader() != "":
			return "cluster-header " + ra.GetClusterHeader()
		}
		return "route (no cluster)"
	case *routev3.Route_Redirect:
		return "redirect " + compact(a.Redirect)
	case *routev3.Route_DirectResponse:
		body := ""
		if b := a.DirectResponse.GetBody(); b != nil {
			body = " " + compact(b)
		}
		return fmt.Sprintf("direct-response %d%s", a.DirectResponse.GetStatus(), body)
	case nil:
		return "none"
	}
	return fmt.Sprintf("%T", r.GetAction())
}

// routeFilters lists the per-route filter configurations and request changes a route
// carries (names only).
func routeFilters(r *routev3.Route) string {
	var out []string
	for name := range r.GetTypedPerFilterConfig() {
		out = append(out, name)
	}
	sort.Strings(out)
	if ra := r.GetRoute(); ra != nil {
		if len(ra.GetRequestMirrorPolicies()) > 0 {
			out = append(out, fmt.Sprintf("mirror×%d", len(ra.GetRequestMirrorPolicies())))
		}
		if ra.GetPrefixRewrite() != "" || ra.GetRegexRewrite() != nil || ra.GetPathRewrite() != "" {
			out = append(out, "path-rewrite")
		}
		if ra.GetHostRewriteLiteral() != "" || ra.GetHostRewritePathRegex() != nil {
			out = append(out, "host-rewrite")
		}
	}
	if len(r.GetRequestHeadersToAdd()) > 0 || len(r.GetRequestHeadersToRemove()) > 0 {
		out = append(out, "request-headers")
	}
	if len(r.GetResponseHeadersToAdd()) > 0 || len(r.GetResponseHeadersToRemove()) > 0 {
		out = append(out, "response-headers")
	}
	return strings.Join(out, ", ")
}

func compact(m proto.Message) string {
	b, err := protojson.Marshal(m)
	if err != nil {
		return "?"
	}
	return strings.Join(strings.Fields(string(b)), "")
}

// Difference is one fact on which the two results disagree ("" is a missing fact).
type Difference struct {
	Key, Want, Got string
}

func (d Difference) String() string {
	show := func(v string) string {
		if v == "" {
			return "(none)"
		}
		return v
	}
	return fmt.Sprintf("%s\n  reference: %s\n  got:       %s", d.Key, show(d.Want), show(d.Got))
}

// Compare lists the facts on which got differs from want, by key.
func Compare(want, got Set) []Difference {
	keys := map[string]bool{}
	for k := range want {
		keys[k] = true
	}
	for k := range got {
		keys[k] = true
	}
	var out []Difference
	for k := range keys {
		if want[k] != got[k] {
			out = append(out, Difference{Key: k, Want: want[k], Got: got[k]})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Key < out[j].Key })
	return out
}

// Match reports whether a divergence's pattern names key; '*' matches any text.
func Match(pattern, key string) bool {
	parts := strings.Split(pattern, "*")
	if len(parts) == 1 {
		return pattern == key
	}
	if !strings.HasPrefix(key, parts[0]) {
		return false
	}
	key = key[len(parts[0]):]
	for i, p := range parts[1:] {
		last := i == len(parts)-2
		if last {
			return strings.HasSuffix(key, p)
		}
		j := strings.Index(key, p)
		if j < 0 {
			return false
		}
		key = key[j+len(p):]
	}
	return true
}
