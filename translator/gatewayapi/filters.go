package gatewayapi

import (
	"errors"
	"fmt"
	"net/netip"
	"regexp"
	"sort"
	"strings"
	"time"

	egv1a1 "github.com/envoyproxy/gateway/api/v1alpha1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation"
	gwapiv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/egharness/egharness/translator/conditions"
	"github.com/egharness/egharness/translator/ir"
	"github.com/egharness/egharness/translator/result"
)

// HTTPRoute rule filters, timeouts and retries, as EG v1.9 translates them.
//
// A rule's filters are read once, in spec order, into a ruleFilters value that every IR
// route of the rule then takes (apply). Problems become typed errors the way EG groups
// them: "Accepted" errors drop the rule (PartiallyInvalid, or Accepted=False when every
// rule is dropped), "ResolvedRefs" errors join the backend reference errors, and
// "BackendsAvailable" errors (a mirror without endpoints) only report. Any error other
// than BackendsAvailable turns the rule into a direct 500.

// Condition types a filter error is reported under.
const (
	errAccepted          = "Accepted"
	errResolvedRefs      = "ResolvedRefs"
	errBackendsAvailable = "BackendsAvailable"
)

// EG's messages for filter combinations it refuses.
const (
	msgMirrorWithDirectResponse  = "RequestMirror filter cannot be used when the rule also configures a DirectResponse filter"
	msgMirrorWithRedirect        = "RequestMirror filter cannot be used when the rule also configures a RequestRedirect filter"
	msgBackendFilterNotSupported = "Specific filter is not supported within BackendRef, only RequestHeaderModifier, " +
		"ResponseHeaderModifier, URLRewrite and gateway.envoyproxy.io/HTTPRouteFilter are supported"
	msgBackendPathRewrite    = "URLRewrite path modifier is not supported within BackendRef"
	msgGRPCDirectResponse2xx = "DirectResponse with a 2xx status code is not supported for GRPCRoute: a 2xx status maps to the gRPC OK status, " +
		"but a direct response cannot carry a gRPC response message, so the client would receive an invalid response. " +
		"Use a non-2xx status code to deny or block the request instead"
)

// headerValueRE is what EG accepts as a header value (RFC 7230 field content).
var headerValueRE = regexp.MustCompile(`^[!-~]+([\t ]?[!-~]+)*$`)

// filterErr is one problem, with the condition type it is reported under.
type filterErr struct{ typ, reason, msg string }

// typedErrs collects errors and merges those of one condition type the way EG does: one
// error keeps its text, several are each written as a condition message, one per line,
// with their distinct reasons sorted and joined by commas.
type typedErrs struct {
	order []string
	byTyp map[string]*refErrors
}

func (t *typedErrs) add(typ, reason, msg string) {
	if t.byTyp == nil {
		t.byTyp = map[string]*refErrors{}
	}
	e := t.byTyp[typ]
	if e == nil {
		e = &refErrors{}
		t.byTyp[typ] = e
		t.order = append(t.order, typ)
	}
	e.add(reason, msg)
}

// merged returns one error per condition type, in the order the types first occurred.
func (t *typedErrs) merged() []filterErr {
	out := make([]filterErr, 0, len(t.order))
	for _, typ := range t.order {
		reason, msg := t.byTyp[typ].mergedText()
		out = append(out, filterErr{typ: typ, reason: reason, msg: msg})
	}
	return out
}

// mergedText is the merged text and reason of the collected errors (see typedErrs).
func (e *refErrors) mergedText() (reason, msg string) {
	if len(e.msgs) == 1 {
		return e.reasons[0], e.msgs[0]
	}
	c := e.condition("")
	return c.Reason, c.Message
}

// ruleFilters is what a rule's filters, timeouts and retry make of its routes.
type ruleFilters struct {
	addRequest     []ir.AddHeader
	removeRequest  []string
	addResponse    []ir.AddHeader
	removeResponse []string
	redirect       *ir.Redirect
	rewrite        *ir.URLRewrite
	credential     *ir.CredentialInjection
	cors           *egv1a1.CORS
	direct         *ir.DirectResponse
	mirrors        []*ir.Mirror
	timeout        *time.Duration
	retry          *ir.Retry

	// matchFilter: an HTTPRouteFilter with matches was read (a rule takes one).
	matchFilter bool

	// errs are the problems, merged per condition type.
	errs []filterErr
	// failed: an error other than BackendsAvailable; the rule answers 500.
	failed bool
	// dropped: an Accepted error; the rule counts as not accepted.
	dropped bool
}

// filterInput is what filter processing needs to know about where the filters are.
type filterInput struct {
	routeKind string // HTTPRoute or GRPCRoute: whose ReferenceGrants apply
	routeNS   string
	routeName string
	ruleIdx   int
	// cluster is the rule's cluster name; mirrors are named after it.
	cluster string
}

// ruleFilters reads a rule's filters, per-backendRef filters, timeouts and retry. Errors of
// type ResolvedRefs join rc.errors ahead of the rule's backend errors, as EG lists them;
// the others are kept on rc for the route's conditions.
func (rt *routeTranslator) ruleFilters(rc *ruleCtx, dest *ir.Destination, r *gwapiv1.HTTPRoute, ruleIdx int, rule gwapiv1.HTTPRouteRule) *ruleFilters {
	in := filterInput{routeKind: r.Kind, routeNS: r.Namespace, routeName: r.Name, ruleIdx: ruleIdx, cluster: dest.Name}
	if in.routeKind == "" {
		in.routeKind = "HTTPRoute"
	}
	ff, errs := rt.processFilters(in, rule.Filters)
	ff.timeout, ff.retry = ruleTimeouts(rule)
	rt.backendFilters(rc, dest, in, rule.BackendRefs)

	var resolved []refError
	for _, e := range errs {
		if e.typ != errBackendsAvailable {
			ff.failed = true
		}
		if e.typ == errAccepted {
			ff.dropped = true
		}
		if e.typ == errResolvedRefs {
			resolved = append(resolved, refError{reason: e.reason, msg: e.msg})
			continue
		}
		ff.errs = append(ff.errs, e)
	}
	rc.errors = append(resolved, rc.errors...)
	rc.filters = ff
	return ff
}

// processFilters runs a filter list the way EG does: in order, stopping after a filter that
// makes the rule answer directly (an invalid filter, or an HTTPRouteFilter direct response).
func (rt *routeTranslator) processFilters(in filterInput, filters []gwapiv1.HTTPRouteFilter) (*ruleFilters, []filterErr) {
	ff := &ruleFilters{}
	var errs typedErrs
	for i := range filters {
		f := &filters[i]
		if ff.direct != nil {
			break
		}
		if err := validateFilterKind(f); err != nil {
			ff.direct = &ir.DirectResponse{Status: 500}
			errs.add(errAccepted, "UnsupportedValue", fmt.Sprintf("invalid filter %s: %v", f.Type, err))
			continue
		}
		var e *filterErr
		switch f.Type {
		case gwapiv1.HTTPRouteFilterRequestHeaderModifier:
			e = ff.requestHeaders(f.RequestHeaderModifier)
		case gwapiv1.HTTPRouteFilterResponseHeaderModifier:
			e = ff.responseHeaders(f.ResponseHeaderModifier)
		case gwapiv1.HTTPRouteFilterRequestRedirect:
			e = ff.requestRedirect(f.RequestRedirect)
		case gwapiv1.HTTPRouteFilterURLRewrite:
			e = ff.urlRewrite(f.URLRewrite)
		case gwapiv1.HTTPRouteFilterRequestMirror:
			e = rt.requestMirror(ff, in, i, f.RequestMirror)
		case gwapiv1.HTTPRouteFilterExtensionRef:
			e = rt.extensionRef(ff, in, f.ExtensionRef)
		case gwapiv1.HTTPRouteFilterCORS:
			ff.corsFilter(f.CORS)
		}
		if e != nil {
			errs.add(e.typ, e.reason, e.msg)
		}
	}
	// A mirror cannot go with a rule that answers by itself.
	if ff.direct != nil && len(ff.mirrors) > 0 {
		ff.direct, ff.mirrors = nil, nil
		errs.add(errAccepted, "IncompatibleFilters", msgMirrorWithDirectResponse)
	}
	if ff.redirect != nil && len(ff.mirrors) > 0 {
		ff.redirect, ff.mirrors = nil, nil
		errs.add(errAccepted, "IncompatibleFilters", msgMirrorWithRedirect)
	}
	// gRPC says success with a grpc-status trailer and a message, which a direct response
	// cannot carry: EG refuses a 2xx direct response on a GRPCRoute rule (EG's testdata:
	// grpcroute-with-direct-response-2xx-invalid); deny-style statuses stay.
	if in.routeKind == "GRPCRoute" && ff.direct != nil && ff.direct.Status >= 200 && ff.direct.Status < 300 {
		ff.direct = nil
		errs.add(errAccepted, "UnsupportedValue", msgGRPCDirectResponse2xx)
	}
	return ff, errs.merged()
}

// validateFilterKind refuses the filter types EG does not translate and ExtensionRefs to
// kinds it does not know (egctl runs with no extension server).
func validateFilterKind(f *gwapiv1.HTTPRouteFilter) error {
	switch f.Type {
	case gwapiv1.HTTPRouteFilterRequestMirror, gwapiv1.HTTPRouteFilterURLRewrite, gwapiv1.HTTPRouteFilterRequestRedirect,
		gwapiv1.HTTPRouteFilterRequestHeaderModifier, gwapiv1.HTTPRouteFilterResponseHeaderModifier, gwapiv1.HTTPRouteFilterCORS:
		return nil
	case gwapiv1.HTTPRouteFilterExtensionRef:
		switch {
		case f.ExtensionRef == nil:
			return errors.New("extensionRef field must be specified for an extended filter")
		case string(f.ExtensionRef.Group) == egv1a1.GroupName && string(f.ExtensionRef.Kind) == egv1a1.KindHTTPRouteFilter:
			return nil
		}
		return fmt.Errorf("unknown kind %s/%s", f.ExtensionRef.Group, f.ExtensionRef.Kind)
	}
	return fmt.Errorf("unsupported filter type %v", f.Type)
}

func acceptedErr(msg string) *filterErr {
	return &filterErr{typ: errAccepted, reason: "UnsupportedValue", msg: msg}
}

// modifiableHeader: no pseudo-headers, no "/" and no Host (EG's rule).
func modifiableHeader(name string) bool {
	return !strings.ContainsAny(name, "/:") && !strings.EqualFold(name, "host")
}

// headerEdit is one direction (request or response) of a header modifier.
type headerEdit struct {
	filter  string // RequestHeaderModifier or ResponseHeaderModifier
	add     *[]ir.AddHeader
	remove  *[]string
	request bool
}

func (ff *ruleFilters) requestHeaders(m *gwapiv1.HTTPHeaderFilter) *filterErr {
	return headerEdit{filter: "RequestHeaderModifier", add: &ff.addRequest, remove: &ff.removeRequest, request: true}.apply(m)
}

func (ff *ruleFilters) responseHeaders(m *gwapiv1.HTTPHeaderFilter) *filterErr {
	return headerEdit{filter: "ResponseHeaderModifier", add: &ff.addResponse, remove: &ff.removeResponse}.apply(m)
}

// apply adds "add" headers first (appending), then "set" ones (replacing), then removals;
// a name already added (case-insensitively) is skipped, an invalid entry is reported and
// skipped while the valid ones are kept.
func (h headerEdit) apply(m *gwapiv1.HTTPHeaderFilter) *filterErr {
	if m == nil {
		return nil
	}
	var problems []string
	badName := func(verb, name string) string {
		if h.request && verb != "remove" {
			return fmt.Sprintf("Header: %q. The %s filter cannot %s the Host header or headers with a '/' or ':' character in them. "+
				"To modify the Host header use the URLRewrite or the HTTPRouteFilter filter.", name, h.filter, verb)
		}
		if !h.request && verb != "remove" {
			verb = "set" // EG's wording for added response headers too
		}
		return fmt.Sprintf("Header: %q. The %s filter cannot %s the Host header or headers with a '/' or ':' character in them.", name, h.filter, verb)
	}
	has := func(name string) bool {
		for _, a := range *h.add {
			if strings.EqualFold(a.Name, name) {
				return true
			}
		}
		return false
	}
	empty := len(m.Add) == 0 && len(m.Set) == 0 && len(m.Remove) == 0
	for _, group := range []struct {
		verb    string
		headers []gwapiv1.HTTPHeader
	}{{"add", m.Add}, {"set", m.Set}} {
		for _, hd := range group.headers {
			name := string(hd.Name)
			switch {
			case name == "":
				problems = append(problems, fmt.Sprintf("%s Filter cannot %s a header with an empty name", h.filter, group.verb))
			case !modifiableHeader(name):
				problems = append(problems, badName(group.verb, name))
			case !headerValueRE.MatchString(hd.Value):
				problems = append(problems, fmt.Sprintf("Header: %q. %s Filter cannot %s a header with an invalid value.", name, h.filter, group.verb))
			case !has(name):
				*h.add = append(*h.add, ir.AddHeader{Name: name, Value: hd.Value, Append: group.verb == "add"})
			}
		}
	}
	for _, name := range m.Remove {
		switch {
		case name == "":
			problems = append(problems, fmt.Sprintf("%s Filter cannot remove a header with an empty name", h.filter))
		case !modifiableHeader(name):
			problems = append(problems, badName("remove", name))
		default:
			dup := false
			for _, r := range *h.remove {
				dup = dup || strings.EqualFold(r, name)
			}
			if !dup {
				*h.remove = append(*h.remove, name)
			}
		}
	}
	if len(*h.add) == 0 && len(*h.remove) == 0 && !empty {
		what := "add/set/remove"
		if !h.request {
			what = "add/remove"
		}
		return acceptedErr(fmt.Sprintf("%s Filter did not provide valid configuration to %s any headers", h.filter, what))
	}
	if len(problems) > 0 {
		return acceptedErr(strings.Join(problems, "\n"))
	}
	return nil
}

// validateFilterHostname is EG's check of a hostname a redirect or rewrite writes: a DNS
// subdomain, not an IP address, no label over 63 characters.
func validateFilterHostname(h string) error {
	if errs := validation.IsDNS1123Subdomain(h); errs != nil {
		return fmt.Errorf("hostname %q is invalid: %v", h, errs)
	}
	if _, err := netip.ParseAddr(h); err == nil {
		return fmt.Errorf("hostname: %q cannot be an ip address", h)
	}
	for _, label := range strings.Split(h, ".") {
		if len(label) > 63 {
			return fmt.Errorf("label: %q in hostname %q cannot exceed 63 characters", label, h)
		}
	}
	return nil
}

func (ff *ruleFilters) requestRedirect(rd *gwapiv1.HTTPRequestRedirectFilter) *filterErr {
	if ff.redirect != nil {
		return acceptedErr("cannot configure multiple requestRedirect filters for a single HTTPRouteRule")
	}
	if rd == nil {
		return nil
	}
	out := &ir.Redirect{}
	if rd.Scheme != nil {
		if *rd.Scheme != "http" && *rd.Scheme != "https" {
			return acceptedErr(fmt.Sprintf("scheme: %s is unsupported, only 'https' and 'http' are supported", *rd.Scheme))
		}
		out.Scheme = ptr(*rd.Scheme)
	}
	if rd.Hostname != nil {
		if err := validateFilterHostname(string(*rd.Hostname)); err != nil {
			return acceptedErr(err.Error())
		}
		out.Hostname = ptr(string(*rd.Hostname))
	}
	if p := rd.Path; p != nil {
		switch p.Type {
		case gwapiv1.FullPathHTTPPathModifier:
			if p.ReplaceFullPath != nil {
				out.Path = &ir.PathModifier{FullReplace: ptr(*p.ReplaceFullPath)}
			}
		case gwapiv1.PrefixMatchHTTPPathModifier:
			if p.ReplacePrefixMatch != nil {
				out.Path = &ir.PathModifier{PrefixMatchReplace: ptr(*p.ReplacePrefixMatch)}
			}
		default:
			return acceptedErr(fmt.Sprintf("redirect path type: %s is invalid, only \"ReplaceFullPath\" and \"ReplacePrefixMatch\" are supported", p.Type))
		}
	}
	code := int32(302) // the CRD default
	if rd.StatusCode != nil {
		code = int32(*rd.StatusCode)
	}
	switch code {
	case 301, 302, 303, 307, 308:
		out.StatusCode = &code
	default:
		return acceptedErr(fmt.Sprintf("status code %d is invalid, only 302 and 301 are supported", code))
	}
	if rd.Port != nil {
		out.Port = ptr(uint32(*rd.Port))
	}
	ff.redirect = out
	return nil
}

func (ff *ruleFilters) urlRewrite(rw *gwapiv1.HTTPURLRewriteFilter) *filterErr {
	if rw == nil {
		return nil
	}
	if cur := (*ruleRewrite)(ff.rewrite); cur != nil {
		rewrites := rw.Hostname != nil || rw.Path != nil
		if (cur.coreRewrites() && rewrites) || (rw.Hostname != nil && cur.Host != nil) || (rw.Path != nil && cur.extensionPath()) {
			return acceptedErr(msgMultipleRewrites)
		}
	}
	if rw.Hostname != nil {
		if err := validateFilterHostname(string(*rw.Hostname)); err != nil {
			return acceptedErr(err.Error())
		}
		if ff.rewrite == nil {
			ff.rewrite = &ir.URLRewrite{}
		}
		if ff.rewrite.Hostname == nil {
			ff.rewrite.Hostname = ptr(string(*rw.Hostname))
		}
	}
	if p := rw.Path; p != nil {
		var pm *ir.PathModifier
		switch p.Type {
		case gwapiv1.FullPathHTTPPathModifier:
			switch {
			case p.ReplacePrefixMatch != nil:
				return acceptedErr(`ReplacePrefixMatch cannot be set when rewrite path type is "ReplaceFullPath"`)
			case p.ReplaceFullPath == nil:
				return acceptedErr(`ReplaceFullPath must be set when rewrite path type is "ReplaceFullPath"`)
			}
			pm = &ir.PathModifier{FullReplace: ptr(*p.ReplaceFullPath)}
		case gwapiv1.PrefixMatchHTTPPathModifier:
			switch {
			case p.ReplaceFullPath != nil:
				return acceptedErr(`ReplaceFullPath cannot be set when rewrite path type is "ReplacePrefixMatch"`)
			case p.ReplacePrefixMatch == nil:
				return acceptedErr(`ReplacePrefixMatch must be set when rewrite path type is "ReplacePrefixMatch"`)
			}
			pm = &ir.PathModifier{PrefixMatchReplace: ptr(*p.ReplacePrefixMatch)}
		default:
			return acceptedErr(fmt.Sprintf("rewrite path type: %s is invalid, only \"ReplaceFullPath\" and \"ReplacePrefixMatch\" are supported", p.Type))
		}
		if ff.rewrite == nil {
			ff.rewrite = &ir.URLRewrite{}
		}
		if ff.rewrite.Path == nil {
			ff.rewrite.Path = pm
		}
	}
	return nil
}

// corsFilter takes a rule's CORS filter (Gateway API) in EG's SecurityPolicy shape, which
// the xDS stage turns into the route's CORS policy: origins with "*" become regexes, maxAge
// is in seconds and always given. The CRD defaults maxAge to 5 and refuses 0, so 0 here is
// an unset field: the default is applied, as the API server does.
func (ff *ruleFilters) corsFilter(c *gwapiv1.HTTPCORSFilter) {
	if c == nil {
		return
	}
	maxAge := c.MaxAge
	if maxAge == 0 {
		maxAge = 5
	}
	out := &egv1a1.CORS{
		AllowCredentials: ptr(c.AllowCredentials != nil && *c.AllowCredentials),
		MaxAge:           ptr(gwapiv1.Duration(fmt.Sprintf("%ds", maxAge))),
	}
	for _, o := range c.AllowOrigins {
		out.AllowOrigins = append(out.AllowOrigins, egv1a1.Origin(o))
	}
	for _, m := range c.AllowMethods {
		out.AllowMethods = append(out.AllowMethods, string(m))
	}
	for _, h := range c.AllowHeaders {
		out.AllowHeaders = append(out.AllowHeaders, string(h))
	}
	for _, h := range c.ExposeHeaders {
		out.ExposeHeaders = append(out.ExposeHeaders, string(h))
	}
	ff.cors = out
}

const msgMultipleRewrites = "cannot configure multiple urlRewrite filters for a single HTTPRouteRule"

// coreRewrites: a URLRewrite filter of Gateway API already rewrites the host or the path.
func (rw *ruleRewrite) coreRewrites() bool { return rw.Hostname != nil || rw.corePath() }

// corePath: a URLRewrite filter of Gateway API already rewrites the path.
func (rw *ruleRewrite) corePath() bool {
	return rw.Path != nil && (rw.Path.FullReplace != nil || rw.Path.PrefixMatchReplace != nil)
}

// extensionPath: an HTTPRouteFilter already rewrites the path.
func (rw *ruleRewrite) extensionPath() bool {
	return rw.Path != nil && rw.Path.RegexMatchReplace != nil
}

// extensionRewrite applies an HTTPRouteFilter's urlRewrite: the path by regular expression,
// the host from a header, the backend or the path, and whether x-forwarded-host is kept. A
// part another filter of the rule rewrites already refuses the rule, as EG does; within
// the rules EG checks, the first filter to rewrite a part wins.
func (ff *ruleFilters) extensionRewrite(rw *egv1a1.HTTPURLRewriteFilter) *filterErr {
	if rw == nil {
		return nil
	}
	if cur := (*ruleRewrite)(ff.rewrite); cur != nil {
		rewrites := rw.Hostname != nil || rw.Path != nil
		if ((cur.Host != nil || cur.extensionPath()) && rewrites) ||
			(rw.Hostname != nil && cur.Hostname != nil) || (rw.Path != nil && cur.corePath()) {
			return acceptedErr(msgMultipleRewrites)
		}
	}
	if p := rw.Path; p != nil && p.Type == egv1a1.RegexHTTPPathModifier {
		rr, err := regexReplace(p.ReplaceRegexMatch, `ReplaceRegexMatch Pattern must be set when rewrite path type is "ReplaceRegexMatch"`,
			"ReplaceRegexMatch must be a valid RE2 regular expression")
		if err != nil {
			return err
		}
		ff.rewriteOf().setPath(&ir.PathModifier{RegexMatchReplace: rr})
	}
	if h := rw.Hostname; h != nil {
		var hm *ir.HostModifier
		switch h.Type {
		case egv1a1.HeaderHTTPHostnameModifier:
			if h.Header == nil {
				return acceptedErr(`Header must be set when rewrite path type is "Header"`)
			}
			hm = &ir.HostModifier{Header: ptr(*h.Header)}
		case egv1a1.BackendHTTPHostnameModifier:
			hm = &ir.HostModifier{Backend: true}
		case egv1a1.PathRegexHTTPHostnameModifier:
			if h.PathRegex == nil || h.PathRegex.Substitution == "" {
				return acceptedErr(`PathRegex Pattern and Substitution must be set when rewrite hostname type is "PathRegex"`)
			}
			rr, err := regexReplace(&egv1a1.ReplaceRegexMatch{Pattern: h.PathRegex.Pattern, Substitution: h.PathRegex.Substitution},
				`PathRegex Pattern and Substitution must be set when rewrite hostname type is "PathRegex"`,
				"PathRegex must be a valid RE2 regular expression")
			if err != nil {
				return err
			}
			hm = &ir.HostModifier{PathRegex: rr}
		}
		if r := ff.rewriteOf(); r.Host == nil {
			r.Host = hm
		}
	}
	if rw.AppendXForwardedHost != nil {
		ff.rewriteOf().AppendXForwardedHost = ptr(*rw.AppendXForwardedHost)
	}
	return nil
}

// regexReplace checks an HTTPRouteFilter's pattern and substitution: a pattern must be
// given (missing) and compile as RE2 (invalid), which keeps Envoy from refusing the route.
func regexReplace(m *egv1a1.ReplaceRegexMatch, missing, invalid string) (*ir.RegexReplace, *filterErr) {
	if m == nil || m.Pattern == "" {
		return nil, acceptedErr(missing)
	}
	if _, err := regexp.Compile(m.Pattern); err != nil {
		return nil, acceptedErr(invalid)
	}
	return &ir.RegexReplace{Pattern: m.Pattern, Substitution: m.Substitution}, nil
}

// rewriteOf is the rule's URL rewrite, made on first use.
func (ff *ruleFilters) rewriteOf() *ruleRewrite {
	if ff.rewrite == nil {
		ff.rewrite = &ir.URLRewrite{}
	}
	return (*ruleRewrite)(ff.rewrite)
}

// ruleRewrite is the rule's ir.URLRewrite with the checks filters make on it.
type ruleRewrite ir.URLRewrite

// setPath sets the path rewrite unless a filter before set one.
func (rw *ruleRewrite) setPath(p *ir.PathModifier) {
	if rw.Path == nil {
		rw.Path = p
	}
}

// requestMirror resolves the mirror's backend into a cluster of its own, named
// <rule cluster>-mirror-<filter index>, whose one locality is .../backend/-1.
func (rt *routeTranslator) requestMirror(ff *ruleFilters, in filterInput, idx int, m *gwapiv1.HTTPRequestMirrorFilter) *filterErr {
	if m == nil {
		return nil
	}
	name := fmt.Sprintf("%s-mirror-%d", in.cluster, idx)
	br := gwapiv1.BackendRef{BackendObjectReference: m.BackendRef, Weight: ptr(int32(1))}
	b, err := rt.resolveBackend(in.routeKind, in.routeNS, br, name, -1)
	if err != nil {
		if err.reason == "UnsupportedValue" {
			// An ExternalName Service passes EG's reference checks and fails later, unwrapped.
			return &filterErr{typ: errResolvedRefs, reason: err.reason, msg: err.msg}
		}
		return &filterErr{typ: errResolvedRefs, reason: err.reason, msg: "failed to validate the RequestMirror filter: " + err.msg}
	}
	if len(b.Endpoints) == 0 {
		return &filterErr{typ: errBackendsAvailable, reason: "EndpointsNotFound",
			msg: fmt.Sprintf("failed to validate the RequestMirror filter: no ready endpoints for the related Service %s/%s", b.Namespace, b.ServiceName)}
	}
	// a GRPCRoute's mirror speaks HTTP/2 upstream, like the rule's own cluster
	mirror := &ir.Mirror{Destination: &ir.Destination{Name: name, Settings: []*ir.Backend{b}, HTTP2: in.routeKind == "GRPCRoute"}}
	switch {
	case m.Fraction != nil:
		den := int32(100)
		if m.Fraction.Denominator != nil {
			den = *m.Fraction.Denominator
		}
		mirror.Percent = ptr(100 * float32(m.Fraction.Numerator) / float32(den))
	case m.Percent != nil:
		mirror.Percent = ptr(float32(*m.Percent))
	}
	ff.mirrors = append(ff.mirrors, mirror)
	return nil
}

// extensionRef applies an HTTPRouteFilter (gateway.envoyproxy.io) of the route's namespace:
// its URL rewrite, direct response and credential injection, in EG's order (its matches are
// taken by filterMatches).
func (rt *routeTranslator) extensionRef(ff *ruleFilters, in filterInput, ref *gwapiv1.LocalObjectReference) *filterErr {
	hrf := rt.ix.httpRouteFilters[types.NamespacedName{Namespace: in.routeNS, Name: string(ref.Name)}]
	if hrf == nil {
		ff.direct = &ir.DirectResponse{Status: 500}
		return &filterErr{typ: errResolvedRefs, reason: "UnsupportedValue",
			msg: fmt.Sprintf("Unable to translate HTTPRouteFilter: %s/%s", in.routeNS, ref.Name)}
	}
	// One rule takes the extra matches of one HTTPRouteFilter: EG refuses a second filter
	// with matches, and the rule with it (EG's testdata: httproute-filter-match-matrix).
	if len(hrf.Spec.Matches) > 0 {
		if ff.matchFilter {
			return acceptedErr("only one HTTPRouteFilter with matches is supported per HTTPRouteRule")
		}
		ff.matchFilter = true
	}
	if e := ff.extensionRewrite(hrf.Spec.URLRewrite); e != nil {
		return e
	}
	if e := rt.filterDirectResponse(ff, in, hrf); e != nil {
		return e
	}
	if ci := hrf.Spec.CredentialInjection; ci != nil {
		cred, err := rt.injectedCredential(hrf.Namespace, ci.Credential.ValueRef)
		if err != nil {
			ff.direct = &ir.DirectResponse{Status: 500}
			return acceptedErr(fmt.Sprintf("invalid filter %s: %v", ref.Kind, err))
		}
		ff.credential = &ir.CredentialInjection{Name: "httproutefilter/" + hrf.Namespace + "/" + hrf.Name,
			Header: ci.Header, Overwrite: ci.Overwrite, Credential: cred}
	}
	return nil
}

// filterDirectResponse applies an HTTPRouteFilter's directResponse.
func (rt *routeTranslator) filterDirectResponse(ff *ruleFilters, in filterInput, hrf *egv1a1.HTTPRouteFilter) *filterErr {
	dr := hrf.Spec.DirectResponse
	if dr == nil {
		return nil
	}
	out := &ir.DirectResponse{Status: 200}
	if dr.Body != nil {
		body, err := rt.directResponseBody(dr.Body, in.routeNS)
		if err != nil {
			ff.direct = &ir.DirectResponse{Status: 500}
			return acceptedErr(fmt.Sprintf("invalid filter %s: %v", egv1a1.KindHTTPRouteFilter, err))
		}
		out.Body = body
	}
	if dr.StatusCode != nil {
		out.Status = uint32(*dr.StatusCode)
	}
	if dr.ContentType != nil {
		ff.addResponse = append(ff.addResponse, ir.AddHeader{Name: "Content-Type", Value: *dr.ContentType})
	}
	ff.direct = out
	if h := dr.Header; h != nil {
		for _, a := range h.Add {
			ff.addResponse = append(ff.addResponse, ir.AddHeader{Name: string(a.Name), Value: a.Value, Append: true})
		}
		for _, s := range h.Set {
			ff.addResponse = append(ff.addResponse, ir.AddHeader{Name: string(s.Name), Value: s.Value})
		}
	}
	return nil
}

// injectedCredential reads the "credential" key of the Secret an HTTPRouteFilter's
// credentialInjection names: in the filter's namespace, or another one a ReferenceGrant
// opens to HTTPRouteFilters, with EG's messages.
func (rt *routeTranslator) injectedCredential(ns string, ref gwapiv1.SecretObjectReference) ([]byte, error) {
	if ref.Group != nil && *ref.Group != "" {
		return nil, errors.New("secret ref group must be unspecified/empty")
	}
	kind := "Secret"
	if ref.Kind != nil {
		kind = string(*ref.Kind)
	}
	if kind != "Secret" && kind != "ConfigMap" { // EG lets a ConfigMap through to the Secret lookup
		return nil, errors.New("secret ref kind must be Secret")
	}
	target := ns
	if ref.Namespace != nil && *ref.Namespace != "" && string(*ref.Namespace) != ns {
		target = string(*ref.Namespace)
		if !rt.permittedFrom(egv1a1.GroupName, egv1a1.KindHTTPRouteFilter, ns, "", kind, target, string(ref.Name)) {
			return nil, fmt.Errorf("ref to %s %s/%s not permitted by any ReferenceGrant", kind, target, ref.Name)
		}
	}
	s := rt.ix.secrets[types.NamespacedName{Namespace: target, Name: string(ref.Name)}]
	if s == nil {
		return nil, fmt.Errorf("secret %s/%s does not exist", target, ref.Name)
	}
	v := secretData(s, egv1a1.InjectedCredentialKey)
	if len(v) == 0 {
		return nil, fmt.Errorf("credential key %s not found in secret %s/%s", egv1a1.InjectedCredentialKey, s.Namespace, s.Name)
	}
	return v, nil
}

// directResponseBody reads an inline body or the ConfigMap a body refers to (its
// "response.body" key, else its only value).
func (rt *routeTranslator) directResponseBody(b *egv1a1.CustomResponseBody, ns string) (string, error) {
	if b.Type != nil && *b.Type == egv1a1.ResponseValueTypeValueRef {
		name := ""
		if b.ValueRef != nil {
			name = string(b.ValueRef.Name)
		}
		cm := rt.ix.configMaps[types.NamespacedName{Namespace: ns, Name: name}]
		if cm == nil {
			return "", fmt.Errorf("can't find the referenced configmap %s/%s", ns, name)
		}
		if v, ok := cm.Data["response.body"]; ok {
			return v, nil
		}
		// EG takes "the first" value of a Go map; with several keys that is not stable, so
		// the reference takes the first key in order.
		if len(cm.Data) > 0 {
			keys := make([]string, 0, len(cm.Data))
			for k := range cm.Data {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			return cm.Data[keys[0]], nil
		}
		if len(cm.BinaryData) > 0 {
			keys := make([]string, 0, len(cm.BinaryData))
			for k := range cm.BinaryData {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			return string(cm.BinaryData[keys[0]]), nil
		}
		return "", fmt.Errorf("can't find the key response.body in the referenced configmap %s/%s", ns, name)
	}
	if b.Inline != nil {
		return *b.Inline, nil
	}
	return "", nil
}

// ruleTimeouts maps timeouts and retry: timeouts.request is the route timeout unless
// timeouts.backendRequest is set without a retry, which then replaces it (even "0s"); with
// a retry, backendRequest is the per-try timeout (with or without backoff).
func ruleTimeouts(rule gwapiv1.HTTPRouteRule) (*time.Duration, *ir.Retry) {
	var timeout *time.Duration
	parse := func(d gwapiv1.Duration) time.Duration {
		v, err := time.ParseDuration(string(d))
		if err != nil {
			v = 15 * time.Second // EG's fallback; the CRD pattern keeps it unreachable
		}
		return v
	}
	if t := rule.Timeouts; t != nil {
		if t.Request != nil {
			timeout = ptr(parse(*t.Request))
		}
		if t.BackendRequest != nil && rule.Retry == nil {
			timeout = ptr(parse(*t.BackendRequest))
		}
	}
	rr := rule.Retry
	if rr == nil {
		return timeout, nil
	}
	out := &ir.Retry{}
	if rr.Attempts != nil {
		out.NumRetries = ptr(uint32(*rr.Attempts))
	}
	if rr.Backoff != nil {
		if d, err := time.ParseDuration(string(*rr.Backoff)); err == nil {
			out.BackOff = &d
		}
	}
	if t := rule.Timeouts; t != nil && t.BackendRequest != nil {
		if d, err := time.ParseDuration(string(*t.BackendRequest)); err == nil {
			out.PerTryTimeout = &d
		}
	}
	for _, c := range rr.Codes {
		out.Codes = append(out.Codes, uint32(c))
	}
	return timeout, out
}

// backendFilters checks and reads each backendRef's own filters. A filter EG does not
// support there makes the backend invalid (that check comes before every other one, so it
// replaces the backend's own error); a filter that fails only when applied makes an
// otherwise valid backend invalid. Valid filters go on the backend's setting.
func (rt *routeTranslator) backendFilters(rc *ruleCtx, dest *ir.Destination, in filterInput, refs []gwapiv1.HTTPBackendRef) {
	byBackend := map[int]refError{}
	var order []int
	prefixOf := func(k int) string {
		return fmt.Sprintf("failed to process route rule %d backendRef %d: ", in.ruleIdx, k)
	}
	// The rule's errors so far are its backends' own, in backendRef order.
	for _, e := range rc.errors {
		for k := range refs {
			if strings.HasPrefix(e.msg, prefixOf(k)) {
				byBackend[k] = e
				order = append(order, k)
				break
			}
		}
	}
	changed := false
	setting := func(k int) *ir.Backend {
		name := fmt.Sprintf("%s/backend/%d", dest.Name, k)
		for _, s := range dest.Settings {
			if s.Name == name {
				return s
			}
		}
		return nil
	}
	invalidate := func(k int, reason, msg string) {
		if _, had := byBackend[k]; !had {
			order = append(order, k)
		}
		byBackend[k] = refError{reason: reason, msg: prefixOf(k) + msg}
		changed = true
		if s := setting(k); s != nil {
			s.Invalid, s.Endpoints = true, nil
		}
	}
	for k, br := range refs {
		if len(br.Filters) == 0 {
			continue
		}
		if e := backendFilterSupport(br.Filters); e != nil {
			invalidate(k, e.reason, e.msg)
			continue
		}
		if _, bad := byBackend[k]; bad {
			continue // EG stops at the backend's own problem before reading its filters
		}
		s := setting(k)
		if s == nil {
			continue // weight 0: EG reads no filters for it
		}
		ff, errs := rt.processFilters(filterInput{routeNS: in.routeNS, routeName: in.routeName, cluster: in.cluster}, br.Filters)
		if len(errs) > 0 {
			msgs := make([]string, len(errs))
			for i, e := range errs {
				msgs[i] = e.msg
			}
			invalidate(k, "InvalidBackendFilters", strings.Join(msgs, "\n"))
			continue
		}
		bf := &ir.BackendFilters{AddRequestHeaders: ff.addRequest, RemoveRequestHeaders: ff.removeRequest,
			AddResponseHeaders: ff.addResponse, RemoveResponseHeaders: ff.removeResponse}
		if ff.rewrite != nil {
			bf.HostRewrite = ff.rewrite.Hostname
		}
		s.Filters = bf
	}
	if !changed {
		return
	}
	sort.Ints(order)
	rebuilt := make([]refError, 0, len(order))
	for _, k := range order {
		rebuilt = append(rebuilt, byBackend[k])
	}
	rc.errors = rebuilt
}

// backendFilterSupport is EG's first backendRef check: only header modifiers, a URL
// rewrite without path, and HTTPRouteFilter references are allowed on a backendRef.
func backendFilterSupport(filters []gwapiv1.HTTPRouteFilter) *refError {
	unsupported := false
	for i := range filters {
		f := &filters[i]
		if validateFilterKind(f) != nil {
			unsupported = true
			continue
		}
		if f.Type == gwapiv1.HTTPRouteFilterURLRewrite && f.URLRewrite != nil && f.URLRewrite.Path != nil {
			return &refError{reason: "UnsupportedRefValue", msg: msgBackendPathRewrite}
		}
		switch f.Type {
		case gwapiv1.HTTPRouteFilterRequestHeaderModifier, gwapiv1.HTTPRouteFilterResponseHeaderModifier,
			gwapiv1.HTTPRouteFilterExtensionRef, gwapiv1.HTTPRouteFilterURLRewrite:
		default:
			unsupported = true
		}
	}
	if unsupported {
		return &refError{reason: "UnsupportedRefValue", msg: msgBackendFilterNotSupported}
	}
	return nil
}

// apply gives one IR route of the rule what the filters decided. It runs after the route's
// backends are settled: a failed filter answers 500 whatever the backends; an HTTPRouteFilter
// direct response or a redirect answers instead of the backends.
func (ff *ruleFilters) apply(route *ir.HTTPRoute) {
	if ff == nil {
		return
	}
	route.AddRequestHeaders = ff.addRequest
	route.RemoveRequestHeaders = ff.removeRequest
	route.AddResponseHeaders = ff.addResponse
	route.RemoveResponseHeaders = ff.removeResponse
	route.URLRewrite = ff.rewrite
	route.CredentialInjection = ff.credential
	route.CORS = ff.cors
	route.Mirrors = ff.mirrors
	route.Timeout = ff.timeout
	route.Retry = ff.retry
	switch {
	case ff.failed:
		route.DirectResponse, route.Destination, route.Redirect = &ir.DirectResponse{Status: 500}, nil, nil
	case ff.direct != nil:
		route.DirectResponse, route.Destination = ff.direct, nil
	case ff.redirect != nil:
		route.Redirect, route.DirectResponse, route.Destination = ff.redirect, nil, nil
	}
}

// filterConditions writes the route conditions of the rules' Accepted and
// BackendsAvailable filter errors on a parent entry: every rule dropped makes Accepted
// False with the errors; some dropped add PartiallyInvalid naming them, and Accepted stays.
// A parent whose hostnames do not intersect keeps that Accepted=False reason, as EG sets
// it afterwards.
// allRulesDropped says whether a route has rules and every one was dropped for an Accepted
// problem: the route is then Accepted=False.
func allRulesDropped(rules []*ruleCtx) bool {
	if len(rules) == 0 {
		return false
	}
	for _, rc := range rules {
		if rc.filters == nil || !rc.filters.dropped {
			return false
		}
		accepted := false
		for _, e := range rc.filters.errs {
			accepted = accepted || e.typ == errAccepted
		}
		if !accepted {
			return false
		}
	}
	return true
}

func filterConditions(ps *result.ParentStatus, rules []*ruleCtx) {
	var accepted, available refErrors
	var dropped []int
	for i, rc := range rules {
		if rc.filters != nil {
			if rc.filters.dropped {
				dropped = append(dropped, i)
			}
			for _, e := range rc.filters.errs {
				switch e.typ {
				case errAccepted:
					accepted.add(e.reason, e.msg)
				case errBackendsAvailable:
					available.add(e.reason, e.msg)
				}
			}
		}
		// EG processes a rule's filters before its backendRefs
		for _, e := range rc.noEndpoints {
			available.add(e.reason, e.msg)
		}
	}
	if !accepted.empty() {
		c := accepted.condition("Accepted")
		noHost := false
		for _, cur := range ps.Conditions {
			noHost = noHost || cur.Type == "Accepted" && cur.Reason == "NoMatchingListenerHostname"
		}
		switch {
		case len(dropped) == len(rules):
			if !noHost {
				ps.Conditions = conditions.Set(ps.Conditions, c)
			}
		default:
			ps.Conditions = conditions.Set(ps.Conditions, conditions.New("PartiallyInvalid", "True", c.Reason,
				fmt.Sprintf("Dropped Rule(s) %v: %s", dropped, c.Message)))
			if !noHost {
				ps.Conditions = conditions.Set(ps.Conditions, conditions.New("Accepted", "True", "Accepted", msgRouteAccepted))
			}
		}
	}
	if !available.empty() {
		ps.Conditions = conditions.Set(ps.Conditions, available.condition("BackendsAvailable"))
	}
}

// filterMatches are the extra match sets that HTTPRouteFilters referenced by extensionRef
// add to a rule (today: cookies). Each of the rule's matches is combined with each of them:
// match j with filter match k becomes match j*len(filter matches)+k (RT-15, GR-04).
func (rt *routeTranslator) filterMatches(ns string, refs []*gwapiv1.LocalObjectReference) [][]*ir.StringMatch {
	var out [][]*ir.StringMatch
	for _, ref := range refs {
		if ref == nil || string(ref.Group) != egv1a1.GroupName || string(ref.Kind) != egv1a1.KindHTTPRouteFilter {
			continue
		}
		hrf := rt.ix.httpRouteFilters[types.NamespacedName{Namespace: ns, Name: string(ref.Name)}]
		if hrf == nil {
			continue
		}
		for _, m := range hrf.Spec.Matches {
			var cookies []*ir.StringMatch
			for _, c := range m.Cookies {
				v := c.Value
				sm := &ir.StringMatch{Name: c.Name}
				if c.Type != nil && *c.Type == egv1a1.CookieMatchRegularExpression {
					sm.SafeRegex = &v
				} else {
					sm.Exact = &v
				}
				cookies = append(cookies, sm)
			}
			out = append(out, cookies)
		}
		if len(hrf.Spec.Matches) > 0 {
			// EG refuses a second filter with matches (extensionRef) and keeps the
			// first one's: egctl v1.9.1 builds the rule's routes from them alone.
			break
		}
	}
	return out
}

// grpcRuleAsHTTP gives a GRPCRoute rule's filters and backendRefs the shape of an HTTPRoute
// rule, so that both go through one filter processing (EG shares it too). The filter types
// a GRPCRoute allows (header modifiers, mirror, extensionRef) have the same fields.
func grpcRuleAsHTTP(r *gwapiv1.GRPCRoute, rule gwapiv1.GRPCRouteRule) (*gwapiv1.HTTPRoute, gwapiv1.HTTPRouteRule) {
	conv := func(fs []gwapiv1.GRPCRouteFilter) []gwapiv1.HTTPRouteFilter {
		out := make([]gwapiv1.HTTPRouteFilter, 0, len(fs))
		for _, f := range fs {
			out = append(out, gwapiv1.HTTPRouteFilter{
				Type:                   gwapiv1.HTTPRouteFilterType(f.Type),
				RequestHeaderModifier:  f.RequestHeaderModifier,
				ResponseHeaderModifier: f.ResponseHeaderModifier,
				RequestMirror:          f.RequestMirror,
				ExtensionRef:           f.ExtensionRef,
			})
		}
		return out
	}
	hr := &gwapiv1.HTTPRoute{TypeMeta: r.TypeMeta, ObjectMeta: r.ObjectMeta}
	hr.Kind = "GRPCRoute"
	hrule := gwapiv1.HTTPRouteRule{Name: rule.Name, Filters: conv(rule.Filters)}
	for _, br := range rule.BackendRefs {
		hrule.BackendRefs = append(hrule.BackendRefs, gwapiv1.HTTPBackendRef{BackendRef: br.BackendRef, Filters: conv(br.Filters)})
	}
	return hr, hrule
}
