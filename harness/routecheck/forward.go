package routecheck

import (
	"fmt"
	"regexp"
	"strings"

	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	routev3 "github.com/envoyproxy/go-control-plane/envoy/config/route/v3"
)

// CheckForwarded is Check that also returns the request as Envoy forwards it to the chosen
// cluster: the client's headers (lower-case names, pseudo-headers included) after the
// weighted cluster's and the route's header changes, host rewrite and path rewrite, with
// repeated values joined by ",". The headers are nil when the request is not forwarded
// (direct response, redirect, no route, layer-4 proxies).
func (t *Table) CheckForwarded(req Request) (Answer, map[string]string, error) {
	var fwd map[string]string
	req.forwarded = &fwd
	ans, err := t.Check(req)
	return ans, fwd, err
}

// recordForwarded computes the forwarded headers when the caller asked for them.
func (state *requestState) recordForwarded(f *forwardConfig, r *route, wf *weightedForward) {
	if state.req.forwarded != nil {
		*state.req.forwarded = f.upstreamHeaders(state, r, wf)
	}
}

// What Envoy does to a request it forwards (RouteEntryImplBase::finalizeRequestHeaders):
// a weighted cluster's own header changes and host rewrite come first, then the route's
// header changes, the route's host rewrite and the path rewrite. Each header change removes
// first, then adds. Header values are taken as written: command operators (%...%) are not
// expanded.

// headerMutation is one level's request header changes (a route or a weighted cluster).
type headerMutation struct {
	remove []string // lower-case
	add    []headerAdd
}

type headerAdd struct {
	name      string // lower-case
	value     string
	action    corev3.HeaderValueOption_HeaderAppendAction
	keepEmpty bool
}

func compileMutation(remove []string, add []*corev3.HeaderValueOption) (headerMutation, error) {
	var m headerMutation
	for _, r := range remove {
		m.remove = append(m.remove, asciiLower(r))
	}
	for _, h := range add {
		if h.GetHeader() == nil {
			return m, fmt.Errorf("%w: header value option without a header", ErrInvalidConfig)
		}
		action := h.GetAppendAction()
		if a := h.GetAppend(); a != nil { // the deprecated bool wins when set
			action = corev3.HeaderValueOption_OVERWRITE_IF_EXISTS_OR_ADD
			if a.GetValue() {
				action = corev3.HeaderValueOption_APPEND_IF_EXISTS_OR_ADD
			}
		}
		value := h.GetHeader().GetValue()
		if value == "" && len(h.GetHeader().GetRawValue()) > 0 {
			value = string(h.GetHeader().GetRawValue())
		}
		m.add = append(m.add,
			headerAdd{name: asciiLower(h.GetHeader().GetKey()), value: value, action: action, keepEmpty: h.GetKeepEmptyValue()})
	}
	return m, nil
}

// apply is HeaderParser::evaluateHeaders: removals, then additions in order.
func (m *headerMutation) apply(h map[string][]string) {
	if m == nil {
		return
	}
	for _, r := range m.remove {
		delete(h, r)
	}
	for _, a := range m.add {
		if a.value == "" && !a.keepEmpty {
			continue
		}
		_, exists := h[a.name]
		switch a.action {
		case corev3.HeaderValueOption_APPEND_IF_EXISTS_OR_ADD:
			h[a.name] = append(h[a.name], a.value)
		case corev3.HeaderValueOption_ADD_IF_ABSENT:
			if !exists {
				h[a.name] = []string{a.value}
			}
		case corev3.HeaderValueOption_OVERWRITE_IF_EXISTS:
			if exists {
				h[a.name] = []string{a.value}
			}
		default: // OVERWRITE_IF_EXISTS_OR_ADD
			h[a.name] = []string{a.value}
		}
	}
}

// forwardConfig is what a route action changes in the forwarded request.
type forwardConfig struct {
	headers       headerMutation
	prefixRewrite string
	re            *regexp.Regexp
	reSub         string
	hostRewrite   string
	hostHeader    string // host_rewrite_header: the :authority comes from this header when set
	hostUnknown   bool
	appendXFH     bool
}

func compileForward(r *routev3.Route, ra *routev3.RouteAction) (*forwardConfig, error) {
	m, err := compileMutation(r.GetRequestHeadersToRemove(), r.GetRequestHeadersToAdd())
	if err != nil {
		return nil, err
	}
	f := &forwardConfig{headers: m, prefixRewrite: ra.GetPrefixRewrite(), appendXFH: ra.GetAppendXForwardedHost()}
	if rr := ra.GetRegexRewrite(); rr != nil {
		re, err := regexp.Compile(rr.GetPattern().GetRegex())
		if err != nil {
			return nil, fmt.Errorf("%w: regex_rewrite: %v", ErrInvalidConfig, err)
		}
		f.re, f.reSub = re, re2Substitution(rr.GetSubstitution())
	}
	switch hr := ra.GetHostRewriteSpecifier().(type) {
	case nil:
	case *routev3.RouteAction_HostRewriteLiteral:
		f.hostRewrite = hr.HostRewriteLiteral
	case *routev3.RouteAction_HostRewriteHeader:
		f.hostHeader = strings.ToLower(hr.HostRewriteHeader)
	default:
		// Other host rewrites (auto or from the path) are not evaluated: the
		// forwarded :authority is left out rather than guessed.
		f.hostUnknown = true
	}
	return f, nil
}

// weightedForward is a weighted cluster entry's own changes.
type weightedForward struct {
	headers     headerMutation
	hostRewrite string
}

func compileWeightedForward(c *routev3.WeightedCluster_ClusterWeight) (*weightedForward, error) {
	m, err := compileMutation(c.GetRequestHeadersToRemove(), c.GetRequestHeadersToAdd())
	if err != nil {
		return nil, err
	}
	return &weightedForward{headers: m, hostRewrite: c.GetHostRewriteLiteral()}, nil
}

// upstreamHeaders returns the request headers as forwarded, pseudo-headers included, with
// repeated values joined by ",".
func (f *forwardConfig) upstreamHeaders(state *requestState, r *route, wf *weightedForward) map[string]string {
	h := make(map[string][]string, len(state.headers))
	for k, v := range state.headers {
		h[k] = []string{v}
	}
	if wf != nil {
		wf.headers.apply(h)
		if wf.hostRewrite != "" {
			h[":authority"] = []string{wf.hostRewrite}
		}
	}
	if f != nil {
		f.headers.apply(h)
		host := f.hostRewrite
		if f.hostHeader != "" {
			// Envoy swaps in the header's value; an absent or empty header leaves the
			// host intact.
			host = first(h[f.hostHeader])
		}
		if host != "" {
			if f.appendXFH {
				if cur := first(h[":authority"]); cur != "" {
					h["x-forwarded-host"] = []string{strings.Join(append(h["x-forwarded-host"], cur), ",")}
				}
			}
			h[":authority"] = []string{host}
		}
		if f.hostUnknown {
			delete(h, ":authority")
		}
		if p := first(h[":path"]); p != "" {
			rw := redirectConfig{prefixRewrite: f.prefixRewrite, re: f.re, reSub: f.reSub}
			h[":path"] = []string{rw.rewritePath(p, r)}
		}
	}
	out := make(map[string]string, len(h))
	for k, vs := range h {
		out[k] = strings.Join(vs, ",")
	}
	return out
}

func first(vs []string) string {
	if len(vs) == 0 {
		return ""
	}
	return vs[0]
}
