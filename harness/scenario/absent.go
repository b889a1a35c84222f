package scenario

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"

	egv1a1 "github.com/envoyproxy/gateway/api/v1alpha1"
	gwapiv1 "sigs.k8s.io/gateway-api/apis/v1"
)

// An `absent: true` xds expectation passes whenever the name is missing, so a typo or a
// renamed scheme makes it pass for the wrong reason. checkAbsentNames refuses an absent
// name that fits no name the translator can produce for the scenario: it must match one
// of its kind's name templates below (EG v1.9's default scheme, the XDSNameSchemeV2 one,
// and the v1.8 names the upgrade scenarios check are gone), and every object the template
// names must be among the scenario's objects (a route rule must exist in its route, a
// listener in its Gateway or ListenerSet). A name an EnvoyPatchPolicy of the scenario
// writes (a patch's value with that "name") also fits. docs/checks.md has the rule.

// objIndex is what the templates look up among the scenario's objects.
type objIndex struct {
	objs      map[string]bool            // "Kind/ns/name" (lower-case kind) and "Kind//name"
	listeners map[string]map[string]bool // "ns/gw" and "ns/gw/lsns/ls" → listener names
	rules     map[string]int             // "httproute/ns/name" → number of rules
	patched   map[string]bool            // names EnvoyPatchPolicy values write
}

func newObjIndex(s *Scenario) *objIndex {
	index := &objIndex{objs: map[string]bool{}, listeners: map[string]map[string]bool{}, rules: map[string]int{},
		patched: map[string]bool{}}
	addListeners := func(key string, names []string) {
		if index.listeners[key] == nil {
			index.listeners[key] = map[string]bool{}
		}
		for _, n := range names {
			index.listeners[key][n] = true
		}
	}
	for _, o := range s.Objects {
		r := o.Ref()
		index.objs[strings.ToLower(r.Kind)+"/"+r.Namespace+"/"+r.Name] = true
		switch v := o.Obj.(type) {
		case *gwapiv1.Gateway:
			var names []string
			for _, l := range v.Spec.Listeners {
				names = append(names, string(l.Name))
			}
			addListeners(v.Namespace+"/"+v.Name, names)
		case *gwapiv1.ListenerSet:
			gwNS := v.Namespace
			if v.Spec.ParentRef.Namespace != nil {
				gwNS = string(*v.Spec.ParentRef.Namespace)
			}
			var names []string
			for _, l := range v.Spec.Listeners {
				names = append(names, string(l.Name))
			}
			addListeners(gwNS+"/"+string(v.Spec.ParentRef.Name)+"/"+v.Namespace+"/"+v.Name, names)
		case *gwapiv1.HTTPRoute:
			index.rules["httproute/"+v.Namespace+"/"+v.Name] = len(v.Spec.Rules)
		case *gwapiv1.GRPCRoute:
			index.rules["grpcroute/"+v.Namespace+"/"+v.Name] = len(v.Spec.Rules)
		}
		if epp, ok := o.Obj.(*egv1a1.EnvoyPatchPolicy); ok {
			// Any "name" a patch's value sets may be the name of a resource it adds (the
			// names patches target are not: an absent check on one is what a miss shows).
			for _, jp := range epp.Spec.JSONPatches {
				if v := jp.Operation.Value; v != nil {
					for _, m := range patchNameRE.FindAllSubmatch(v.Raw, -1) {
						index.patched[string(m[1])] = true
					}
				}
			}
		}
	}
	return index
}

var patchNameRE = regexp.MustCompile(`"name"\s*:\s*"([^"]+)"`)

func (index *objIndex) has(kind, ns, name string) bool {
	return index.objs[strings.ToLower(kind)+"/"+ns+"/"+name]
}

// listener: <gw ns>/<gw>/<listener> or <gw ns>/<gw>/<ls ns>/<ls>/<listener>, of an object
// of the scenario.
func (index *objIndex) listener(name string) bool {
	i := strings.LastIndexByte(name, '/')
	if i < 0 {
		return false
	}
	return index.listeners[name[:i]][name[i+1:]]
}

// routeRule: <kind>/<ns>/<name>/rule/<i> of an xRoute of the scenario (i < its rules for
// HTTP and gRPC routes; -1 for the L4 routes' single rule).
func (index *objIndex) routeRule(kind, ns, name, idx string) bool {
	kinds := map[string]string{"httproute": "HTTPRoute", "grpcroute": "GRPCRoute", "tcproute": "TCPRoute",
		"udproute": "UDPRoute", "tlsroute": "TLSRoute"}
	k, ok := kinds[kind]
	if !ok || !index.has(k, ns, name) {
		return false
	}
	i, err := strconv.Atoi(idx)
	if err != nil {
		return false
	}
	if n, counted := index.rules[kind+"/"+ns+"/"+name]; counted {
		return i >= 0 && i < n
	}
	return i == -1
}

const seg = `([^/]+)`

var (
	reV2Listener = regexp.MustCompile(`^(tcp|udp|http)-[0-9]+$`)
	reReady      = regexp.MustCompile(`^envoy-gateway-proxy-ready-(0\.0\.0\.0|::)-19003$`)
	reRouteRule  = regexp.MustCompile(
		`^(httproute|grpcroute|tcproute|udproute|tlsroute)/` + seg + `/` + seg + `/rule/(-?[0-9]+)`)
	reL4Route     = regexp.MustCompile(`^(tcproute|udproute|tlsroute)/` + seg + `/` + seg + `$`)
	rePolicyOwned = regexp.MustCompile(
		`^(securitypolicy|envoyextensionpolicy|backendtrafficpolicy|clienttrafficpolicy|httproutefilter)/` +
			seg + `/` + seg + `(/.*)?$`)
	reSDSCluster = regexp.MustCompile(`^sds_.*_[0-9a-f]{32}$`)
	reHostPort   = regexp.MustCompile(`^[a-z0-9_.-]+_[0-9]+$`)
	reFilterName = regexp.MustCompile(`^envoy\.filters\.(http|network)\.[a-z0-9_]+(\.(gzip|brotli|zstd))?$`)
	reSlotFilter = regexp.MustCompile(`^envoy\.filters\.http\.[a-z0-9_]+/([0-9]+|request|response)$`)
	reHost       = regexp.MustCompile(`^[*a-z0-9_-]+(\.?[a-z0-9_-]+)*$|^\*$`)
	reMirror     = regexp.MustCompile(`^-mirror-[0-9]+$`)
	reBackend    = regexp.MustCompile(`^/backend/-?[0-9]+$`)
	reMatch      = regexp.MustCompile(`^/match/[0-9]+/([^/]+)(/[^/]+)?$`)
)

// fixedNames are names EG gives resources that no object names.
var fixedNames = map[string]bool{
	"system_ca_certificates": true, "ratelimit_cluster": true, "wasm_cluster": true, "EmptyCluster": true,
	"envoy.filters.http.router": true,
}

// fits reports whether name could be a kind resource's name for this scenario.
func (index *objIndex) fits(kind, name string) bool {
	if fixedNames[name] || index.patched[name] {
		return true
	}
	switch kind {
	case KindListener, KindRouteConfig:
		// an HTTP/3 listener is its TCP listener's name with -quic
		return index.listener(name) || index.listener(strings.TrimSuffix(name, "-quic")) || reV2Listener.MatchString(name) ||
			(kind == KindListener && reReady.MatchString(name))
	case KindFilterChain:
		return index.listener(name) || index.routeName(name) || reV2Listener.MatchString(name)
	case KindVirtualHost:
		i := strings.LastIndexByte(name, '/')
		if i < 0 {
			return reHost.MatchString(name) // V2: the host alone
		}
		return (index.listener(name[:i]) || reV2Listener.MatchString(name[:i])) && reHost.MatchString(name[i+1:])
	case KindRoute, KindJWTRequirement, KindJWTProvider:
		return index.routeName(name) || (kind != KindRoute && !strings.Contains(name, "/"))
	case KindCluster, KindLoadAssign:
		return index.routeName(name) || index.policyOwned(name) || reSDSCluster.MatchString(name) ||
			reHostPort.MatchString(name)
	case KindSecret:
		return index.secretName(name)
	case KindHTTPFilter, KindRouteFilter, KindNetworkFilter:
		if reFilterName.MatchString(name) || reSlotFilter.MatchString(name) {
			return true
		}
		base, rest, ok := strings.Cut(name, "/")
		if !ok || !reFilterName.MatchString(base) {
			return false
		}
		if index.policyOwned(rest) {
			return true
		}
		// envoy.filters.http.ratelimit/<policy ns>/<policy name>
		parts := strings.Split(rest, "/")
		return len(parts) == 2 && index.has("BackendTrafficPolicy", parts[0], parts[1])
	}
	return false
}

// routeName: a route rule's cluster (…/rule/<i>[-mirror-<k>][/backend/<j>]), route
// (…/rule/<i>/match/<j>/<host>), an L4 route's chain or cluster, or a v1.8 JWT key under
// a route name.
func (index *objIndex) routeName(name string) bool {
	if m := reL4Route.FindStringSubmatch(name); m != nil {
		return index.routeRule(m[1], m[2], m[3], "-1")
	}
	m := reRouteRule.FindStringSubmatch(name)
	if m == nil || !index.routeRule(m[1], m[2], m[3], m[4]) {
		return false
	}
	rest := name[len(m[0]):]
	switch {
	case rest == "":
		return true
	case reMirror.MatchString(rest):
		return true
	case reBackend.MatchString(rest):
		return true
	}
	mm := reMatch.FindStringSubmatch(rest)
	return mm != nil && reHost.MatchString(mm[1])
}

// policyOwned: <policy kind>/<ns>/<name>[/...] of a policy (or HTTPRouteFilter) of the
// scenario: ext_authz, ext_proc, OIDC, Lua and dynamic module names.
func (index *objIndex) policyOwned(name string) bool {
	m := rePolicyOwned.FindStringSubmatch(name)
	if m == nil {
		return false
	}
	kinds := map[string]string{"securitypolicy": "SecurityPolicy", "envoyextensionpolicy": "EnvoyExtensionPolicy",
		"backendtrafficpolicy": "BackendTrafficPolicy", "clienttrafficpolicy": "ClientTrafficPolicy",
		"httproutefilter": "HTTPRouteFilter"}
	return index.has(kinds[m[1]], m[2], m[3])
}

// secretName: a listener certificate <ns>/<Secret>, a client-validation CA
// <ns>/<name>/ca.crt, a per-resource CA <policy or Backend>/<ns>-ca, or a policy's
// generated secret (oauth2/client_secret/securitypolicy/<ns>/<name>,
// credential_injector/credential/httproutefilter/<ns>/<name>, ...).
func (index *objIndex) secretName(name string) bool {
	parts := strings.Split(name, "/")
	switch {
	case len(parts) == 2 && (index.has("Secret", parts[0], parts[1]) || index.has("ConfigMap", parts[0], parts[1])):
		return true
	case len(parts) == 2 && strings.HasSuffix(parts[1], "-ca"):
		ns := strings.TrimSuffix(parts[1], "-ca")
		return index.has("BackendTLSPolicy", ns, parts[0]) || index.has("Backend", ns, parts[0])
	case len(parts) == 5 && parts[0] == "gateway" && parts[4] == "ca.crt":
		// a Gateway's frontend (backend-side) validation CA: gateway/<ns>/<gw>/<port|default>/ca.crt
		return index.has("Gateway", parts[1], parts[2])
	case len(parts) == 3 && parts[2] == "ca.crt":
		return index.has("ClientTrafficPolicy", parts[0], parts[1]) || index.has("Secret", parts[0], parts[1]) ||
			index.has("ConfigMap", parts[0], parts[1])
	}
	for i := range parts {
		if index.policyOwned(strings.Join(parts[i:], "/")) {
			return true
		}
	}
	return false
}

// checkAbsentNames refuses absent xds names that fit no name of their kind.
func checkAbsentNames(s *Scenario, k string, e Expect, index *objIndex, addf func(int, string, ...any)) {
	for i, x := range e.XDS {
		if !x.Absent || x.Name == "" || !contains(XDSKinds, x.Kind) || index.fits(x.Kind, x.Name) {
			continue
		}
		p := fmt.Sprintf("%s.xds[%d]", k, i)
		addf(s.Line(p+".name"),
			"%s: absent %s %q fits no name the translator can produce for this scenario's objects (a typo or an old scheme "+
				"passes any absent check; see docs/checks.md)",
			p, x.Kind, x.Name)
	}
}
