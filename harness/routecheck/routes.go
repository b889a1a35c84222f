package routecheck

import (
	"fmt"
	"regexp"
	"sort"
	"strings"

	routev3 "github.com/envoyproxy/go-control-plane/envoy/config/route/v3"
	"google.golang.org/protobuf/types/known/anypb"
)

type routeTable struct {
	name             string
	err              error
	exact            map[string]*vhostEntry
	suffix           []wildcardGroup // longest first
	prefix           []wildcardGroup // longest first
	def              *vhostEntry
	ignorePort       bool
	vhostHeader      string
	ignorePathParams bool
}

// wildcardGroup holds the wildcard domains whose non-'*' part has length n.
type wildcardGroup struct {
	n int
	m map[string]*vhostEntry
}

type vhostEntry struct {
	name       string
	requireTLS routev3.VirtualHost_TlsRequirementType
	routes     []*route
	err        error // e.g. matcher tree instead of routes
}

type pathKind int

const (
	pathPrefix pathKind = iota
	pathExact
	pathSeparatedPrefix
	pathRegex
	pathConnect
)

type route struct {
	name          string
	kind          pathKind
	value         string // prefix / path; lower-cased when !caseSensitive
	caseSensitive bool
	re            *regexp.Regexp
	grpc          bool
	headers       []headerMatcher
	query         []queryMatcher
	cookies       []cookieMatcher
	tlsPresented  *bool
	tlsValidated  *bool
	act           action
	err           error // evaluating this route is not supported
	// perFilter is the route's typed_per_filter_config, by filter name.
	perFilter map[string]*anypb.Any
	// rateLimits are the route action's rate limits (read by ratelimit filters that have
	// no per-route config).
	rateLimits []*routev3.RateLimit
}

func compileRouteConfig(rc *routev3.RouteConfiguration) *routeTable {
	table := &routeTable{
		name:             rc.GetName(),
		exact:            map[string]*vhostEntry{},
		ignorePort:       rc.GetIgnorePortInHostMatching(),
		vhostHeader:      asciiLower(rc.GetVhostHeader()),
		ignorePathParams: rc.GetIgnorePathParametersInPathMatching(),
	}
	if rc.GetVhds() != nil {
		table.err = fmt.Errorf("%w: route configuration %q uses VHDS", ErrUnsupported, table.name)
		return table
	}
	suffix := map[int]map[string]*vhostEntry{}
	prefix := map[int]map[string]*vhostEntry{}
	for _, v := range rc.GetVirtualHosts() {
		vh := compileVhost(table.name, v)
		for _, d := range v.GetDomains() {
			d = asciiLower(d)
			dup := false
			switch {
			case d == "*":
				dup = table.def != nil
				table.def = vh
			case strings.HasPrefix(d, "*"):
				dup = addWildcard(suffix, d[1:], vh)
			case strings.HasSuffix(d, "*"):
				dup = addWildcard(prefix, d[:len(d)-1], vh)
			default:
				_, dup = table.exact[d]
				table.exact[d] = vh
			}
			if dup {
				// Envoy rejects the whole route configuration.
				table.err = fmt.Errorf("%w: route configuration %q: domain %q appears in more than one virtual host",
					ErrInvalidConfig, table.name, d)
				return table
			}
		}
	}
	table.suffix = sortGroups(suffix)
	table.prefix = sortGroups(prefix)
	return table
}

func addWildcard(groups map[int]map[string]*vhostEntry, key string, vh *vhostEntry) bool {
	g := groups[len(key)]
	if g == nil {
		g = map[string]*vhostEntry{}
		groups[len(key)] = g
	}
	if _, dup := g[key]; dup {
		return true
	}
	g[key] = vh
	return false
}

func sortGroups(groups map[int]map[string]*vhostEntry) []wildcardGroup {
	out := make([]wildcardGroup, 0, len(groups))
	for n, m := range groups {
		out = append(out, wildcardGroup{n, m})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].n > out[j].n })
	return out
}

func compileVhost(rcName string, v *routev3.VirtualHost) *vhostEntry {
	vh := &vhostEntry{name: v.GetName(), requireTLS: v.GetRequireTls()}
	if v.GetMatcher() != nil {
		vh.err = fmt.Errorf("%w: route configuration %q virtual host %q uses a matcher tree", ErrUnsupported, rcName, vh.name)
		return vh
	}
	for i, r := range v.GetRoutes() {
		vh.routes = append(vh.routes, compileRoute(rcName, vh.name, i, r))
	}
	return vh
}

func compileRoute(rcName, vhName string, index int, r *routev3.Route) *route {
	rr := &route{name: r.GetName(), caseSensitive: true, perFilter: r.GetTypedPerFilterConfig(),
		rateLimits: r.GetRoute().GetRateLimits()}
	where := fmt.Sprintf("route configuration %q virtual host %q route %q (#%d)", rcName, vhName, r.GetName(), index)
	fail := func(sentinel error, format string, args ...any) *route {
		rr.err = fmt.Errorf("%w: %s: %s", sentinel, where, fmt.Sprintf(format, args...))
		return rr
	}
	m := r.GetMatch()
	if m == nil {
		return fail(ErrInvalidConfig, "no match")
	}
	if cs := m.GetCaseSensitive(); cs != nil {
		rr.caseSensitive = cs.GetValue()
	}
	lower := func(s string) string {
		if rr.caseSensitive {
			return s
		}
		return asciiLower(s)
	}
	switch ps := m.GetPathSpecifier().(type) {
	case *routev3.RouteMatch_Prefix:
		rr.kind, rr.value = pathPrefix, lower(ps.Prefix)
	case *routev3.RouteMatch_Path:
		rr.kind, rr.value = pathExact, lower(ps.Path)
	case *routev3.RouteMatch_PathSeparatedPrefix:
		rr.kind, rr.value = pathSeparatedPrefix, lower(ps.PathSeparatedPrefix)
	case *routev3.RouteMatch_SafeRegex:
		re, err := compileFullRegex(ps.SafeRegex.GetRegex())
		if err != nil {
			return fail(ErrInvalidConfig, "safe_regex: %v", err)
		}
		rr.kind, rr.re = pathRegex, re
	case *routev3.RouteMatch_ConnectMatcher_:
		rr.kind = pathConnect
	case *routev3.RouteMatch_PathMatchPolicy:
		return fail(ErrUnsupported, "path_match_policy (URI template) is not evaluated")
	default:
		return fail(ErrInvalidConfig, "no path specifier")
	}
	rr.grpc = m.GetGrpc() != nil
	for _, h := range m.GetHeaders() {
		headerMatch, err := compileHeaderMatcher(h)
		if err != nil {
			return fail(ErrInvalidConfig, "header %q: %v", h.GetName(), err)
		}
		rr.headers = append(rr.headers, headerMatch)
	}
	for _, q := range m.GetQueryParameters() {
		queryMatch, err := compileQueryMatcher(q)
		if err != nil {
			return fail(ErrInvalidConfig, "query parameter %q: %v", q.GetName(), err)
		}
		rr.query = append(rr.query, queryMatch)
	}
	for _, c := range m.GetCookies() {
		stringMatch, err := compileStringMatcher(c.GetStringMatch())
		if err != nil {
			return fail(ErrInvalidConfig, "cookie %q: %v", c.GetName(), err)
		}
		rr.cookies = append(rr.cookies, cookieMatcher{name: c.GetName(), m: stringMatch, invert: c.GetInvertMatch()})
	}
	if tlsContext := m.GetTlsContext(); tlsContext != nil {
		if p := tlsContext.GetPresented(); p != nil {
			v := p.GetValue()
			rr.tlsPresented = &v
		}
		if p := tlsContext.GetValidated(); p != nil {
			v := p.GetValue()
			rr.tlsValidated = &v
		}
	}
	if len(m.GetDynamicMetadata()) > 0 {
		return fail(ErrUnsupported, "dynamic_metadata matchers are not evaluated")
	}
	if len(m.GetFilterState()) > 0 {
		return fail(ErrUnsupported, "filter_state matchers are not evaluated")
	}
	act, err := compileAction(r)
	if err != nil {
		return fail(ErrUnsupported, "%v", err)
	}
	rr.act = act
	return rr
}

// compileFullRegex anchors an RE2 pattern so it must match the whole input,
// like RE2::FullMatch.
func compileFullRegex(expr string) (*regexp.Regexp, error) {
	return regexp.Compile(`^(?:` + expr + `)$`)
}

// findVhost implements RouteMatcher::findVirtualHost. A "host:port" value is
// tried as-is against exact and wildcard domains, then without the port, and
// only then falls back to the "*" virtual host.
func (table *routeTable) findVhost(state *requestState) *vhostEntry {
	if len(table.exact) == 0 && len(table.suffix) == 0 && len(table.prefix) == 0 {
		return table.def
	}
	host := state.host
	if table.vhostHeader != "" {
		v, ok := state.headers[table.vhostHeader]
		if !ok || v == "" {
			return nil
		}
		host = v
	} else if host == "" {
		return nil
	}
	if table.ignorePort {
		if i := portStart(host); i >= 0 {
			host = host[:i]
		}
	}
	host = asciiLower(host)
	if vh := table.findNonDefault(host); vh != nil {
		return vh
	}
	if i := portStart(host); i >= 0 {
		if vh := table.findNonDefault(host[:i]); vh != nil {
			return vh
		}
	}
	return table.def
}

func (table *routeTable) findNonDefault(host string) *vhostEntry {
	if vh, ok := table.exact[host]; ok {
		return vh
	}
	// ">=" keeps the wildcard from matching an empty label: "*.foo.com" must
	// not match "foo.com" nor ".foo.com".
	for _, g := range table.suffix {
		if g.n >= len(host) {
			continue
		}
		if vh, ok := g.m[host[len(host)-g.n:]]; ok {
			return vh
		}
	}
	for _, g := range table.prefix {
		if g.n >= len(host) {
			continue
		}
		if vh, ok := g.m[host[:g.n]]; ok {
			return vh
		}
	}
	return nil
}

func (table *routeTable) route(state *requestState, ans Answer) (Answer, error) {
	vh := table.findVhost(state)
	if vh == nil {
		ans.Status = 404
		return ans, nil
	}
	ans.VirtualHost = vh.name
	if vh.err != nil {
		return ans, vh.err
	}
	// VirtualHostImpl::getRouteFromEntries: TLS requirement comes first.
	if (vh.requireTLS == routev3.VirtualHost_ALL && state.xfp != "https") ||
		(vh.requireTLS == routev3.VirtualHost_EXTERNAL_ONLY && state.xfp != "https" &&
			state.headers["x-envoy-internal"] != "true") {
		ans.Matched = true
		ans.Status = 301
		ans.Location = "https://" + state.host + state.path
		return ans, nil
	}
	matchPath := state.path
	if table.ignorePathParams {
		if i := strings.IndexByte(matchPath, ';'); i >= 0 {
			matchPath = matchPath[:i]
		}
	}
	pathOnly, _ := splitPath(matchPath)
	lowerPath := ""
	for _, r := range vh.routes {
		if r.err != nil {
			return ans, r.err
		}
		p := pathOnly
		if !r.caseSensitive && r.kind != pathRegex {
			if lowerPath == "" {
				lowerPath = asciiLower(pathOnly)
			}
			p = lowerPath
		}
		matched, err := r.matches(state, p)
		if err != nil {
			return ans, err
		}
		if !matched {
			continue
		}
		ans.Matched = true
		ans.Route = r.name
		state.matched, state.matchedAns = r, ans
		return r.act.apply(state, r, ans)
	}
	ans.Status = 404
	return ans, nil
}

func (r *route) matches(state *requestState, p string) (bool, error) {
	// RouteEntryImplBase::matchRoute runs before the path check; the order
	// does not change the result, only which checks are skipped.
	if r.grpc && !isGRPC(state.headers["content-type"]) {
		return false, nil
	}
	for i := range r.headers {
		if !r.headers[i].matches(state.headers) {
			return false, nil
		}
	}
	if len(r.query) > 0 {
		q := parseQuery(state.path)
		for i := range r.query {
			if !r.query[i].matches(q) {
				return false, nil
			}
		}
	}
	for i := range r.cookies {
		if !r.cookies[i].matches(state.headers["cookie"]) {
			return false, nil
		}
	}
	// No client certificate is modelled: presented/validated are false.
	if r.tlsPresented != nil && *r.tlsPresented {
		return false, nil
	}
	if r.tlsValidated != nil && *r.tlsValidated {
		return false, nil
	}
	switch r.kind {
	case pathPrefix:
		return strings.HasPrefix(p, r.value), nil
	case pathExact:
		return p == r.value, nil
	case pathSeparatedPrefix:
		return strings.HasPrefix(p, r.value) && (len(p) == len(r.value) || p[len(r.value)] == '/'), nil
	case pathRegex:
		return r.re.MatchString(p), nil
	case pathConnect:
		return state.method == "CONNECT" || strings.EqualFold(state.headers["upgrade"], "connect-udp"), nil
	}
	return false, nil
}

// isGRPC mirrors Grpc::Common::hasGrpcContentType: exactly application/grpc
// or application/grpc+suffix (application/grpc-web is not gRPC).
func isGRPC(ct string) bool {
	const g = "application/grpc"
	return strings.HasPrefix(ct, g) && (len(ct) == len(g) || ct[len(g)] == '+')
}

// parseQuery mirrors QueryParamsMulti::parseQueryString: split on '&', first
// '=' separates name and value, no percent-decoding, first value wins.
func parseQuery(path string) map[string]string {
	i := strings.IndexByte(path, '?')
	if i < 0 {
		return nil
	}
	q := map[string]string{}
	for _, kv := range strings.Split(path[i+1:], "&") {
		k, v, _ := strings.Cut(kv, "=")
		if _, ok := q[k]; !ok {
			q[k] = v
		}
	}
	return q
}
