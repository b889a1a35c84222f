package routecheck

import (
	"fmt"
	"strconv"

	expr "cel.dev/expr"
	cncfmatcherv3 "github.com/cncf/xds/go/xds/type/matcher/v3"
	customresponsev3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/http/custom_response/v3"
	healthcheckv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/http/health_check/v3"
	localresponsev3 "github.com/envoyproxy/go-control-plane/envoy/extensions/http/custom_response/local_response_policy/v3"
	redirectpolicyv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/http/custom_response/redirect_policy/v3"
	envoymatcherv3 "github.com/envoyproxy/go-control-plane/envoy/type/matcher/v3"
)

// applyCustomResponse follows Envoy's custom_response filter on the answer: an encoder
// filter, so it sees the answer of the backend, of the route (direct response) and of the
// filters after it (a fault abort) alike. Its first matcher whose predicate holds replaces
// the answer: a local response policy sets the status and body, a redirect policy answers
// with its status and location. What a backend answers is taken as 200 with no headers (the
// checker has no backend), so a response-header predicate never holds for it; a Local or
// Backend source predicate is decided by whether Envoy answered itself.
func applyCustomResponse(h *hcmConfig, state *requestState, ans Answer) (Answer, error) {
	if state.matched == nil {
		return ans, nil
	}
	for _, f := range h.filters {
		if f.kind != "custom_response" {
			continue
		}
		per := state.matched.perFilter[f.name]
		if !filterEnabled(f, per) || f.cfg == nil {
			continue
		}
		cr := &customresponsev3.CustomResponse{}
		if err := f.cfg.UnmarshalTo(cr); err != nil {
			return ans, fmt.Errorf("%w: filter %s: %v", ErrInvalidConfig, f.name, err)
		}
		local := ans.Cluster == "" || ans.AnsweredBy != ""
		for _, m := range cr.GetCustomResponseMatcher().GetMatcherList().GetMatchers() {
			ok, err := crPredicate(m.GetPredicate(), ans.Status, local)
			if err != nil {
				return ans, fmt.Errorf("%w: filter %s on route %s: %v", ErrInvalidConfig, f.name, state.matched.name, err)
			}
			if !ok {
				continue
			}
			act := m.GetOnMatch().GetAction()
			eff := FilterEffect{Name: f.name, Kind: f.kind, Outcome: act.GetName()}
			lp, rp := &localresponsev3.LocalResponsePolicy{}, &redirectpolicyv3.RedirectPolicy{}
			switch {
			case act.GetTypedConfig().MessageIs(lp):
				if err := act.GetTypedConfig().UnmarshalTo(lp); err != nil {
					return ans, err
				}
				if lp.GetStatusCode() != nil {
					ans.Status = int(lp.GetStatusCode().GetValue())
				}
				if lp.GetBodyFormat() != nil {
					body, err := literalFormat(lp.GetBodyFormat())
					if err != nil {
						return ans, err
					}
					ans.Body = body
				}
			case act.GetTypedConfig().MessageIs(rp):
				if err := act.GetTypedConfig().UnmarshalTo(rp); err != nil {
					return ans, err
				}
				c, err := compileRedirect(rp.GetRedirectAction())
				if err != nil {
					return ans, err
				}
				ans.Status = 302
				if rp.GetStatusCode() != nil {
					ans.Status = int(rp.GetStatusCode().GetValue())
				}
				ans.Location = newURI(c.redir, state, state.path)
				ans.Body = ""
			default:
				return ans, fmt.Errorf("%w: filter %s: action %s is not evaluated", ErrInvalidConfig, f.name,
					act.GetTypedConfig().GetTypeUrl())
			}
			ans.AnsweredBy, ans.Cluster = f.kind, ""
			if state.req.forwarded != nil && !local {
				// the backend was reached; its answer is replaced
				eff.Mode = "backend answer replaced"
			}
			state.recordFilter(eff)
			break
		}
	}
	return ans, nil
}

// crPredicate evaluates a custom_response matcher predicate on the answer.
func crPredicate(p *cncfmatcherv3.Matcher_MatcherList_Predicate, status int, local bool) (bool, error) {
	switch {
	case p.GetOrMatcher() != nil:
		for _, q := range p.GetOrMatcher().GetPredicate() {
			ok, err := crPredicate(q, status, local)
			if err != nil || ok {
				return ok, err
			}
		}
		return false, nil
	case p.GetAndMatcher() != nil:
		for _, q := range p.GetAndMatcher().GetPredicate() {
			ok, err := crPredicate(q, status, local)
			if err != nil || !ok {
				return ok, err
			}
		}
		return true, nil
	}
	sp := p.GetSinglePredicate()
	in := sp.GetInput().GetTypedConfig()
	switch {
	case in.MessageIs(&envoymatcherv3.HttpResponseStatusCodeMatchInput{}):
		return crString(sp.GetValueMatch(), strconv.Itoa(status))
	case in.MessageIs(&envoymatcherv3.HttpResponseLocalReplyMatchInput{}):
		return crString(sp.GetValueMatch(), strconv.FormatBool(local))
	case in.MessageIs(&envoymatcherv3.HttpResponseHeaderMatchInput{}):
		return false, nil // no response header is known
	case in.MessageIs(&cncfmatcherv3.HttpAttributesCelMatchInput{}):
		cm := &cncfmatcherv3.CelMatcher{}
		if err := sp.GetCustomMatch().GetTypedConfig().UnmarshalTo(cm); err != nil {
			return false, err
		}
		lo, hi, ok := codeRange(cm.GetExprMatch().GetCelExprParsed().GetExpr())
		if !ok {
			return false, fmt.Errorf("a CEL matcher other than a response.code range is not evaluated")
		}
		return int64(status) >= lo && int64(status) <= hi, nil
	}
	return false, fmt.Errorf("matcher input %s is not evaluated", in.GetTypeUrl())
}

func crString(m *cncfmatcherv3.StringMatcher, v string) (bool, error) {
	if e, ok := m.GetMatchPattern().(*cncfmatcherv3.StringMatcher_Exact); ok {
		return e.Exact == v, nil
	}
	return false, fmt.Errorf("string matcher %T is not evaluated", m.GetMatchPattern())
}

// codeRange reads `response.code >= A && response.code <= B`, the expression EG writes.
func codeRange(e *expr.Expr) (int64, int64, bool) {
	and := e.GetCallExpr()
	if and.GetFunction() != "_&&_" || len(and.GetArgs()) != 2 {
		return 0, 0, false
	}
	bound := func(c *expr.Expr, fn string) (int64, bool) {
		call := c.GetCallExpr()
		if call.GetFunction() != fn || len(call.GetArgs()) != 2 {
			return 0, false
		}
		sel := call.GetArgs()[0].GetSelectExpr()
		if sel.GetField() != "code" || sel.GetOperand().GetIdentExpr().GetName() != "response" {
			return 0, false
		}
		k, ok := call.GetArgs()[1].GetConstExpr().GetConstantKind().(*expr.Constant_Int64Value)
		if !ok {
			return 0, false
		}
		return k.Int64Value, true
	}
	lo, ok1 := bound(and.GetArgs()[0], "_>=_")
	hi, ok2 := bound(and.GetArgs()[1], "_<=_")
	return lo, hi, ok1 && ok2
}

// evalHealthCheck follows Envoy's health_check filter without pass-through (the readiness
// listener EG adds to every proxy): a request whose headers match is answered 200 by the
// filter itself (Envoy is taken as not draining); others go on to the route.
func evalHealthCheck(f httpFilterEntry, state *requestState, eff *FilterEffect) (int, error) {
	hc := &healthcheckv3.HealthCheck{}
	if err := f.cfg.UnmarshalTo(hc); err != nil {
		return 0, err
	}
	if hc.GetPassThroughMode().GetValue() {
		return 0, fmt.Errorf("pass-through health checks are not evaluated")
	}
	if all, err := allHeadersMatch(hc.GetHeaders(), state.headers); err != nil {
		return 0, err
	} else if !all {
		eff.Outcome = "not a health check"
		return 0, nil
	}
	eff.Outcome = "healthy"
	return 200, nil
}
