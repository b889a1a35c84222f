package xds

import (
	"testing"

	egv1a1 "github.com/envoyproxy/gateway/api/v1alpha1"
	networkrbacv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/network/rbac/v3"

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
			{Name: ruleName("allow-admin-path"), Action: allow, CEL: cel("request.path.startsWith('/admin')"),
				Principal: &egv1a1.Principal{}},
			{Name: ruleName("allow-team-post"), Action: allow, CEL: cel("request.method == 'POST'"),
				Principal: &egv1a1.Principal{
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
	a := security(spec).Authorization
	per, err := rbacPerRoute(a)
	if err != nil {
		t.Fatal(err)
	}
	m := per.Rbac.Matcher
	got := m.GetMatcherList().GetMatchers()[0].GetOnMatch().GetAction().GetName()
	if got != "securitypolicy/default/sp/authorization/rule/0" {
		t.Errorf("unnamed rule: %q", got)
	}
	if m.GetOnNoMatch().GetAction().GetName() != "default" {
		t.Errorf("default action name")
	}
	spec.Authorization.Rules[0].Principal.ClientCIDRs = []egv1a1.CIDR{"not-a-cidr"}
	if _, err := rbacPerRoute(security(spec).Authorization); err == nil {
		t.Errorf("a bad CIDR must be an error")
	}
}

func TestTCPAuthorizationMatchesEG(t *testing.T) {
	allow, deny := egv1a1.AuthorizationActionAllow, egv1a1.AuthorizationActionDeny
	n := func(s string) *string { return &s }
	spec := egv1a1.SecurityPolicySpec{Authorization: &egv1a1.Authorization{
		DefaultAction: &allow,
		Rules: []egv1a1.AuthorizationRule{
			{Name: n("deny-office"), Action: deny, Principal: &egv1a1.Principal{ClientCIDRs: []egv1a1.CIDR{"10.0.0.0/24"}}},
			{Name: n("allow-corp"), Action: allow, Principal: &egv1a1.Principal{ClientCIDRs: []egv1a1.CIDR{"192.168.100.0/24"}}},
		},
	}}
	x := &ir.XDS{
		TCP: []*ir.TCPListener{
			{Name: "default/gw/tcp", Address: "0.0.0.0", Port: 10080, Protocol: "TCP", Routes: []*ir.TCPRoute{{
				Name: "tcproute/default/r", Destination: &ir.Destination{Name: "tcproute/default/r"}, Policies: security(spec),
			}}}}}
	out, err := Translator{}.Translate(x)
	if err != nil {
		t.Fatal(err)
	}
	fs := out.Listeners[0].FilterChains[0].Filters
	if len(fs) != 2 || fs[0].Name != networkRBACFilter || fs[1].Name != tcpProxyFilter {
		t.Fatalf("network RBAC must come before tcp_proxy: %v", fs)
	}
	want := egListenerFilter(t, "tcp-route-authorization", networkRBACFilter)
	sameAny(t, fs[0].GetTypedConfig(), want)
	spec.Authorization.Rules[0].Principal.ClientCIDRs = []egv1a1.CIDR{"bad"}
	f := tcpAuthorizationFilter("tcp-10080", security(spec).Authorization)
	per := &networkrbacv3.RBAC{}
	if err := f.GetTypedConfig().UnmarshalTo(per); err != nil || per.Matcher.GetMatcherList() != nil ||
		per.Matcher.GetOnNoMatch().GetAction().GetName() != "default" {
		t.Errorf("an unparsable CIDR must deny every connection: %v", per)
	}
}
