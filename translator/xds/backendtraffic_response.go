package xds

import (
	"fmt"
	"strconv"

	expr "cel.dev/expr"
	cncfcorev3 "github.com/cncf/xds/go/xds/core/v3"
	cncfmatcherv3 "github.com/cncf/xds/go/xds/type/matcher/v3"
	cncftypev3 "github.com/cncf/xds/go/xds/type/v3"
	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	routev3 "github.com/envoyproxy/go-control-plane/envoy/config/route/v3"
	customresponsev3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/http/custom_response/v3"
	localresponsev3 "github.com/envoyproxy/go-control-plane/envoy/extensions/http/custom_response/local_response_policy/v3"
	redirectpolicyv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/http/custom_response/redirect_policy/v3"
	envoymatcherv3 "github.com/envoyproxy/go-control-plane/envoy/type/matcher/v3"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/anypb"
	"google.golang.org/protobuf/types/known/wrapperspb"

	"github.com/egharness/egharness/translator/ir"
)

// A BackendTrafficPolicy's responseOverride (BTP-02), as EG v1.9 builds it
// (internal/xds/translator/custom_response.go, internal/gatewayapi/backendtrafficpolicy.go):
// one custom_response filter per policy on the connection manager, disabled there and
// turned on by its routes, whose matcher list holds one entry per rule, in order: the rule's
// status codes (any of them), its response headers (all of them) and, for source Local or
// Backend, whether Envoy itself answered, each answered by a local response or a redirect.

const customResponseFilter = "envoy.filters.http.custom_response"

// addResponseOverride puts the policy's custom_response filter on the listener (once per
// policy) and turns it on for the route.
func (s *httpFilterSet) addResponseOverride(out *routev3.Route, r *ir.HTTPRoute) error {
	traffic := r.Policies.BackendTrafficSettings
	if traffic == nil || traffic.ResponseOverride == nil {
		return nil
	}
	ro := traffic.ResponseOverride
	name := customResponseFilter + "/" + ro.Config
	if _, ok := s.named[name]; !ok {
		cfg, err := customResponseConfig(ro)
		if err != nil {
			return fmt.Errorf("responseOverride: %w", err)
		}
		f := typedFilter(name, cfg)
		f.Disabled = true
		s.named[name] = f
	}
	return setPerRoute(out, name, &routev3.FilterConfig{Config: &anypb.Any{}})
}

func customResponseConfig(ro *ir.ResponseOverride) (*customresponsev3.CustomResponse, error) {
	var matchers []*cncfmatcherv3.Matcher_MatcherList_FieldMatcher
	for _, rule := range ro.Rules {
		var preds []*cncfmatcherv3.Matcher_MatcherList_Predicate
		if len(rule.StatusCodes) > 0 {
			var codes []*cncfmatcherv3.Matcher_MatcherList_Predicate
			for _, c := range rule.StatusCodes {
				codes = append(codes, statusCodePredicate(c))
			}
			preds = append(preds, crAnyOf(codes))
		}
		if len(rule.ResponseHeaders) > 0 {
			var hs []*cncfmatcherv3.Matcher_MatcherList_Predicate
			for _, h := range rule.ResponseHeaders {
				hs = append(hs,
					crSingle(crExtension("http-response-header-match-input",
						&envoymatcherv3.HttpResponseHeaderMatchInput{HeaderName: h.Name}), valueMatch(h)))
			}
			preds = append(preds, crAllOf(hs))
		}
		if len(preds) == 0 {
			return nil, fmt.Errorf("missing match criteria in response override rule")
		}
		if rule.LocalReply != nil {
			preds = append(preds,
				crSingle(crExtension("http-response-local-reply-match-input", &envoymatcherv3.HttpResponseLocalReplyMatchInput{}),
					exactValue(strconv.FormatBool(*rule.LocalReply))))
		}
		matchers = append(matchers, &cncfmatcherv3.Matcher_MatcherList_FieldMatcher{
			Predicate: crAllOf(preds),
			OnMatch: &cncfmatcherv3.Matcher_OnMatch{
				OnMatch: &cncfmatcherv3.Matcher_OnMatch_Action{Action: &cncfcorev3.TypedExtensionConfig{
					Name:        fmt.Sprintf("%s/responseoverride/rule/%d", ro.Config, rule.Index),
					TypedConfig: mustAny(responseOverrideAction(rule)),
				}}},
		})
	}
	return &customresponsev3.CustomResponse{CustomResponseMatcher: &cncfmatcherv3.Matcher{
		MatcherType: &cncfmatcherv3.Matcher_MatcherList_{MatcherList: &cncfmatcherv3.Matcher_MatcherList{Matchers: matchers}},
	}}, nil
}

// responseOverrideAction is a rule's answer: a redirect, or a local response with its
// status, body (as a text format), content type and headers.
func responseOverrideAction(rule ir.ResponseOverrideRule) proto.Message {
	if rd := rule.Redirect; rd != nil {
		ra := &routev3.RedirectAction{HostRedirect: rd.Hostname, PortRedirect: rd.Port}
		if rd.Scheme != nil {
			ra.SchemeRewriteSpecifier = &routev3.RedirectAction_SchemeRedirect{SchemeRedirect: *rd.Scheme}
		}
		if rd.Path != nil {
			ra.PathRewriteSpecifier = &routev3.RedirectAction_PathRedirect{PathRedirect: *rd.Path}
		}
		return &redirectpolicyv3.RedirectPolicy{
			RedirectActionSpecifier: &redirectpolicyv3.RedirectPolicy_RedirectAction{RedirectAction: ra},
			StatusCode:              wrapperspb.UInt32(rd.StatusCode),
		}
	}
	p := &localresponsev3.LocalResponsePolicy{}
	resp := rule.Response
	if resp == nil {
		return p
	}
	if resp.Body != "" {
		p.BodyFormat = &corev3.SubstitutionFormatString{
			Format: &corev3.SubstitutionFormatString_TextFormat{TextFormat: resp.Body}}
	}
	if resp.ContentType != "" {
		p.ResponseHeadersToAdd = append(p.ResponseHeadersToAdd, &corev3.HeaderValueOption{
			Header:       &corev3.HeaderValue{Key: "Content-Type", Value: resp.ContentType},
			AppendAction: corev3.HeaderValueOption_OVERWRITE_IF_EXISTS_OR_ADD,
		})
	}
	if resp.StatusCode != nil {
		p.StatusCode = wrapperspb.UInt32(*resp.StatusCode)
	}
	for _, h := range resp.Headers {
		action := corev3.HeaderValueOption_APPEND_IF_EXISTS_OR_ADD
		if h.Overwrite {
			action = corev3.HeaderValueOption_OVERWRITE_IF_EXISTS_OR_ADD
		}
		p.ResponseHeadersToAdd = append(p.ResponseHeadersToAdd, &corev3.HeaderValueOption{
			Header: &corev3.HeaderValue{Key: h.Name, Value: h.Value}, AppendAction: action, KeepEmptyValue: h.Value == "",
		})
	}
	return p
}

// statusCodePredicate matches one status code (the response's code as a string) or a
// range (a CEL expression on response.code, as EG writes it).
func statusCodePredicate(c ir.StatusCodeMatch) *cncfmatcherv3.Matcher_MatcherList_Predicate {
	if c.Range != nil {
		code := func(id int64) *expr.Expr {
			return &expr.Expr{Id: id + 1, ExprKind: &expr.Expr_SelectExpr{SelectExpr: &expr.Expr_Select{
				Operand: &expr.Expr{Id: id, ExprKind: &expr.Expr_IdentExpr{IdentExpr: &expr.Expr_Ident{Name: "response"}}},
				Field:   "code",
			}}}
		}
		bound := func(id int64, v int) *expr.Expr {
			return &expr.Expr{Id: id,
				ExprKind: &expr.Expr_ConstExpr{ConstExpr: &expr.Constant{ConstantKind: &expr.Constant_Int64Value{Int64Value: int64(
					v)}}}}
		}
		call := func(id int64, fn string, args ...*expr.Expr) *expr.Expr {
			return &expr.Expr{Id: id, ExprKind: &expr.Expr_CallExpr{CallExpr: &expr.Expr_Call{Function: fn, Args: args}}}
		}
		cel := &cncfmatcherv3.CelMatcher{ExprMatch: &cncftypev3.CelExpression{CelExprParsed: &expr.ParsedExpr{
			Expr: call(9, "_&&_", call(3, "_>=_", code(1), bound(4, c.Range.Start)),
				call(7, "_<=_", code(5), bound(8, c.Range.End))),
		}}}
		return &cncfmatcherv3.Matcher_MatcherList_Predicate{
			MatchType: &cncfmatcherv3.Matcher_MatcherList_Predicate_SinglePredicate_{
				SinglePredicate: &cncfmatcherv3.Matcher_MatcherList_Predicate_SinglePredicate{
					Input: crExtension("http-attributes-cel-match-input", &cncfmatcherv3.HttpAttributesCelMatchInput{}),
					Matcher: &cncfmatcherv3.Matcher_MatcherList_Predicate_SinglePredicate_CustomMatch{CustomMatch: crExtension(
						"cel-matcher", cel)},
				},
			}}
	}
	return crSingle(
		crExtension("http-response-status-code-match-input", &envoymatcherv3.HttpResponseStatusCodeMatchInput{}),
		exactValue(strconv.Itoa(c.Value)))
}

func crExtension(name string, m proto.Message) *cncfcorev3.TypedExtensionConfig {
	return &cncfcorev3.TypedExtensionConfig{Name: name, TypedConfig: mustAny(m)}
}

func crSingle(input *cncfcorev3.TypedExtensionConfig,
	m *cncfmatcherv3.StringMatcher) *cncfmatcherv3.Matcher_MatcherList_Predicate {
	return &cncfmatcherv3.Matcher_MatcherList_Predicate{
		MatchType: &cncfmatcherv3.Matcher_MatcherList_Predicate_SinglePredicate_{
			SinglePredicate: &cncfmatcherv3.Matcher_MatcherList_Predicate_SinglePredicate{
				Input:   input,
				Matcher: &cncfmatcherv3.Matcher_MatcherList_Predicate_SinglePredicate_ValueMatch{ValueMatch: m},
			},
		}}
}

func exactValue(v string) *cncfmatcherv3.StringMatcher {
	return &cncfmatcherv3.StringMatcher{MatchPattern: &cncfmatcherv3.StringMatcher_Exact{Exact: v}}
}

// valueMatch is a header value match (the policy stage chose its kind).
func valueMatch(m ir.StringMatch) *cncfmatcherv3.StringMatcher {
	switch {
	case m.Prefix != nil:
		return &cncfmatcherv3.StringMatcher{MatchPattern: &cncfmatcherv3.StringMatcher_Prefix{Prefix: *m.Prefix}}
	case m.Suffix != nil:
		return &cncfmatcherv3.StringMatcher{MatchPattern: &cncfmatcherv3.StringMatcher_Suffix{Suffix: *m.Suffix}}
	case m.SafeRegex != nil:
		return &cncfmatcherv3.StringMatcher{
			MatchPattern: &cncfmatcherv3.StringMatcher_SafeRegex{SafeRegex: &cncfmatcherv3.RegexMatcher{
				Regex:      *m.SafeRegex,
				EngineType: &cncfmatcherv3.RegexMatcher_GoogleRe2{GoogleRe2: &cncfmatcherv3.RegexMatcher_GoogleRE2{}},
			}}}
	}
	return exactValue(m.Value())
}

// crAnyOf and crAllOf are a single predicate alone, else an or/and of the list.
func crAnyOf(ps []*cncfmatcherv3.Matcher_MatcherList_Predicate) *cncfmatcherv3.Matcher_MatcherList_Predicate {
	if len(ps) == 1 {
		return ps[0]
	}
	return &cncfmatcherv3.Matcher_MatcherList_Predicate{MatchType: &cncfmatcherv3.Matcher_MatcherList_Predicate_OrMatcher{
		OrMatcher: &cncfmatcherv3.Matcher_MatcherList_Predicate_PredicateList{Predicate: ps},
	}}
}

func crAllOf(ps []*cncfmatcherv3.Matcher_MatcherList_Predicate) *cncfmatcherv3.Matcher_MatcherList_Predicate {
	if len(ps) == 1 {
		return ps[0]
	}
	return &cncfmatcherv3.Matcher_MatcherList_Predicate{MatchType: &cncfmatcherv3.Matcher_MatcherList_Predicate_AndMatcher{
		AndMatcher: &cncfmatcherv3.Matcher_MatcherList_Predicate_PredicateList{Predicate: ps},
	}}
}
