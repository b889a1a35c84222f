package gatewayapi

import (
	"fmt"
	"sort"
	"strings"

	gwapiv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/egharness/egharness/translator/ir"
)

// Filters that reach backends: request mirrors, and the filters of a backendRef itself.

// requestMirror resolves the mirror's backend into a cluster of its own, named
// <rule cluster>-mirror-<filter index>, whose one locality is .../backend/-1.
func (translation *routeTranslator) requestMirror(filters *ruleFilters, in filterInput, idx int,
	m *gwapiv1.HTTPRequestMirrorFilter) *filterErr {
	if m == nil {
		return nil
	}
	name := fmt.Sprintf("%s-mirror-%d", in.cluster, idx)
	backendRef := gwapiv1.BackendRef{BackendObjectReference: m.BackendRef, Weight: ptr(int32(1))}
	b, err := translation.resolveBackend(in.routeKind, in.routeNS, backendRef, name, -1)
	if err != nil {
		if err.reason == "UnsupportedValue" {
			// An ExternalName Service passes EG's reference checks and fails later, unwrapped.
			return &filterErr{typ: errResolvedRefs, reason: err.reason, msg: err.msg}
		}
		return &filterErr{typ: errResolvedRefs, reason: err.reason,
			msg: "failed to validate the RequestMirror filter: " + err.msg}
	}
	if len(b.Endpoints) == 0 {
		return &filterErr{typ: errBackendsAvailable, reason: "EndpointsNotFound",
			msg: fmt.Sprintf("failed to validate the RequestMirror filter: no ready endpoints for the related Service %s/%s",
				b.Namespace, b.ServiceName)}
	}
	// a GRPCRoute's mirror speaks HTTP/2 upstream, like the rule's own cluster
	mirror := &ir.Mirror{Destination: &ir.Destination{Name: name, Settings: []*ir.Backend{b},
		HTTP2: in.routeKind == "GRPCRoute"}}
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
	filters.mirrors = append(filters.mirrors, mirror)
	return nil
}

// backendFilters checks and reads each backendRef's own filters. A filter EG does not
// support there makes the backend invalid (that check comes before every other one, so it
// replaces the backend's own error); a filter that fails only when applied makes an
// otherwise valid backend invalid. Valid filters go on the backend's setting.
func (translation *routeTranslator) backendFilters(resolvedRule *ruleCtx, dest *ir.Destination, in filterInput,
	refs []gwapiv1.HTTPBackendRef) {
	byBackend := map[int]refError{}
	var order []int
	prefixOf := func(k int) string {
		return fmt.Sprintf("failed to process route rule %d backendRef %d: ", in.ruleIdx, k)
	}
	// The rule's errors so far are its backends' own, in backendRef order.
	for _, e := range resolvedRule.errors {
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
	for k, backendRef := range refs {
		if len(backendRef.Filters) == 0 {
			continue
		}
		if e := backendFilterSupport(backendRef.Filters); e != nil {
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
		filters, errs := translation.processFilters(
			filterInput{routeNS: in.routeNS, routeName: in.routeName, cluster: in.cluster}, backendRef.Filters)
		if len(errs) > 0 {
			msgs := make([]string, len(errs))
			for i, e := range errs {
				msgs[i] = e.msg
			}
			invalidate(k, "InvalidBackendFilters", strings.Join(msgs, "\n"))
			continue
		}
		bf := &ir.BackendFilters{AddRequestHeaders: filters.addRequest, RemoveRequestHeaders: filters.removeRequest,
			AddResponseHeaders: filters.addResponse, RemoveResponseHeaders: filters.removeResponse}
		if filters.rewrite != nil {
			bf.HostRewrite = filters.rewrite.Hostname
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
	resolvedRule.errors = rebuilt
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
