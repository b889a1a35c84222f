package xds

import (
	"google.golang.org/protobuf/types/known/wrapperspb"
	"regexp"
	"strings"
	"time"

	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	routev3 "github.com/envoyproxy/go-control-plane/envoy/config/route/v3"
	previoushostsv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/retry/host/previous_hosts/v3"
	matcherv3 "github.com/envoyproxy/go-control-plane/envoy/type/matcher/v3"
	typev3 "github.com/envoyproxy/go-control-plane/envoy/type/v3"
	"google.golang.org/protobuf/types/known/durationpb"

	"github.com/egharness/egharness/translator/ir"
)

// EG v1.9's retry defaults (facts of its output for an HTTPRoute rule with `retry`).
const (
	retryDefaultOn              = "connect-failure,refused-stream,unavailable,cancelled,retriable-status-codes"
	retryDefaultStatusCode      = 503
	retryDefaultNumRetries      = 2
	retryHostSelectionAttempts  = 5
	retryPreviousHostsPredicate = "envoy.retry_host_predicates.previous_hosts"
	// defaultIdleTimeout is the stream idle timeout a route with a request timeout gets,
	// unless the request timeout is longer.
	defaultIdleTimeout = time.Hour
)

// applyRouteFilters completes a built route with the header changes of its rule's filters
// and, when it forwards, the rewrite, mirrors, timeout and retry.
func applyRouteFilters(out *routev3.Route, r *ir.HTTPRoute) {
	out.RequestHeadersToAdd = addedHeaders(r.AddRequestHeaders)
	out.RequestHeadersToRemove = r.RemoveRequestHeaders
	out.ResponseHeadersToAdd = addedHeaders(r.AddResponseHeaders)
	out.ResponseHeadersToRemove = removedResponseHeaders(r)
	a := out.GetRoute()
	if a == nil {
		return
	}
	if r.URLRewrite != nil {
		applyURLRewrite(a, r.URLRewrite, r.PathMatch)
	}
	a.RequestMirrorPolicies = mirrorPolicies(r.Mirrors)
	if t := requestTimeout(r); t != nil {
		a.Timeout = durationpb.New(*t)
		// The stream idle timeout must not end a request before its timeout does; no
		// timeout (0s) disables both.
		idle := defaultIdleTimeout
		if *t > idle {
			idle = *t
		}
		if *t == 0 {
			idle = 0
		}
		a.IdleTimeout = durationpb.New(idle)
	}
	if idle := streamIdleTimeout(r); idle != nil {
		a.IdleTimeout = durationpb.New(*idle)
	}
	if r.Retry != nil {
		a.RetryPolicy = retryPolicy(r.Retry)
	}
	if rp := btpRetryPolicy(r); rp != nil {
		a.RetryPolicy = rp
	}
}

// addedHeaders maps headers to add: "add" appends to what is there, "set" overwrites.
func addedHeaders(hs []ir.AddHeader) []*corev3.HeaderValueOption {
	if len(hs) == 0 {
		return nil
	}
	out := make([]*corev3.HeaderValueOption, 0, len(hs))
	for _, h := range hs {
		action := corev3.HeaderValueOption_OVERWRITE_IF_EXISTS_OR_ADD
		if h.Append {
			action = corev3.HeaderValueOption_APPEND_IF_EXISTS_OR_ADD
		}
		out = append(out, &corev3.HeaderValueOption{
			Header:         &corev3.HeaderValue{Key: h.Name, Value: h.Value},
			AppendAction:   action,
			KeepEmptyValue: h.Value == "",
		})
	}
	return out
}

// prefixRegexRewrite replaces a matched prefix and the slashes after it with a single "/".
// EG uses it when a prefix is replaced by "/" or "": a plain prefix rewrite would leave
// "//" behind (Envoy issue 26055).
func prefixRegexRewrite(prefix string) *matcherv3.RegexMatchAndSubstitute {
	return &matcherv3.RegexMatchAndSubstitute{
		Pattern:      &matcherv3.RegexMatcher{Regex: "^" + regexp.QuoteMeta(prefix) + `\/*`},
		Substitution: "/",
	}
}

// usePrefixRegex reports whether a prefix replacement needs prefixRegexRewrite.
func usePrefixRegex(match *ir.StringMatch, replacement string) bool {
	return match != nil && match.Prefix != nil && (replacement == "" || replacement == "/")
}

// applyURLRewrite maps URL rewrites onto the route action: a full path replacement is a
// regex rewrite of the whole path, a prefix replacement a prefix rewrite (without a trailing
// "/"), an HTTPRouteFilter's regex a regex rewrite; a host rewrite (a literal hostname, or
// an HTTPRouteFilter's header, backend or path regex) keeps the original host in
// x-forwarded-host unless the filter says otherwise.
func applyURLRewrite(a *routev3.RouteAction, rw *ir.URLRewrite, match *ir.StringMatch) {
	if p := rw.Path; p != nil {
		switch {
		case p.FullReplace != nil:
			a.RegexRewrite = &matcherv3.RegexMatchAndSubstitute{
				Pattern:      &matcherv3.RegexMatcher{Regex: "^/.*$"},
				Substitution: *p.FullReplace,
			}
		case p.PrefixMatchReplace != nil && usePrefixRegex(match, *p.PrefixMatchReplace):
			a.RegexRewrite = prefixRegexRewrite(*match.Prefix)
		case p.PrefixMatchReplace != nil:
			a.PrefixRewrite = strings.TrimSuffix(*p.PrefixMatchReplace, "/")
		case p.RegexMatchReplace != nil:
			a.RegexRewrite = regexSubstitute(p.RegexMatchReplace)
		}
	}
	host := true
	switch h := rw.Host; {
	case rw.Hostname != nil:
		a.HostRewriteSpecifier = &routev3.RouteAction_HostRewriteLiteral{HostRewriteLiteral: *rw.Hostname}
	case h == nil:
		host = false
	case h.Header != nil:
		a.HostRewriteSpecifier = &routev3.RouteAction_HostRewriteHeader{HostRewriteHeader: *h.Header}
	case h.Backend:
		a.HostRewriteSpecifier = &routev3.RouteAction_AutoHostRewrite{AutoHostRewrite: wrapperspb.Bool(true)}
	case h.PathRegex != nil:
		a.HostRewriteSpecifier = &routev3.RouteAction_HostRewritePathRegex{HostRewritePathRegex: regexSubstitute(h.PathRegex)}
	}
	if host && (rw.AppendXForwardedHost == nil || *rw.AppendXForwardedHost) {
		a.AppendXForwardedHost = true
	}
}

func regexSubstitute(r *ir.RegexReplace) *matcherv3.RegexMatchAndSubstitute {
	return &matcherv3.RegexMatchAndSubstitute{Pattern: &matcherv3.RegexMatcher{Regex: r.Pattern},
		Substitution: r.Substitution}
}

// redirectAction maps a RequestRedirect filter. Ports 80 and 443 are left out so that the
// Location carries no port; unlike a rewrite, a prefix replacement keeps its trailing "/".
func redirectAction(r *ir.HTTPRoute) *routev3.RedirectAction {
	rd := r.Redirect
	out := &routev3.RedirectAction{}
	if rd.Scheme != nil {
		out.SchemeRewriteSpecifier = &routev3.RedirectAction_SchemeRedirect{SchemeRedirect: *rd.Scheme}
	}
	if p := rd.Path; p != nil {
		switch {
		case p.FullReplace != nil:
			out.PathRewriteSpecifier = &routev3.RedirectAction_PathRedirect{PathRedirect: *p.FullReplace}
		case p.PrefixMatchReplace != nil && usePrefixRegex(r.PathMatch, *p.PrefixMatchReplace):
			out.PathRewriteSpecifier = &routev3.RedirectAction_RegexRewrite{RegexRewrite: prefixRegexRewrite(
				*r.PathMatch.Prefix)}
		case p.PrefixMatchReplace != nil:
			out.PathRewriteSpecifier = &routev3.RedirectAction_PrefixRewrite{PrefixRewrite: *p.PrefixMatchReplace}
		}
	}
	if rd.Hostname != nil {
		out.HostRedirect = *rd.Hostname
	}
	if rd.Port != nil && *rd.Port != 80 && *rd.Port != 443 {
		out.PortRedirect = *rd.Port
	}
	if rd.StatusCode != nil {
		switch *rd.StatusCode {
		case 302:
			out.ResponseCode = routev3.RedirectAction_FOUND
		case 303:
			out.ResponseCode = routev3.RedirectAction_SEE_OTHER
		case 307:
			out.ResponseCode = routev3.RedirectAction_TEMPORARY_REDIRECT
		case 308:
			out.ResponseCode = routev3.RedirectAction_PERMANENT_REDIRECT
		}
	}
	return out
}

// directResponseAction answers with a status and, when set, a body given as a format
// string (as EG writes it), so Envoy command operators in it are expanded.
func directResponseAction(d *ir.DirectResponse) *routev3.DirectResponseAction {
	out := &routev3.DirectResponseAction{Status: d.Status}
	if d.Body != "" {
		out.BodyFormat = &corev3.SubstitutionFormatString{
			Format: &corev3.SubstitutionFormatString_TextFormatSource{TextFormatSource: &corev3.DataSource{
				Specifier: &corev3.DataSource_InlineBytes{InlineBytes: []byte(d.Body)},
			}},
		}
	}
	return out
}

// mirrorPercent is the share of requests a mirror copies: all when unset, none (no policy)
// at zero, otherwise per million, computed in float32 as EG does.
func mirrorPercent(m *ir.Mirror) *typev3.FractionalPercent {
	if m.Percent == nil {
		return &typev3.FractionalPercent{Numerator: 100, Denominator: typev3.FractionalPercent_HUNDRED}
	}
	p := *m.Percent
	if p <= 0 {
		return nil
	}
	return &typev3.FractionalPercent{Numerator: uint32(p * 10000), Denominator: typev3.FractionalPercent_MILLION}
}

func mirrorPolicies(ms []*ir.Mirror) []*routev3.RouteAction_RequestMirrorPolicy {
	var out []*routev3.RouteAction_RequestMirrorPolicy
	for _, m := range ms {
		fp := mirrorPercent(m)
		if fp == nil || m.Destination == nil {
			continue
		}
		out = append(out, &routev3.RouteAction_RequestMirrorPolicy{
			Cluster:                       m.Destination.Name,
			RuntimeFraction:               &corev3.RuntimeFractionalPercent{DefaultValue: fp},
			DisableShadowHostSuffixAppend: true,
		})
	}
	return out
}

// retryPolicy maps an HTTPRoute rule's retry onto EG's defaults: attempts replace the
// number of retries, codes the retriable status codes, backoff the base interval and
// timeouts.backendRequest the per-try timeout.
func retryPolicy(r *ir.Retry) *routev3.RetryPolicy {
	rp := &routev3.RetryPolicy{
		RetryOn:              retryDefaultOn,
		RetriableStatusCodes: []uint32{retryDefaultStatusCode},
		NumRetries:           u32(retryDefaultNumRetries),
		RetryHostPredicate: []*routev3.RetryPolicy_RetryHostPredicate{{
			Name: retryPreviousHostsPredicate,
			ConfigType: &routev3.RetryPolicy_RetryHostPredicate_TypedConfig{TypedConfig: mustAny(
				&previoushostsv3.PreviousHostsPredicate{})},
		}},
		HostSelectionRetryMaxAttempts: retryHostSelectionAttempts,
	}
	if r.NumRetries != nil {
		rp.NumRetries = u32(*r.NumRetries)
	}
	if len(r.Codes) > 0 {
		rp.RetriableStatusCodes = r.Codes
	}
	if r.PerTryTimeout != nil {
		rp.PerTryTimeout = durationpb.New(*r.PerTryTimeout)
	}
	if r.BackOff != nil {
		rp.RetryBackOff = &routev3.RetryPolicy_RetryBackOff{BaseInterval: durationpb.New(*r.BackOff)}
	}
	return rp
}

// applyBackendFilters puts a backendRef's own filters on its weighted-cluster entry.
func applyBackendFilters(cw *routev3.WeightedCluster_ClusterWeight, f *ir.BackendFilters) {
	if f == nil {
		return
	}
	cw.RequestHeadersToAdd = addedHeaders(f.AddRequestHeaders)
	cw.RequestHeadersToRemove = f.RemoveRequestHeaders
	cw.ResponseHeadersToAdd = addedHeaders(f.AddResponseHeaders)
	cw.ResponseHeadersToRemove = f.RemoveResponseHeaders
	if f.HostRewrite != nil {
		cw.HostRewriteSpecifier = &routev3.WeightedCluster_ClusterWeight_HostRewriteLiteral{
			HostRewriteLiteral: *f.HostRewrite}
	}
}

// hasBackendFilters: a backend with filters of its own needs a cluster of its own.
func hasBackendFilters(d *ir.Destination) bool {
	for _, s := range d.Settings {
		if s.Filters != nil {
			return true
		}
	}
	return false
}

// routeClusters are the clusters a route uses: its destination's, then one per mirror.
func routeClusters(r *ir.HTTPRoute) []clusterPair {
	plan := routeClusterPlan(r)
	out := make([]clusterPair, len(plan))
	for i, p := range plan {
		out[i] = p.build()
	}
	return out
}

// plannedCluster is a cluster a route uses, named before it is built: the first route
// to name a cluster is the one whose cluster the output keeps, so the others' need not be
// built at all (a route on two listeners and three hostnames names its clusters six times).
type plannedCluster struct {
	name  string
	build func() clusterPair
}

// routeClusterPlan names the clusters of routeClusters, in its order. Mirror clusters
// carry no owner metadata (EG gives them none) and exist even when the route answers
// directly or mirrors nothing (a zero percent).
func routeClusterPlan(r *ir.HTTPRoute) []plannedCluster {
	var out []plannedCluster
	if r.Destination != nil {
		out = clusterPlan(r)
	}
	for _, m := range r.Mirrors {
		d := m.Destination
		if d == nil {
			continue
		}
		out = append(out, plannedCluster{name: d.Name, build: func() clusterPair {
			c := buildCluster(d.Name, resourceRef{}, d.HTTP2)
			c.Metadata = nil
			return clusterPair{cluster: c, cla: buildCLA(d.Name, d.Settings)}
		}})
	}
	return out
}
