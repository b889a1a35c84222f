package xds

import (
	"fmt"
	"net/netip"
	"regexp"
	"strings"

	expr "cel.dev/expr"
	cncfv3 "github.com/cncf/xds/go/xds/core/v3"
	cncfmatcherv3 "github.com/cncf/xds/go/xds/type/matcher/v3"
	cncftypev3 "github.com/cncf/xds/go/xds/type/v3"
	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	rbacconfigv3 "github.com/envoyproxy/go-control-plane/envoy/config/rbac/v3"
	routev3 "github.com/envoyproxy/go-control-plane/envoy/config/route/v3"
	rbacv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/http/rbac/v3"
	networkinputv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/matching/common_inputs/network/v3"
	ipmatcherv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/matching/input_matchers/ip/v3"
	metadatamatcherv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/matching/input_matchers/metadata/v3"
	envoymatcherv3 "github.com/envoyproxy/go-control-plane/envoy/type/matcher/v3"
	"github.com/google/cel-go/cel"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/anypb"
	gwapiv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/egharness/egharness/translator/ir"
)

const rbacFilterName = ir.FilterRBAC

// addAuthorization enables the listener's RBAC filter (empty: it does nothing by itself)
// with the route's rules as a matcher (SP-05): rules in order, first match decides,
// defaultAction (Deny unless set) when none matches.
func (s *httpFilterSet) addAuthorization(out *routev3.Route, a *ir.Authorization) error {
	perRoute, err := rbacPerRoute(a)
	if err != nil {
		return fmt.Errorf("authorization: %w", err)
	}
	if _, ok := s.named[rbacFilterName]; !ok {
		s.named[rbacFilterName] = typedFilter(rbacFilterName, &rbacv3.RBAC{})
	}
	return setPerRoute(out, rbacFilterName, perRoute)
}

func rbacAction(name string, action rbacconfigv3.RBAC_Action) *anypb.Any {
	return mustAny(&rbacconfigv3.Action{Name: name, Action: action})
}

func rbacPerRoute(a *ir.Authorization) (*rbacv3.RBACPerRoute, error) {
	m, err := authorizationMatcher(a, rulePredicate)
	if err != nil {
		return nil, err
	}
	return &rbacv3.RBACPerRoute{Rbac: &rbacv3.RBAC{Matcher: m}}, nil
}

// authorizationMatcher is the matcher of a policy's authorization block, for the HTTP RBAC
// filter (SP-05) and the network one (SP-02) alike: the rules in order, each named as EG
// names it and matching on what predicateOf makes of it, first match decides;
// defaultAction (Deny unless set) when none matches.
func authorizationMatcher(auth *ir.Authorization,
	predicateOf func(ir.AuthorizationRule) (*predicate, error)) (*cncfmatcherv3.Matcher, error) {
	allow, deny := rbacAction("ALLOW", rbacconfigv3.RBAC_ALLOW), rbacAction("DENY", rbacconfigv3.RBAC_DENY)
	var matchers []*cncfmatcherv3.Matcher_MatcherList_FieldMatcher
	for _, rule := range auth.Rules {
		name := rule.Name
		pred, err := predicateOf(rule)
		if err != nil {
			return nil, fmt.Errorf("rule %s: %w", name, err)
		}
		action := allow
		if rule.Deny {
			action = deny
		}
		matchers = append(matchers,
			&cncfmatcherv3.Matcher_MatcherList_FieldMatcher{Predicate: pred, OnMatch: decision(name, action)})
	}
	def := deny
	if auth.DefaultAllow {
		def = allow
	}
	m := &cncfmatcherv3.Matcher{OnNoMatch: decision("default", def)}
	if len(matchers) > 0 {
		m.MatcherType = &cncfmatcherv3.Matcher_MatcherList_{
			MatcherList: &cncfmatcherv3.Matcher_MatcherList{Matchers: matchers}}
	}
	return m, nil
}

// decision is a matcher outcome: the named RBAC action.
func decision(name string, action *anypb.Any) *cncfmatcherv3.Matcher_OnMatch {
	return &cncfmatcherv3.Matcher_OnMatch{OnMatch: &cncfmatcherv3.Matcher_OnMatch_Action{
		Action: &cncfv3.TypedExtensionConfig{Name: name, TypedConfig: action},
	}}
}

type predicate = cncfmatcherv3.Matcher_MatcherList_Predicate

// rulePredicate ANDs a rule's conditions in EG's order: methods, path, client IPs, client
// geolocations, CEL, JWT claims and scopes, headers.
func rulePredicate(rule ir.AuthorizationRule) (*predicate, error) {
	var all []*predicate
	if len(rule.Methods) > 0 {
		all = append(all, anyOf(headerPredicates(":method", rule.Methods, true)))
	}
	if rule.Path != nil {
		all = append(all, pathPredicate(rule.Path))
	}
	if len(rule.ClientCIDRs) > 0 {
		ip, err := ipPredicate(rule.ClientCIDRs)
		if err != nil {
			return nil, err
		}
		all = append(all, ip)
	}
	if g := geoPredicate(rule.GeoLocations); g != nil {
		all = append(all, g)
	}
	if rule.CEL != nil {
		c, err := celPredicate(*rule.CEL)
		if err != nil {
			return nil, err
		}
		all = append(all, c)
	}
	if rule.JWT != nil {
		all = append(all, jwtPredicates(*rule.JWT)...)
	}
	for _, h := range rule.Headers {
		if ps := headerPredicates(h.Name, h.Values, false); len(ps) > 0 {
			all = append(all, anyOf(ps))
		}
	}
	switch len(all) {
	case 0:
		return nil, nil
	case 1:
		return all[0], nil
	}
	return &predicate{MatchType: &cncfmatcherv3.Matcher_MatcherList_Predicate_AndMatcher{
		AndMatcher: &cncfmatcherv3.Matcher_MatcherList_Predicate_PredicateList{Predicate: all},
	}}, nil
}

func allOf(ps []*predicate) *predicate {
	if len(ps) == 1 {
		return ps[0]
	}
	return &predicate{MatchType: &cncfmatcherv3.Matcher_MatcherList_Predicate_AndMatcher{
		AndMatcher: &cncfmatcherv3.Matcher_MatcherList_Predicate_PredicateList{Predicate: ps},
	}}
}

func anyOf(ps []*predicate) *predicate {
	if len(ps) == 1 {
		return ps[0]
	}
	return &predicate{MatchType: &cncfmatcherv3.Matcher_MatcherList_Predicate_OrMatcher{
		OrMatcher: &cncfmatcherv3.Matcher_MatcherList_Predicate_PredicateList{Predicate: ps},
	}}
}

func single(inputName string, input proto.Message, custom string, m proto.Message,
	value *cncfmatcherv3.StringMatcher) *predicate {
	sp := &cncfmatcherv3.Matcher_MatcherList_Predicate_SinglePredicate{
		Input: &cncfv3.TypedExtensionConfig{Name: inputName, TypedConfig: mustAny(input)},
	}
	if value != nil {
		sp.Matcher = &cncfmatcherv3.Matcher_MatcherList_Predicate_SinglePredicate_ValueMatch{ValueMatch: value}
	} else {
		sp.Matcher = &cncfmatcherv3.Matcher_MatcherList_Predicate_SinglePredicate_CustomMatch{
			CustomMatch: &cncfv3.TypedExtensionConfig{Name: custom, TypedConfig: mustAny(m)},
		}
	}
	return &predicate{MatchType: &cncfmatcherv3.Matcher_MatcherList_Predicate_SinglePredicate_{SinglePredicate: sp}}
}

func headerPredicates(name string, values []string, ignoreCase bool) []*predicate {
	out := make([]*predicate, 0, len(values))
	for _, v := range values {
		out = append(out, single("http_header", &envoymatcherv3.HttpRequestHeaderMatchInput{HeaderName: name}, "", nil,
			&cncfmatcherv3.StringMatcher{MatchPattern: &cncfmatcherv3.StringMatcher_Exact{Exact: v}, IgnoreCase: ignoreCase}))
	}
	return out
}

// pathPredicate matches :path (query included) the way the route's path types mean:
// a prefix on segment boundaries, an exact path, or a regex.
func pathPredicate(p *ir.AuthorizationPath) *predicate {
	typ := gwapiv1.PathMatchType(p.Type)
	re := func(r string) *cncfmatcherv3.StringMatcher {
		return &cncfmatcherv3.StringMatcher{
			MatchPattern: &cncfmatcherv3.StringMatcher_SafeRegex{SafeRegex: &cncfmatcherv3.RegexMatcher{
				Regex: r, EngineType: &cncfmatcherv3.RegexMatcher_GoogleRe2{GoogleRe2: &cncfmatcherv3.RegexMatcher_GoogleRE2{}},
			}}}
	}
	var m *cncfmatcherv3.StringMatcher
	switch {
	case typ == gwapiv1.PathMatchPathPrefix && p.Value == "/":
		m = &cncfmatcherv3.StringMatcher{MatchPattern: &cncfmatcherv3.StringMatcher_Prefix{Prefix: "/"}}
	case typ == gwapiv1.PathMatchPathPrefix:
		m = re("^" + regexp.QuoteMeta(strings.TrimSuffix(p.Value, "/")) + `(/.*|\?.*|#.*|;.*|$)`)
	case typ == gwapiv1.PathMatchExact:
		m = re("^" + regexp.QuoteMeta(p.Value) + `(\?.*|#.*|;.*|$)`)
	default:
		m = re(p.Value)
	}
	pred := single("http_header", &envoymatcherv3.HttpRequestHeaderMatchInput{HeaderName: ":path"}, "", nil, m)
	if p.Invert {
		return &predicate{MatchType: &cncfmatcherv3.Matcher_MatcherList_Predicate_NotMatcher{NotMatcher: pred}}
	}
	return pred
}

func ipPredicate(cidrs []string) (*predicate, error) {
	ip := &ipmatcherv3.Ip{StatPrefix: "client_ip"}
	for _, c := range cidrs {
		pfx, err := netip.ParsePrefix(c)
		if err != nil {
			return nil, fmt.Errorf("unable to translate authorization rule: %w", err)
		}
		ip.CidrRanges = append(ip.CidrRanges,
			&corev3.CidrRange{AddressPrefix: pfx.Masked().Addr().String(), PrefixLen: u32(uint32(pfx.Bits()))})
	}
	return single("client_ip", &networkinputv3.SourceIPInput{}, "ip_matcher", ip, nil), nil
}

var celEnv, _ = cel.NewEnv()

// celPredicate carries the expression parsed (not checked): Envoy evaluates it on the
// request's attributes (SP-05).
func celPredicate(src string) (*predicate, error) {
	ast, iss := celEnv.Parse(src)
	if iss != nil && iss.Err() != nil {
		return nil, fmt.Errorf("invalid CEL expression: %s", src)
	}
	parsed, err := cel.AstToParsedExpr(ast)
	if err != nil {
		return nil, err
	}
	b, err := proto.Marshal(parsed)
	if err != nil {
		return nil, err
	}
	out := &expr.ParsedExpr{}
	if err := proto.Unmarshal(b, out); err != nil {
		return nil, err
	}
	return single("cel", &cncfmatcherv3.HttpAttributesCelMatchInput{}, "cel_matcher",
		&cncfmatcherv3.CelMatcher{ExprMatch: &cncftypev3.CelExpression{CelExprParsed: out}}, nil), nil
}

// jwtPredicates match the jwt_authn payload a provider left in dynamic metadata: each
// scope in "scope" or "scp", each claim's values.
func jwtPredicates(j ir.AuthorizationJWT) []*predicate {
	var out []*predicate
	meta := func(path ...string) *networkinputv3.DynamicMetadataInput {
		in := &networkinputv3.DynamicMetadataInput{Filter: jwtAuthnFilter}
		for _, k := range path {
			in.Path = append(in.Path,
				&networkinputv3.DynamicMetadataInput_PathSegment{
					Segment: &networkinputv3.DynamicMetadataInput_PathSegment_Key{Key: k}})
		}
		return in
	}
	oneOf := func(v string) *metadatamatcherv3.Metadata {
		return &metadatamatcherv3.Metadata{
			Value: &envoymatcherv3.ValueMatcher{MatchPattern: &envoymatcherv3.ValueMatcher_ListMatch{
				ListMatch: &envoymatcherv3.ListMatcher{
					MatchPattern: &envoymatcherv3.ListMatcher_OneOf{OneOf: &envoymatcherv3.ValueMatcher{
						MatchPattern: &envoymatcherv3.ValueMatcher_StringMatch{
							StringMatch: &envoymatcherv3.StringMatcher{MatchPattern: &envoymatcherv3.StringMatcher_Exact{Exact: v}}},
					}}},
			}}}
	}
	for _, scope := range j.Scopes {
		var ps []*predicate
		for _, key := range []string{"scope", "scp"} {
			ps = append(ps, single("scope", meta(j.Provider, key), "scope_matcher", oneOf(scope), nil))
		}
		out = append(out, anyOf(ps))
	}
	for _, c := range j.Claims {
		path := append([]string{j.Provider}, strings.Split(c.Name, ".")...)
		var ps []*predicate
		for _, v := range c.Values {
			var m *metadatamatcherv3.Metadata
			if c.StringArray {
				m = oneOf(v)
			} else {
				m = &metadatamatcherv3.Metadata{
					Value: &envoymatcherv3.ValueMatcher{MatchPattern: &envoymatcherv3.ValueMatcher_StringMatch{
						StringMatch: &envoymatcherv3.StringMatcher{MatchPattern: &envoymatcherv3.StringMatcher_Exact{Exact: v}},
					}}}
			}
			ps = append(ps, single("claim", meta(path...), "claim_matcher", m, nil))
		}
		if len(ps) > 0 {
			out = append(out, anyOf(ps))
		}
	}
	return out
}
