package gatewayapi

import (
	gwapiv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/egharness/egharness/translator/ir"
)

// Route matches into IR matches: HTTPRoute path, header, query and method matches, and
// GRPCRoute service and method matches.

// applyGRPCMatch turns a GRPCRoute match into IR matchers.
func applyGRPCMatch(route *ir.HTTPRoute, m gwapiv1.GRPCRouteMatch) {
	for _, h := range m.Headers {
		v := h.Value
		sm := &ir.StringMatch{Name: string(h.Name)}
		if h.Type != nil && *h.Type == gwapiv1.GRPCHeaderMatchRegularExpression {
			sm.SafeRegex = &v
		} else {
			sm.Exact = &v
		}
		route.Headers = append(route.Headers, sm)
	}
	route.PathMatch = &ir.StringMatch{Prefix: ptr("/")}
	mm := m.Method
	if mm == nil {
		return
	}
	svc, method := mm.Service, mm.Method
	if mm.Type != nil && *mm.Type == gwapiv1.GRPCMethodMatchRegularExpression {
		switch {
		case svc != nil && method != nil:
			route.PathMatch = &ir.StringMatch{SafeRegex: ptr("/" + *svc + "/" + *method)}
		case method != nil:
			route.PathMatch = &ir.StringMatch{SafeRegex: ptr("/" + grpcServicePattern + "/" + *method)}
		case svc != nil:
			route.PathMatch = &ir.StringMatch{SafeRegex: ptr("/" + *svc + "/" + grpcMethodPattern)}
		}
		return
	}
	switch {
	case svc != nil && method != nil:
		route.PathMatch = &ir.StringMatch{Exact: ptr("/" + *svc + "/" + *method)}
	case method != nil:
		// A path cannot match a suffix, so the method is matched on the :path header.
		route.Headers = append(route.Headers, &ir.StringMatch{Name: ":path", Suffix: ptr("/" + *method)})
	case svc != nil:
		route.PathMatch = &ir.StringMatch{Prefix: ptr("/" + *svc)}
	}
}

// What a gRPC service and method name may look like, for regular-expression method matches
// that name only one of the two (facts of EG v1.9).
const (
	grpcServicePattern = `(?i)\.?[a-z_][a-z_0-9]*(\.[a-z_][a-z_0-9]*)*`
	grpcMethodPattern  = `[A-Za-z_][A-Za-z_0-9]*`
)

// applyMatch turns a Gateway API match into IR matchers, with the CRD's defaults.
func applyMatch(route *ir.HTTPRoute, m gwapiv1.HTTPRouteMatch) {
	path := "/"
	ptype := gwapiv1.PathMatchPathPrefix
	if m.Path != nil {
		if m.Path.Value != nil {
			path = *m.Path.Value
		}
		if m.Path.Type != nil {
			ptype = *m.Path.Type
		}
	}
	switch ptype {
	case gwapiv1.PathMatchExact:
		route.PathMatch = &ir.StringMatch{Exact: &path}
	case gwapiv1.PathMatchRegularExpression:
		route.PathMatch = &ir.StringMatch{SafeRegex: &path}
	default:
		route.PathMatch = &ir.StringMatch{Prefix: &path}
	}
	for _, h := range m.Headers {
		v := h.Value
		sm := &ir.StringMatch{Name: string(h.Name)}
		if h.Type != nil && *h.Type == gwapiv1.HeaderMatchRegularExpression {
			sm.SafeRegex = &v
		} else {
			sm.Exact = &v
		}
		route.Headers = append(route.Headers, sm)
	}
	if m.Method != nil {
		v := string(*m.Method)
		route.Headers = append(route.Headers, &ir.StringMatch{Name: ":method", Exact: &v})
	}
	for _, q := range m.QueryParams {
		v := q.Value
		sm := &ir.StringMatch{Name: string(q.Name)}
		if q.Type != nil && *q.Type == gwapiv1.QueryParamMatchRegularExpression {
			sm.SafeRegex = &v
		} else {
			sm.Exact = &v
		}
		route.QueryParams = append(route.QueryParams, sm)
	}
}
