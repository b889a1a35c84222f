package xds

import (
	"fmt"
	"strconv"

	expr "cel.dev/expr"
	cncfcorev3 "github.com/cncf/xds/go/xds/core/v3"
	cncfmatcherv3 "github.com/cncf/xds/go/xds/type/matcher/v3"
	cncftypev3 "github.com/cncf/xds/go/xds/type/v3"
	egv1a1 "github.com/envoyproxy/gateway/api/v1alpha1"
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
	bt := r.Policies.BackendTraffic
	if bt == nil || bt.Spec == nil || len(bt.Spec.ResponseOverride) == 0 {
		return nil
	}
	config := fmt.Sprintf("backendtrafficpolicy/%s/%s", bt.Policy.Namespace, bt.Policy.Name)
	name := customResponseFilter + "/" + config
	if _, ok := s.named[name]; !ok {
		var bodies map[int]string
		if r.PolicyData != nil {
			bodies = r.PolicyData.ResponseBodies
		}
		cfg, err := customResponseConfig(config, bt.Spec.ResponseOverride, bodies)
		if err != nil {
			return fmt.Errorf("responseOverride: %w", err)
		}
		f := typedFilter(name, cfg)
		f.Disabled = true
		s.named[name] = f
	}
	return setPerRoute(out, name, &routev3.FilterConfig{Config: &anypb.Any{}})
}

func customResponseConfig(config string, rules []*egv1a1.ResponseOverride, bodies map[int]string) (*customresponsev3.CustomResponse, error) {
	var matchers []*cncfmatcherv3.Matcher_MatcherList_FieldMatcher
	for i, ro := range rules {
		if ro == nil {
			continue
		}
		var preds []*cncfmatcherv3.Matcher_MatcherList_Predicate
		if len(ro.Match.StatusCodes) > 0 {
			var codes []*cncfmatcherv3.Matcher_MatcherList_Predicate
			for _, c := range ro.Match.StatusCodes {
				codes = append(codes, statusCodePredicate(c))
			}
			preds = append(preds, crAnyOf(codes))
		}
		if len(ro.Match.ResponseHeaders) > 0 {
			var hs []*cncfmatcherv3.Matcher_MatcherList_Predicate
			for _, h := range ro.Match.ResponseHeaders {
				hs = append(hs, crSingle(crExtension("http-response-header-match-input", &envoymatcherv3.HttpResponseHeaderMatchInput{HeaderName: string(h.Name)}), valueMatch(h.Value)))
			}
			preds = append(preds, crAllOf(hs))
		}
		if len(preds) == 0 {
			return nil, fmt.Errorf("missing match criteria in response override rule")
		}
		if src := ro.Source; src != nil && (*src == egv1a1.ResponseOverrideSourceLocal || *src == egv1a1.ResponseOverrideSourceBackend) {
			local := "false"
			if *src == egv1a1.ResponseOverrideSourceLocal {
				local = "true"
			}
			preds = append(preds, crSingle(crExtension("http-response-local-reply-match-input", &envoymatcherv3.HttpResponseLocalReplyMatchInput{}), exactValue(local)))
		}
		action, err := responseOverrideAction(ro, bodies[i])
		if err != nil {
			return nil, err
		}
		matchers = append(matchers, &cncfmatcherv3.Matcher_MatcherList_FieldMatcher{
			Predicate: crAllOf(preds),
			OnMatch: &cncfmatcherv3.Matcher_OnMatch{OnMatch: &cncfmatcherv3.Matcher_OnMatch_Action{Action: &cncfcorev3.TypedExtensionConfig{
				Name:        fmt.Sprintf("%s/responseoverride/rule/%d", config, i),
				TypedConfig: mustAny(action),
			}}},
		})
	}
	return &customresponsev3.CustomResponse{CustomResponseMatcher: &cncfmatcherv3.Matcher{
		MatcherType: &cncfmatcherv3.Matcher_MatcherList_{MatcherList: &cncfmatcherv3.Matcher_MatcherList{Matchers: matchers}},
	}}, nil
}

// bodyOf is a rule's response body: inline, or the ConfigMap's the policy stage read.
func bodyOf(b *egv1a1.CustomResponseBody, fromConfigMap string) string {
	if b.Type != nil && *b.Type == egv1a1.ResponseValueTypeValueRef {
		return fromConfigMap
	}
	if b.Inline != nil {
		return *b.Inline
	}
	return ""
}

// responseOverrideAction is a rule's answer: a redirect, or a local response with its
// status, body (as a text format), content type and headers (add appends, set overwrites;
// EG reads no remove).
func responseOverrideAction(ro *egv1a1.ResponseOverride, fromConfigMap string) (proto.Message, error) {
	if rd := ro.Redirect; rd != nil {
		ra := &routev3.RedirectAction{}
		if rd.Scheme != nil {
			ra.SchemeRewriteSpecifier = &routev3.RedirectAction_SchemeRedirect{SchemeRedirect: *rd.Scheme}
		}
		if rd.Hostname != nil {
			ra.HostRedirect = string(*rd.Hostname)
		}
		if rd.Port != nil {
			ra.PortRedirect = uint32(*rd.Port)
		}
		if rd.Path != nil && rd.Path.ReplaceFullPath != nil {
			// EG v1.9 writes a full path replacement only (a prefix replacement is dropped)
			ra.PathRewriteSpecifier = &routev3.RedirectAction_PathRedirect{PathRedirect: *rd.Path.ReplaceFullPath}
		}
		code := uint32(302)
		if rd.StatusCode != nil {
			code = uint32(*rd.StatusCode)
		}
		return &redirectpolicyv3.RedirectPolicy{
			RedirectActionSpecifier: &redirectpolicyv3.RedirectPolicy_RedirectAction{RedirectAction: ra},
			StatusCode:              wrapperspb.UInt32(code),
		}, nil
	}
	p := &localresponsev3.LocalResponsePolicy{}
	resp := ro.Response
	if resp == nil {
		return p, nil
	}
	if resp.Body != nil {
		if body := bodyOf(resp.Body, fromConfigMap); body != "" {
			p.BodyFormat = &corev3.SubstitutionFormatString{Format: &corev3.SubstitutionFormatString_TextFormat{TextFormat: body}}
		}
	}
	if resp.ContentType != nil && *resp.ContentType != "" {
		p.ResponseHeadersToAdd = append(p.ResponseHeadersToAdd, &corev3.HeaderValueOption{
			Header:       &corev3.HeaderValue{Key: "Content-Type", Value: *resp.ContentType},
			AppendAction: corev3.HeaderValueOption_OVERWRITE_IF_EXISTS_OR_ADD,
		})
	}
	if resp.StatusCode != nil {
		p.StatusCode = wrapperspb.UInt32(uint32(*resp.StatusCode))
	}
	if h := resp.Header; h != nil {
		add := func(name, value string, action corev3.HeaderValueOption_HeaderAppendAction) {
			p.ResponseHeadersToAdd = append(p.ResponseHeadersToAdd, &corev3.HeaderValueOption{
				Header: &corev3.HeaderValue{Key: name, Value: value}, AppendAction: action, KeepEmptyValue: value == "",
			})
		}
		for _, x := range h.Add {
			add(string(x.Name), x.Value, corev3.HeaderValueOption_APPEND_IF_EXISTS_OR_ADD)
		}
		for _, x := range h.Set {
			add(string(x.Name), x.Value, corev3.HeaderValueOption_OVERWRITE_IF_EXISTS_OR_ADD)
		}
	}
	return p, nil
}

// statusCodePredicate matches one status code (the response's code as a string) or a
// range (a CEL expression on response.code, as EG writes it).
func statusCodePredicate(c egv1a1.StatusCodeMatch) *cncfmatcherv3.Matcher_MatcherList_Predicate {
	if c.Type != nil && *c.Type == egv1a1.StatusCodeValueTypeRange && c.Range != nil {
		code := func(id int64) *expr.Expr {
			return &expr.Expr{Id: id + 1, ExprKind: &expr.Expr_SelectExpr{SelectExpr: &expr.Expr_Select{
				Operand: &expr.Expr{Id: id, ExprKind: &expr.Expr_IdentExpr{IdentExpr: &expr.Expr_Ident{Name: "response"}}},
				Field:   "code",
			}}}
		}
		bound := func(id int64, v int) *expr.Expr {
			return &expr.Expr{Id: id, ExprKind: &expr.Expr_ConstExpr{ConstExpr: &expr.Constant{ConstantKind: &expr.Constant_Int64Value{Int64Value: int64(v)}}}}
		}
		call := func(id int64, fn string, args ...*expr.Expr) *expr.Expr {
			return &expr.Expr{Id: id, ExprKind: &expr.Expr_CallExpr{CallExpr: &expr.Expr_Call{Function: fn, Args: args}}}
		}
		cel := &cncfmatcherv3.CelMatcher{ExprMatch: &cncftypev3.CelExpression{CelExprParsed: &expr.ParsedExpr{
			Expr: call(9, "_&&_", call(3, "_>=_", code(1), bound(4, c.Range.Start)), call(7, "_<=_", code(5), bound(8, c.Range.End))),
		}}}
		return &cncfmatcherv3.Matcher_MatcherList_Predicate{MatchType: &cncfmatcherv3.Matcher_MatcherList_Predicate_SinglePredicate_{
			SinglePredicate: &cncfmatcherv3.Matcher_MatcherList_Predicate_SinglePredicate{
				Input:   crExtension("http-attributes-cel-match-input", &cncfmatcherv3.HttpAttributesCelMatchInput{}),
				Matcher: &cncfmatcherv3.Matcher_MatcherList_Predicate_SinglePredicate_CustomMatch{CustomMatch: crExtension("cel-matcher", cel)},
			},
		}}
	}
	v := 0
	if c.Value != nil {
		v = *c.Value
	}
	return crSingle(crExtension("http-response-status-code-match-input", &envoymatcherv3.HttpResponseStatusCodeMatchInput{}), exactValue(strconv.Itoa(v)))
}

func crExtension(name string, m proto.Message) *cncfcorev3.TypedExtensionConfig {
	return &cncfcorev3.TypedExtensionConfig{Name: name, TypedConfig: mustAny(m)}
}

func crSingle(input *cncfcorev3.TypedExtensionConfig, m *cncfmatcherv3.StringMatcher) *cncfmatcherv3.Matcher_MatcherList_Predicate {
	return &cncfmatcherv3.Matcher_MatcherList_Predicate{MatchType: &cncfmatcherv3.Matcher_MatcherList_Predicate_SinglePredicate_{
		SinglePredicate: &cncfmatcherv3.Matcher_MatcherList_Predicate_SinglePredicate{
			Input:   input,
			Matcher: &cncfmatcherv3.Matcher_MatcherList_Predicate_SinglePredicate_ValueMatch{ValueMatch: m},
		},
	}}
}

func exactValue(v string) *cncfmatcherv3.StringMatcher {
	return &cncfmatcherv3.StringMatcher{MatchPattern: &cncfmatcherv3.StringMatcher_Exact{Exact: v}}
}

// valueMatch is a header value match (exact unless the type says otherwise).
func valueMatch(m egv1a1.StringMatch) *cncfmatcherv3.StringMatcher {
	t := egv1a1.StringMatchExact
	if m.Type != nil {
		t = *m.Type
	}
	switch t {
	case egv1a1.StringMatchPrefix:
		return &cncfmatcherv3.StringMatcher{MatchPattern: &cncfmatcherv3.StringMatcher_Prefix{Prefix: m.Value}}
	case egv1a1.StringMatchSuffix:
		return &cncfmatcherv3.StringMatcher{MatchPattern: &cncfmatcherv3.StringMatcher_Suffix{Suffix: m.Value}}
	case egv1a1.StringMatchRegularExpression:
		return &cncfmatcherv3.StringMatcher{MatchPattern: &cncfmatcherv3.StringMatcher_SafeRegex{SafeRegex: &cncfmatcherv3.RegexMatcher{
			Regex:      m.Value,
			EngineType: &cncfmatcherv3.RegexMatcher_GoogleRe2{GoogleRe2: &cncfmatcherv3.RegexMatcher_GoogleRE2{}},
		}}}
	}
	return exactValue(m.Value)
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
