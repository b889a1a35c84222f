package xds

import (
	"testing"

	egv1a1 "github.com/envoyproxy/gateway/api/v1alpha1"

	"github.com/egharness/egharness/translator/ir"
)

func TestAuthorizationCELMatchesEG(t *testing.T) {
	want := egRoutes(t, "authorization-cel")
	name := "httproute/default/httproute-1/rule/0/match/0/www_example_com"
	allow, deny := egv1a1.AuthorizationActionAllow, egv1a1.AuthorizationActionDeny
	ruleName := func(s string) *string { return &s }
	cel := func(s string) *egv1a1.CELExpression { c := egv1a1.CELExpression(s); return &c }
	spec := egv1a1.SecurityPolicySpec{Authorization: &egv1a1.Authorization{
		DefaultAction: &deny,
		Rules: []egv1a1.AuthorizationRule{
			{Name: ruleName("allow-admin-path"), Action: allow, CEL: cel("request.path.startsWith('/admin')"), Principal: &egv1a1.Principal{}},
			{Name: ruleName("allow-team-post"), Action: allow, CEL: cel("request.method == 'POST'"), Principal: &egv1a1.Principal{
				Headers: []egv1a1.AuthorizationHeaderMatch{{Name: "x-team", Values: []string{"team-a"}}},
			}},
		},
	}}
	r := &ir.HTTPRoute{Name: name, Policies: security(spec)}
	out, hcm := translateFor(t, Features{JWTStableNames: true}, policyListener(r))
	samePerFilter(t, rbacFilterName, routesByName(out)[name], want[name])
	if got := filterNames(hcm); len(got) != 2 || got[0] != rbacFilterName {
		t.Errorf("filters %v", got)
	}
}

func TestAuthorizationRuleNamesAndDefault(t *testing.T) {
	allow := egv1a1.AuthorizationActionAllow
	spec := egv1a1.SecurityPolicySpec{Authorization: &egv1a1.Authorization{
		DefaultAction: &allow,
		Rules: []egv1a1.AuthorizationRule{
			{Action: egv1a1.AuthorizationActionDeny, Principal: &egv1a1.Principal{ClientCIDRs: []egv1a1.CIDR{"10.1.2.3/8"}}},
		},
	}}
	a := security(spec).Security
	per, err := rbacPerRoute(a)
	if err != nil {
		t.Fatal(err)
	}
	m := per.Rbac.Matcher
	if got := m.GetMatcherList().GetMatchers()[0].GetOnMatch().GetAction().GetName(); got != "securitypolicy/default/sp/authorization/rule/0" {
		t.Errorf("unnamed rule: %q", got)
	}
	if m.GetOnNoMatch().GetAction().GetName() != "default" {
		t.Errorf("default action name")
	}
	spec.Authorization.Rules[0].Principal.ClientCIDRs = []egv1a1.CIDR{"not-a-cidr"}
	if _, err := rbacPerRoute(security(spec).Security); err == nil {
		t.Errorf("a bad CIDR must be an error")
	}
}
