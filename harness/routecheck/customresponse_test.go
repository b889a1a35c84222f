package routecheck

import (
	"testing"

	expr "cel.dev/expr"
	cncfcorev3 "github.com/cncf/xds/go/xds/core/v3"
	cncfmatcherv3 "github.com/cncf/xds/go/xds/type/matcher/v3"
	cncftypev3 "github.com/cncf/xds/go/xds/type/v3"
	envoymatcherv3 "github.com/envoyproxy/go-control-plane/envoy/type/matcher/v3"
	"google.golang.org/protobuf/proto"
)

func TestCustomResponsePredicates(t *testing.T) {
	input := func(m proto.Message) *cncfcorev3.TypedExtensionConfig {
		return &cncfcorev3.TypedExtensionConfig{Name: "in", TypedConfig: mustAny(t, m)}
	}
	exact := func(in proto.Message, v string) *cncfmatcherv3.Matcher_MatcherList_Predicate {
		return &cncfmatcherv3.Matcher_MatcherList_Predicate{
			MatchType: &cncfmatcherv3.Matcher_MatcherList_Predicate_SinglePredicate_{
				SinglePredicate: &cncfmatcherv3.Matcher_MatcherList_Predicate_SinglePredicate{Input: input(in),
					Matcher: &cncfmatcherv3.Matcher_MatcherList_Predicate_SinglePredicate_ValueMatch{
						ValueMatch: &cncfmatcherv3.StringMatcher{MatchPattern: &cncfmatcherv3.StringMatcher_Exact{Exact: v}}}}}}
	}
	sel := func(id int64) *expr.Expr {
		return &expr.Expr{Id: id + 1, ExprKind: &expr.Expr_SelectExpr{SelectExpr: &expr.Expr_Select{
			Operand: &expr.Expr{Id: id, ExprKind: &expr.Expr_IdentExpr{IdentExpr: &expr.Expr_Ident{Name: "response"}}},
			Field:   "code"}}}
	}
	num := func(v int64) *expr.Expr {
		return &expr.Expr{
			ExprKind: &expr.Expr_ConstExpr{ConstExpr: &expr.Constant{ConstantKind: &expr.Constant_Int64Value{Int64Value: v}}}}
	}
	call := func(fn string, a ...*expr.Expr) *expr.Expr {
		return &expr.Expr{ExprKind: &expr.Expr_CallExpr{CallExpr: &expr.Expr_Call{Function: fn, Args: a}}}
	}
	// celPredicate matches when the CEL expression e holds for the response (EG's status code
	// ranges are such expressions).
	celPredicate := func(e *expr.Expr) *cncfmatcherv3.Matcher_MatcherList_Predicate {
		return &cncfmatcherv3.Matcher_MatcherList_Predicate{
			MatchType: &cncfmatcherv3.Matcher_MatcherList_Predicate_SinglePredicate_{
				SinglePredicate: &cncfmatcherv3.Matcher_MatcherList_Predicate_SinglePredicate{Input: input(
					&cncfmatcherv3.HttpAttributesCelMatchInput{}),
					Matcher: &cncfmatcherv3.Matcher_MatcherList_Predicate_SinglePredicate_CustomMatch{
						CustomMatch: input(&cncfmatcherv3.CelMatcher{
							ExprMatch: &cncftypev3.CelExpression{CelExprParsed: &expr.ParsedExpr{Expr: e}}})}}}}
	}
	rng := celPredicate(call("_&&_", call("_>=_", sel(1), num(500)), call("_<=_", sel(5), num(599))))
	status503 := exact(&envoymatcherv3.HttpResponseStatusCodeMatchInput{}, "503")
	local := exact(&envoymatcherv3.HttpResponseLocalReplyMatchInput{}, "true")
	header := exact(&envoymatcherv3.HttpResponseHeaderMatchInput{HeaderName: "x-moved"}, "yes")
	and := func(ps ...*cncfmatcherv3.Matcher_MatcherList_Predicate) *cncfmatcherv3.Matcher_MatcherList_Predicate {
		return &cncfmatcherv3.Matcher_MatcherList_Predicate{
			MatchType: &cncfmatcherv3.Matcher_MatcherList_Predicate_AndMatcher{
				AndMatcher: &cncfmatcherv3.Matcher_MatcherList_Predicate_PredicateList{Predicate: ps}}}
	}
	or := func(ps ...*cncfmatcherv3.Matcher_MatcherList_Predicate) *cncfmatcherv3.Matcher_MatcherList_Predicate {
		return &cncfmatcherv3.Matcher_MatcherList_Predicate{
			MatchType: &cncfmatcherv3.Matcher_MatcherList_Predicate_OrMatcher{
				OrMatcher: &cncfmatcherv3.Matcher_MatcherList_Predicate_PredicateList{Predicate: ps}}}
	}
	cases := []struct {
		name   string
		p      *cncfmatcherv3.Matcher_MatcherList_Predicate
		status int
		local  bool
		want   bool
	}{
		{"503 from Envoy", and(status503, local), 503, true, true},
		{"503 from the backend is not local", and(status503, local), 503, false, false},
		{"range holds 550", rng, 550, false, true},
		{"range excludes 404", rng, 404, false, false},
		{"404 or range", or(exact(&envoymatcherv3.HttpResponseStatusCodeMatchInput{}, "404"), rng), 404, false, true},
		{"no response header is known", header, 200, false, false},
	}
	for _, c := range cases {
		got, err := crPredicate(c.p, c.status, c.local)
		if err != nil || got != c.want {
			t.Errorf("%s: %v, %v; want %v", c.name, got, err, c.want)
		}
	}
	// a CEL expression of another shape is named, not guessed
	other := celPredicate(call("_==_", sel(1), num(500)))
	if _, err := crPredicate(other, 500, false); err == nil {
		t.Errorf("an unknown CEL shape was evaluated")
	}
}
