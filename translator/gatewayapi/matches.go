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
		regex := h.Type != nil && *h.Type == gwapiv1.GRPCHeaderMatchRegularExpression
		route.Headers = append(route.Headers, valueMatch(string(h.Name), h.Value, regex))
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
		regex := h.Type != nil && *h.Type == gwapiv1.HeaderMatchRegularExpression
		route.Headers = append(route.Headers, valueMatch(string(h.Name), h.Value, regex))
	}
	if m.Method != nil {
		v := string(*m.Method)
		route.Headers = append(route.Headers, &ir.StringMatch{Name: ":method", Exact: &v})
	}
	for _, q := range m.QueryParams {
		regex := q.Type != nil && *q.Type == gwapiv1.QueryParamMatchRegularExpression
		route.QueryParams = append(route.QueryParams, valueMatch(string(q.Name), q.Value, regex))
	}
}

// valueMatch matches the value of the header or query parameter called name: by the
// regular expression value when regex, else exactly (the CRD's default type).
func valueMatch(name, value string, regex bool) *ir.StringMatch {
	match := &ir.StringMatch{Name: name}
	if regex {
		match.SafeRegex = &value
	} else {
		match.Exact = &value
	}
	return match
}
