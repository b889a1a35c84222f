package routecheck

import (
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"

	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	routev3 "github.com/envoyproxy/go-control-plane/envoy/config/route/v3"
)

type actionKind int

const (
	actCluster actionKind = iota
	actClusterHeader
	actWeighted
	actDirect
	actRedirect
)

type weightedEntry struct {
	name   string
	header string // cluster_header, lower-case
	weight uint64
	fwd    *weightedForward // the entry's own request changes
}

type action struct {
	kind           actionKind
	cluster        string
	clusterHeader  string // lower-case
	notFoundStatus int    // cluster_not_found_response_code
	weighted       []weightedEntry
	total          uint64
	randomHeader   string // weighted_clusters.header_name, lower-case
	status         int
	body           string
	redir          *redirectConfig
	forward        *forwardConfig // what a forwarding route changes in the request
}

type redirectConfig struct {
	scheme        string
	https         bool
	host          string
	port          string // ":N" or ""
	path          string
	pathHasQuery  bool
	prefixRewrite string
	re            *regexp.Regexp
	reSub         string // Go replacement syntax
	stripQuery    bool
	code          int
}

func compileAction(r *routev3.Route) (action, error) {
	switch a := r.GetAction().(type) {
	case *routev3.Route_Route:
		act, err := compileRouteAction(a.Route)
		if err != nil {
			return act, err
		}
		act.forward, err = compileForward(r, a.Route)
		return act, err
	case *routev3.Route_Redirect:
		return compileRedirect(a.Redirect)
	case *routev3.Route_DirectResponse:
		return compileDirect(a.DirectResponse)
	case *routev3.Route_NonForwardingAction:
		return action{}, fmt.Errorf("non_forwarding_action is not evaluated")
	case *routev3.Route_FilterAction:
		return action{}, fmt.Errorf("filter_action is not evaluated")
	}
	return action{}, fmt.Errorf("route has no action")
}

func compileRouteAction(ra *routev3.RouteAction) (action, error) {
	act := action{notFoundStatus: 503}
	switch ra.GetClusterNotFoundResponseCode() {
	case routev3.RouteAction_NOT_FOUND:
		act.notFoundStatus = 404
	case routev3.RouteAction_INTERNAL_SERVER_ERROR:
		act.notFoundStatus = 500
	}
	switch cs := ra.GetClusterSpecifier().(type) {
	case *routev3.RouteAction_Cluster:
		act.kind, act.cluster = actCluster, cs.Cluster
	case *routev3.RouteAction_ClusterHeader:
		act.kind, act.clusterHeader = actClusterHeader, asciiLower(cs.ClusterHeader)
	case *routev3.RouteAction_WeightedClusters:
		wc := cs.WeightedClusters
		if wc.GetUseHashPolicy().GetValue() {
			return act, fmt.Errorf("weighted_clusters.use_hash_policy is not evaluated")
		}
		act.kind = actWeighted
		act.randomHeader = asciiLower(wc.GetHeaderName())
		for _, c := range wc.GetClusters() {
			if (c.GetName() == "") == (c.GetClusterHeader() == "") {
				return act, fmt.Errorf("weighted cluster entry needs exactly one of name or cluster_header")
			}
			w := uint64(c.GetWeight().GetValue())
			fwd, err := compileWeightedForward(c)
			if err != nil {
				return act, err
			}
			act.weighted = append(act.weighted,
				weightedEntry{name: c.GetName(), header: asciiLower(c.GetClusterHeader()), weight: w, fwd: fwd})
			act.total += w
		}
		// Current Envoy ignores the deprecated total_weight and uses the sum.
		if act.total == 0 {
			return act, fmt.Errorf("sum of weighted cluster weights must be greater than 0")
		}
		if act.total > math.MaxUint32 {
			return act, fmt.Errorf("sum of weighted cluster weights exceeds %d", uint64(math.MaxUint32))
		}
	case *routev3.RouteAction_ClusterSpecifierPlugin, *routev3.RouteAction_InlineClusterSpecifierPlugin:
		return act, fmt.Errorf("cluster specifier plugins are not evaluated")
	default:
		return act, fmt.Errorf("route action has no cluster specifier")
	}
	return act, nil
}

func compileRedirect(rd *routev3.RedirectAction) (action, error) {
	c := &redirectConfig{
		scheme:     rd.GetSchemeRedirect(),
		https:      rd.GetHttpsRedirect(),
		host:       rd.GetHostRedirect(),
		path:       rd.GetPathRedirect(),
		stripQuery: rd.GetStripQuery(),
	}
	// Envoy appends a configured port verbatim, even 80/443.
	if p := rd.GetPortRedirect(); p != 0 {
		c.port = ":" + strconv.FormatUint(uint64(p), 10)
	}
	c.pathHasQuery = strings.Contains(c.path, "?")
	c.prefixRewrite = rd.GetPrefixRewrite()
	if rr := rd.GetRegexRewrite(); rr != nil {
		re, err := regexp.Compile(rr.GetPattern().GetRegex())
		if err != nil {
			return action{}, fmt.Errorf("%w: redirect regex_rewrite: %v", ErrInvalidConfig, err)
		}
		c.re, c.reSub = re, re2Substitution(rr.GetSubstitution())
	}
	if _, ok := rd.GetPathRewriteSpecifier().(*routev3.RedirectAction_PathRewrite); ok {
		return action{}, fmt.Errorf("redirect path_rewrite (substitution format) is not evaluated")
	}
	switch rd.GetResponseCode() {
	case routev3.RedirectAction_FOUND:
		c.code = 302
	case routev3.RedirectAction_SEE_OTHER:
		c.code = 303
	case routev3.RedirectAction_TEMPORARY_REDIRECT:
		c.code = 307
	case routev3.RedirectAction_PERMANENT_REDIRECT:
		c.code = 308
	default:
		c.code = 301
	}
	return action{kind: actRedirect, status: c.code, redir: c}, nil
}

func compileDirect(dr *routev3.DirectResponseAction) (action, error) {
	act := action{kind: actDirect, status: int(dr.GetStatus())}
	if bf := dr.GetBodyFormat(); bf != nil {
		body, err := literalFormat(bf)
		if err != nil {
			return act, err
		}
		act.body = body
		return act, nil
	}
	if b := dr.GetBody(); b != nil {
		switch {
		case len(b.GetInlineBytes()) > 0:
			act.body = string(b.GetInlineBytes())
		case b.GetInlineString() != "":
			act.body = b.GetInlineString()
		case b.GetFilename() != "" || b.GetEnvironmentVariable() != "":
			return act, fmt.Errorf("direct_response body from a file or environment variable is not evaluated")
		}
	}
	return act, nil
}

// re2Substitution converts RE2 rewrite syntax (\1, \\) to Go's ($1, $$).
func re2Substitution(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '\\' && i+1 < len(s) && s[i+1] >= '0' && s[i+1] <= '9':
			b.WriteString("${" + string(s[i+1]) + "}")
			i++
		case c == '\\' && i+1 < len(s) && s[i+1] == '\\':
			b.WriteByte('\\')
			i++
		case c == '$':
			b.WriteString("$$")
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}

func (a *action) apply(state *requestState, r *route, ans Answer) (Answer, error) {
	switch a.kind {
	case actCluster:
		ans.Cluster, ans.Status = a.cluster, 200
		state.recordForwarded(a.forward, r, nil)
	case actClusterHeader:
		ans.Cluster = state.headers[a.clusterHeader]
		ans.Status = 200
		if ans.Cluster == "" {
			ans.Status = a.notFoundStatus
		} else {
			state.recordForwarded(a.forward, r, nil)
		}
	case actWeighted:
		v := state.req.Random
		if a.randomHeader != "" {
			if hv, ok := state.headers[a.randomHeader]; ok {
				if n, err := strconv.ParseUint(hv, 10, 64); err == nil {
					v = n
				}
			}
		}
		sel := v % a.total
		var end uint64
		var chosen *weightedEntry
		for i := range a.weighted {
			w := &a.weighted[i]
			end += w.weight
			if sel < end {
				if w.name != "" {
					ans.Cluster = w.name
				} else {
					ans.Cluster = state.headers[w.header]
				}
				chosen = w
				break
			}
		}
		ans.Status = 200
		if ans.Cluster == "" {
			ans.Status = a.notFoundStatus
		} else {
			state.recordForwarded(a.forward, r, chosen.fwd)
		}
	case actDirect:
		ans.Status, ans.Body = a.status, a.body
		// Router::Filter adds Location for 201 and 3xx direct responses.
		if a.status == 201 || (a.status >= 300 && a.status < 400) {
			ans.Location = newURI(nil, state, state.path)
		}
	case actRedirect:
		ans.Status = a.status
		ans.Location = newURI(a.redir, state, a.redir.rewritePath(state.path, r))
	}
	return ans, nil
}

// rewritePath applies the redirect's prefix_rewrite / regex_rewrite to the
// request path (RouteEntryImplBase::finalizePathHeaderForRedirect).
func (c *redirectConfig) rewritePath(path string, r *route) string {
	if c.prefixRewrite != "" {
		var matched int
		switch r.kind {
		case pathPrefix, pathExact, pathSeparatedPrefix:
			matched = len(r.value)
		default:
			p, _ := splitPath(path)
			matched = len(p)
		}
		if matched > len(path) {
			return path
		}
		return c.prefixRewrite + path[matched:]
	}
	if c.re != nil {
		p, rest := splitPath(path)
		np := c.re.ReplaceAllString(p, c.reSub)
		if np == "" {
			return path // Envoy keeps the path when the rewrite yields nothing
		}
		return np + rest
	}
	return path
}

// newURI mirrors Http::Utility::newUri.
func newURI(c *redirectConfig, state *requestState, curPath string) string {
	scheme := state.scheme
	var port string
	if c != nil {
		if c.scheme != "" {
			scheme = c.scheme
		} else if c.https {
			scheme = "https"
		}
		port = c.port
	}
	var host string
	if c != nil && c.host != "" {
		host = c.host
	} else {
		host = processRequestHost(state, scheme, port)
	}
	path := curPath
	if c != nil && c.path != "" {
		if c.pathHasQuery {
			path = c.path
		} else if i := strings.IndexByte(curPath, '?'); i >= 0 {
			path = c.path + curPath[i:]
		} else {
			path = c.path
		}
	}
	if !strings.HasPrefix(path, "/") {
		path = "/" + path
	}
	if c != nil && !c.pathHasQuery && c.stripQuery {
		if i := strings.IndexByte(path, '?'); i >= 0 {
			path = path[:i]
		}
	}
	return scheme + "://" + host + port + path
}

// processRequestHost drops the request's port when a new port is configured
// or when the scheme changes away from the port's default scheme.
func processRequestHost(state *requestState, newScheme, newPort string) string {
	h := state.host
	if h == "" {
		return h
	}
	var end int
	if h[0] == '[' {
		end = strings.LastIndex(h, "]:")
		if end >= 0 {
			end++
		}
	} else {
		end = strings.LastIndexByte(h, ':')
	}
	if end < 0 {
		return h
	}
	reqPort := h[end:]
	remove := newPort != ""
	if newScheme != state.xfp {
		remove = remove || (strings.EqualFold(state.xfp, "https") && reqPort == ":443") ||
			(strings.EqualFold(state.xfp, "http") && reqPort == ":80")
	}
	if remove {
		return h[:end]
	}
	return h
}

// literalFormat reads a direct response body given as a text format string. Only literal
// text is evaluated ("%%" is a percent sign); command operators are not.
func literalFormat(f *corev3.SubstitutionFormatString) (string, error) {
	src := f.GetTextFormatSource()
	var text string
	switch {
	case f.GetTextFormat() != "":
		text = f.GetTextFormat()
	case src != nil && len(src.GetInlineBytes()) > 0:
		text = string(src.GetInlineBytes())
	case src != nil && src.GetInlineString() != "":
		text = src.GetInlineString()
	case src != nil && (src.GetFilename() != "" || src.GetEnvironmentVariable() != ""):
		return "", fmt.Errorf("direct_response body_format from a file or environment variable is not evaluated")
	case f.GetJsonFormat() != nil:
		return "", fmt.Errorf("direct_response body_format json_format is not evaluated")
	}
	if strings.Contains(strings.ReplaceAll(text, "%%", ""), "%") {
		return "", fmt.Errorf("direct_response body_format command operators are not evaluated")
	}
	return strings.ReplaceAll(text, "%%", "%"), nil
}
