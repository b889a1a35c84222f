package gatewayapi

import (
	"errors"
	"fmt"
	"time"

	egv1a1 "github.com/envoyproxy/gateway/api/v1alpha1"
	gwapiv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/egharness/egharness/translator/conditions"
	"github.com/egharness/egharness/translator/ir"
	"github.com/egharness/egharness/translator/result"
)

// HTTPRoute rule filters, as EG v1.9 translates them: this file reads a rule's filters and
// reports their errors; each kind of filter is in filters_headers.go (header modifiers,
// CORS), filters_rewrite.go (redirects, URL rewrites), filters_extension.go (EG's
// HTTPRouteFilter) and filters_backend.go (mirrors, backendRef filters). Timeouts and
// retries are in rules.go.
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
	msgMirrorWithDirectResponse = "RequestMirror filter cannot be used when the rule also " +
		"configures a DirectResponse filter"
	msgMirrorWithRedirect = "RequestMirror filter cannot be used when the rule also " +
		"configures a RequestRedirect filter"
	msgBackendFilterNotSupported = "Specific filter is not supported within BackendRef, only RequestHeaderModifier, " +
		"ResponseHeaderModifier, URLRewrite and gateway.envoyproxy.io/HTTPRouteFilter are supported"
	msgBackendPathRewrite    = "URLRewrite path modifier is not supported within BackendRef"
	msgGRPCDirectResponse2xx = "DirectResponse with a 2xx status code is not supported for GRPCRoute: a 2xx status " +
		"maps to the gRPC OK status, " +
		"but a direct response cannot carry a gRPC response message, so the client would receive an invalid response. " +
		"Use a non-2xx status code to deny or block the request instead"
)

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
	cors           *ir.CORS
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
// type ResolvedRefs join resolvedRule.errors ahead of the rule's backend errors, as EG lists them;
// the others are kept on resolvedRule for the route's conditions.
func (translation *routeTranslator) ruleFilters(resolvedRule *ruleCtx, dest *ir.Destination, r *gwapiv1.HTTPRoute,
	ruleIdx int, rule gwapiv1.HTTPRouteRule) *ruleFilters {
	in := filterInput{routeKind: r.Kind, routeNS: r.Namespace, routeName: r.Name, ruleIdx: ruleIdx, cluster: dest.Name}
	if in.routeKind == "" {
		in.routeKind = "HTTPRoute"
	}
	filters, errs := translation.processFilters(in, rule.Filters)
	filters.timeout, filters.retry = ruleTimeouts(rule)
	translation.backendFilters(resolvedRule, dest, in, rule.BackendRefs)

	var resolved []refError
	for _, e := range errs {
		if e.typ != errBackendsAvailable {
			filters.failed = true
		}
		if e.typ == errAccepted {
			filters.dropped = true
		}
		if e.typ == errResolvedRefs {
			resolved = append(resolved, refError{reason: e.reason, msg: e.msg})
			continue
		}
		filters.errs = append(filters.errs, e)
	}
	resolvedRule.errors = append(resolved, resolvedRule.errors...)
	resolvedRule.filters = filters
	return filters
}

// processFilters runs a filter list the way EG does: in order, stopping after a filter that
// makes the rule answer directly (an invalid filter, or an HTTPRouteFilter direct response).
func (translation *routeTranslator) processFilters(in filterInput,
	routeFilters []gwapiv1.HTTPRouteFilter) (*ruleFilters, []filterErr) {
	filters := &ruleFilters{}
	var errs typedErrs
	for i := range routeFilters {
		f := &routeFilters[i]
		if filters.direct != nil {
			break
		}
		if err := validateFilterKind(f); err != nil {
			filters.direct = &ir.DirectResponse{Status: 500}
			errs.add(errAccepted, "UnsupportedValue", fmt.Sprintf("invalid filter %s: %v", f.Type, err))
			continue
		}
		var e *filterErr
		switch f.Type {
		case gwapiv1.HTTPRouteFilterRequestHeaderModifier:
			e = filters.requestHeaders(f.RequestHeaderModifier)
		case gwapiv1.HTTPRouteFilterResponseHeaderModifier:
			e = filters.responseHeaders(f.ResponseHeaderModifier)
		case gwapiv1.HTTPRouteFilterRequestRedirect:
			e = filters.requestRedirect(f.RequestRedirect)
		case gwapiv1.HTTPRouteFilterURLRewrite:
			e = filters.urlRewrite(f.URLRewrite)
		case gwapiv1.HTTPRouteFilterRequestMirror:
			e = translation.requestMirror(filters, in, i, f.RequestMirror)
		case gwapiv1.HTTPRouteFilterExtensionRef:
			e = translation.extensionRef(filters, in, f.ExtensionRef)
		case gwapiv1.HTTPRouteFilterCORS:
			filters.corsFilter(f.CORS)
		}
		if e != nil {
			errs.add(e.typ, e.reason, e.msg)
		}
	}
	// A mirror cannot go with a rule that answers by itself.
	if filters.direct != nil && len(filters.mirrors) > 0 {
		filters.direct, filters.mirrors = nil, nil
		errs.add(errAccepted, "IncompatibleFilters", msgMirrorWithDirectResponse)
	}
	if filters.redirect != nil && len(filters.mirrors) > 0 {
		filters.redirect, filters.mirrors = nil, nil
		errs.add(errAccepted, "IncompatibleFilters", msgMirrorWithRedirect)
	}
	// gRPC says success with a grpc-status trailer and a message, which a direct response
	// cannot carry: EG refuses a 2xx direct response on a GRPCRoute rule (EG's testdata:
	// grpcroute-with-direct-response-2xx-invalid); deny-style statuses stay.
	if in.routeKind == "GRPCRoute" && filters.direct != nil && filters.direct.Status >= 200 &&
		filters.direct.Status < 300 {
		filters.direct = nil
		errs.add(errAccepted, "UnsupportedValue", msgGRPCDirectResponse2xx)
	}
	return filters, errs.merged()
}

// validateFilterKind refuses the filter types EG does not translate and ExtensionRefs to
// kinds it does not know (egctl runs with no extension server).
func validateFilterKind(f *gwapiv1.HTTPRouteFilter) error {
	switch f.Type {
	case gwapiv1.HTTPRouteFilterRequestMirror, gwapiv1.HTTPRouteFilterURLRewrite, gwapiv1.HTTPRouteFilterRequestRedirect,
		gwapiv1.HTTPRouteFilterRequestHeaderModifier, gwapiv1.HTTPRouteFilterResponseHeaderModifier,
		gwapiv1.HTTPRouteFilterCORS:
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

// apply gives one IR route of the rule what the filters decided. It runs after the route's
// backends are settled: a failed filter answers 500 whatever the backends; an HTTPRouteFilter
// direct response or a redirect answers instead of the backends.
func (filters *ruleFilters) apply(route *ir.HTTPRoute) {
	if filters == nil {
		return
	}
	route.AddRequestHeaders = filters.addRequest
	route.RemoveRequestHeaders = filters.removeRequest
	route.AddResponseHeaders = filters.addResponse
	route.RemoveResponseHeaders = filters.removeResponse
	route.URLRewrite = filters.rewrite
	route.CredentialInjection = filters.credential
	route.CORS = filters.cors
	route.Mirrors = filters.mirrors
	route.Timeout = filters.timeout
	route.Retry = filters.retry
	switch {
	case filters.failed:
		route.DirectResponse, route.Destination, route.Redirect = &ir.DirectResponse{Status: 500}, nil, nil
	case filters.direct != nil:
		route.DirectResponse, route.Destination = filters.direct, nil
	case filters.redirect != nil:
		route.Redirect, route.DirectResponse, route.Destination = filters.redirect, nil, nil
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
	for _, resolvedRule := range rules {
		if resolvedRule.filters == nil || !resolvedRule.filters.dropped {
			return false
		}
		accepted := false
		for _, e := range resolvedRule.filters.errs {
			accepted = accepted || e.typ == errAccepted
		}
		if !accepted {
			return false
		}
	}
	return true
}

func filterConditions(parentStatus *result.ParentStatus, rules []*ruleCtx) {
	var accepted, available refErrors
	var dropped []int
	for i, resolvedRule := range rules {
		if resolvedRule.filters != nil {
			if resolvedRule.filters.dropped {
				dropped = append(dropped, i)
			}
			for _, e := range resolvedRule.filters.errs {
				switch e.typ {
				case errAccepted:
					accepted.add(e.reason, e.msg)
				case errBackendsAvailable:
					available.add(e.reason, e.msg)
				}
			}
		}
		// EG processes a rule's filters before its backendRefs
		for _, e := range resolvedRule.noEndpoints {
			available.add(e.reason, e.msg)
		}
	}
	if !accepted.empty() {
		c := accepted.condition("Accepted")
		noHost := false
		for _, cur := range parentStatus.Conditions {
			noHost = noHost || cur.Type == "Accepted" && cur.Reason == "NoMatchingListenerHostname"
		}
		switch {
		case len(dropped) == len(rules):
			if !noHost {
				parentStatus.Conditions = conditions.Set(parentStatus.Conditions, c)
			}
		default:
			parentStatus.Conditions = conditions.Set(parentStatus.Conditions,
				conditions.New("PartiallyInvalid", "True", c.Reason,
					fmt.Sprintf("Dropped Rule(s) %v: %s", dropped, c.Message)))
			if !noHost {
				parentStatus.Conditions = conditions.Set(parentStatus.Conditions,
					conditions.New("Accepted", "True", "Accepted", msgRouteAccepted))
			}
		}
	}
	if !available.empty() {
		parentStatus.Conditions = conditions.Set(parentStatus.Conditions, available.condition("BackendsAvailable"))
	}
}
