package routecheck

import (
	"errors"
	"fmt"
	"net/netip"
	"strings"

	expr "cel.dev/expr"
	cncfmatcherv3 "github.com/cncf/xds/go/xds/type/matcher/v3"
	rbacconfigv3 "github.com/envoyproxy/go-control-plane/envoy/config/rbac/v3"
	rbacv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/http/rbac/v3"
	networkrbacv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/network/rbac/v3"
	networkinputv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/matching/common_inputs/network/v3"
	ipmatcherv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/matching/input_matchers/ip/v3"
	metadatamatcherv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/matching/input_matchers/metadata/v3"
	envoymatcherv3 "github.com/envoyproxy/go-control-plane/envoy/type/matcher/v3"
	"github.com/google/cel-go/cel"
	exprpb "google.golang.org/genproto/googleapis/api/expr/v1alpha1"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/anypb"
)

// evalRBAC runs a route's RBAC matcher (EG's authorization rules, SP-05): the first rule
// whose predicate holds decides, else on_no_match; DENY answers 403. Predicates on
// headers, the client IP (Request.ClientIP), CEL over request attributes and the
// jwt_authn payload are evaluated; anything else is an error.
func evalRBAC(per *anypb.Any, state *requestState, eff *FilterEffect) (int, error) {
	p := &rbacv3.RBACPerRoute{}
	if err := per.UnmarshalTo(p); err != nil {
		return 0, err
	}
	m := p.GetRbac().GetMatcher()
	if m == nil {
		if p.GetRbac().GetRules() != nil {
			return 0, fmt.Errorf("RBAC rules (not a matcher) are not evaluated")
		}
		eff.Outcome = "no policy"
		return 0, nil
	}
	ev := &rbacEval{state: state}
	action := m.GetOnNoMatch().GetAction()
	for _, fm := range m.GetMatcherList().GetMatchers() {
		ok, err := ev.predicate(fm.GetPredicate())
		if errors.Is(err, errUndecided) {
			// Real Envoy 1.39.3: a matcher that cannot decide at request time denies,
			// whatever the later rules and on_no_match say.
			eff.Mode, eff.Outcome = fm.GetOnMatch().GetAction().GetName(), "denied (the matcher cannot decide: "+err.Error()+")"
			return 403, nil
		}
		if err != nil {
			return 0, err
		}
		if ok {
			action = fm.GetOnMatch().GetAction()
			break
		}
	}
	if action == nil {
		return 0, fmt.Errorf("matcher has no action for this request")
	}
	a := &rbacconfigv3.Action{}
	if err := action.GetTypedConfig().UnmarshalTo(a); err != nil {
		return 0, err
	}
	eff.Mode = action.GetName()
	if a.GetAction() == rbacconfigv3.RBAC_DENY {
		eff.Outcome = "denied"
		return 403, nil
	}
	eff.Outcome = "allowed"
	return 0, nil
}

type rbacEval struct {
	state *requestState
}

func (e *rbacEval) predicate(p *cncfmatcherv3.Matcher_MatcherList_Predicate) (bool, error) {
	if p == nil {
		return true, nil // a rule without conditions matches every request
	}
	switch t := p.GetMatchType().(type) {
	case *cncfmatcherv3.Matcher_MatcherList_Predicate_SinglePredicate_:
		return e.single(t.SinglePredicate)
	case *cncfmatcherv3.Matcher_MatcherList_Predicate_AndMatcher:
		for _, q := range t.AndMatcher.GetPredicate() {
			ok, err := e.predicate(q)
			if err != nil || !ok {
				return false, err
			}
		}
		return true, nil
	case *cncfmatcherv3.Matcher_MatcherList_Predicate_OrMatcher:
		for _, q := range t.OrMatcher.GetPredicate() {
			ok, err := e.predicate(q)
			if err != nil || ok {
				return ok, err
			}
		}
		return false, nil
	case *cncfmatcherv3.Matcher_MatcherList_Predicate_NotMatcher:
		ok, err := e.predicate(t.NotMatcher)
		return !ok, err
	}
	return false, fmt.Errorf("predicate %T is not evaluated", p.GetMatchType())
}

func (e *rbacEval) single(sp *cncfmatcherv3.Matcher_MatcherList_Predicate_SinglePredicate) (bool, error) {
	in, err := sp.GetInput().GetTypedConfig().UnmarshalNew()
	if err != nil {
		return false, err
	}
	var custom proto.Message
	if c := sp.GetCustomMatch(); c != nil {
		if custom, err = c.GetTypedConfig().UnmarshalNew(); err != nil {
			return false, err
		}
	}
	switch in := in.(type) {
	case *envoymatcherv3.HttpRequestHeaderMatchInput:
		v, ok := e.header(in.GetHeaderName())
		if !ok {
			return false, nil
		}
		if vm := sp.GetValueMatch(); vm != nil {
			return cncfStringMatches(vm, v)
		}
	case *networkinputv3.SourceIPInput:
		ipm, ok := custom.(*ipmatcherv3.Ip)
		if !ok {
			break
		}
		if e.state.req.ClientIP == "" {
			return false, fmt.Errorf("the route checks the client IP: the request needs clientIP")
		}
		ip, err := netip.ParseAddr(e.state.req.ClientIP)
		if err != nil {
			return false, fmt.Errorf("clientIP %q: %v", e.state.req.ClientIP, err)
		}
		for _, r := range ipm.GetCidrRanges() {
			pfx, err := netip.ParsePrefix(fmt.Sprintf("%s/%d", r.GetAddressPrefix(), r.GetPrefixLen().GetValue()))
			if err == nil && pfx.Contains(ip) {
				return true, nil
			}
		}
		return false, nil
	case *cncfmatcherv3.HttpAttributesCelMatchInput:
		cm, ok := custom.(*cncfmatcherv3.CelMatcher)
		if !ok {
			break
		}
		return e.cel(cm.GetExprMatch().GetCelExprParsed())
	case *networkinputv3.DynamicMetadataInput:
		mm, ok := custom.(*metadatamatcherv3.Metadata)
		if !ok {
			break
		}
		return e.metadata(in, mm)
	}
	return false, fmt.Errorf("predicate on %T is not evaluated", in)
}

// header is a request header as the matcher sees it (":path" with its query).
func (e *rbacEval) header(name string) (string, bool) {
	switch strings.ToLower(name) {
	case ":method":
		return e.state.method, true
	case ":path":
		return e.state.path, true
	case ":authority", "host":
		return e.state.host, true
	case ":scheme":
		return e.state.scheme, true
	}
	v, ok := e.state.headers[strings.ToLower(name)]
	return v, ok
}

// errUndecided: a predicate cannot be decided at request time.
var errUndecided = errors.New("undecided")

// cel evaluates an expression over Envoy's request attributes; a result that is not
// true, or an evaluation error, is no match. An expression that reads a response
// attribute cannot be decided at request time (the response may come): real Envoy 1.39.3
// then stops the RBAC matcher and denies (scenario authorization-cel), which errUndecided
// reports.
func (e *rbacEval) cel(parsed *expr.ParsedExpr) (bool, error) {
	b, err := proto.Marshal(parsed)
	if err != nil {
		return false, err
	}
	v1 := &exprpb.ParsedExpr{}
	if err := proto.Unmarshal(b, v1); err != nil {
		return false, err
	}
	if readsIdent(v1.GetExpr(), "response") {
		return false, fmt.Errorf("%w: a CEL expression on response attributes at request time", errUndecided)
	}
	env, err := cel.NewEnv(cel.Variable("request", cel.DynType), cel.Variable("connection", cel.DynType),
		cel.Variable("source", cel.DynType))
	if err != nil {
		return false, err
	}
	prg, err := env.Program(cel.ParsedExprToAst(v1))
	if err != nil {
		return false, fmt.Errorf("CEL: %v", err)
	}
	pathOnly, query := splitPath(e.state.path)
	headers := map[string]any{}
	for k, v := range e.state.headers {
		headers[k] = v
	}
	req := map[string]any{
		"path": e.state.path, "url_path": pathOnly, "query": query, "host": e.state.host,
		"scheme": e.state.scheme, "method": e.state.method, "headers": headers,
		"referer": e.state.headers["referer"], "useragent": e.state.headers["user-agent"], "protocol": "HTTP/1.1",
	}
	src := map[string]any{}
	if e.state.req.ClientIP != "" {
		src["address"] = e.state.req.ClientIP
	}
	out, _, err := prg.Eval(map[string]any{"request": req, "source": src, "connection": map[string]any{}})
	if err != nil {
		return false, nil
	}
	v, ok := out.Value().(bool)
	return ok && v, nil
}

// metadata matches the jwt_authn payload of a verified provider.
func (e *rbacEval) metadata(in *networkinputv3.DynamicMetadataInput, m *metadatamatcherv3.Metadata) (bool, error) {
	if in.GetFilter() != httpFilterPrefix+"jwt_authn" {
		return false, fmt.Errorf("dynamic metadata of %s is not known offline", in.GetFilter())
	}
	var cur any = map[string]any(nil)
	if e.state.jwtPayload != nil {
		cur = e.state.jwtPayload
	}
	for _, seg := range in.GetPath() {
		mm, ok := cur.(map[string]any)
		if !ok {
			return false, nil
		}
		if cur, ok = mm[seg.GetKey()]; !ok {
			return false, nil
		}
	}
	ok, err := valueMatches(m.GetValue(), cur)
	if m.GetInvert() {
		return !ok, err
	}
	return ok, err
}

func valueMatches(vm *envoymatcherv3.ValueMatcher, v any) (bool, error) {
	switch p := vm.GetMatchPattern().(type) {
	case *envoymatcherv3.ValueMatcher_StringMatch:
		s, ok := v.(string)
		if !ok {
			return false, nil
		}
		return stringMatches(p.StringMatch, s)
	case *envoymatcherv3.ValueMatcher_ListMatch:
		l, ok := v.([]any)
		if !ok {
			return false, nil
		}
		for _, x := range l {
			if ok, err := valueMatches(p.ListMatch.GetOneOf(), x); err != nil || ok {
				return ok, err
			}
		}
		return false, nil
	case *envoymatcherv3.ValueMatcher_PresentMatch:
		return (v != nil) == p.PresentMatch, nil
	}
	return false, fmt.Errorf("value matcher %T is not evaluated", vm.GetMatchPattern())
}

// cncfStringMatches is stringMatches for the xDS (cncf) matcher type.
func cncfStringMatches(m *cncfmatcherv3.StringMatcher, v string) (bool, error) {
	em := &envoymatcherv3.StringMatcher{IgnoreCase: m.GetIgnoreCase()}
	switch p := m.GetMatchPattern().(type) {
	case *cncfmatcherv3.StringMatcher_Exact:
		em.MatchPattern = &envoymatcherv3.StringMatcher_Exact{Exact: p.Exact}
	case *cncfmatcherv3.StringMatcher_Prefix:
		em.MatchPattern = &envoymatcherv3.StringMatcher_Prefix{Prefix: p.Prefix}
	case *cncfmatcherv3.StringMatcher_Suffix:
		em.MatchPattern = &envoymatcherv3.StringMatcher_Suffix{Suffix: p.Suffix}
	case *cncfmatcherv3.StringMatcher_Contains:
		em.MatchPattern = &envoymatcherv3.StringMatcher_Contains{Contains: p.Contains}
	case *cncfmatcherv3.StringMatcher_SafeRegex:
		em.MatchPattern = &envoymatcherv3.StringMatcher_SafeRegex{
			SafeRegex: &envoymatcherv3.RegexMatcher{Regex: p.SafeRegex.GetRegex()}}
	default:
		return false, fmt.Errorf("string matcher %T is not evaluated", m.GetMatchPattern())
	}
	return stringMatches(em, v)
}

const networkRBACName = "envoy.filters.network.rbac"

// networkRBACDenies runs a listener's network RBAC filter for a connection: only the
// client address is known (Request.ClientIP).
func networkRBACDenies(cfg *anypb.Any, req Request) (bool, error) {
	n := &networkrbacv3.RBAC{}
	if err := cfg.UnmarshalTo(n); err != nil {
		return false, err
	}
	per, err := anypb.New(&rbacv3.RBACPerRoute{Rbac: &rbacv3.RBAC{Matcher: n.GetMatcher(), Rules: n.GetRules()}})
	if err != nil {
		return false, err
	}
	state := &requestState{req: req, headers: map[string]string{}}
	status, err := evalRBAC(per, state, &FilterEffect{})
	return status == 403, err
}

// readsIdent reports whether the expression refers to the identifier name.
func readsIdent(x *exprpb.Expr, name string) bool {
	if x == nil {
		return false
	}
	switch k := x.GetExprKind().(type) {
	case *exprpb.Expr_IdentExpr:
		return k.IdentExpr.GetName() == name
	case *exprpb.Expr_SelectExpr:
		return readsIdent(k.SelectExpr.GetOperand(), name)
	case *exprpb.Expr_CallExpr:
		if readsIdent(k.CallExpr.GetTarget(), name) {
			return true
		}
		for _, a := range k.CallExpr.GetArgs() {
			if readsIdent(a, name) {
				return true
			}
		}
	case *exprpb.Expr_ListExpr:
		for _, el := range k.ListExpr.GetElements() {
			if readsIdent(el, name) {
				return true
			}
		}
	case *exprpb.Expr_StructExpr:
		for _, en := range k.StructExpr.GetEntries() {
			if readsIdent(en.GetMapKey(), name) || readsIdent(en.GetValue(), name) {
				return true
			}
		}
	case *exprpb.Expr_ComprehensionExpr:
		c := k.ComprehensionExpr
		for _, sub := range []*exprpb.Expr{c.GetIterRange(), c.GetAccuInit(), c.GetLoopCondition(), c.GetLoopStep(),
			c.GetResult()} {
			if readsIdent(sub, name) {
				return true
			}
		}
	}
	return false
}
