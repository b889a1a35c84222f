package xds

import (
	"fmt"

	cncfv3 "github.com/cncf/xds/go/xds/core/v3"
	cncfmatcherv3 "github.com/cncf/xds/go/xds/type/matcher/v3"
	egv1a1 "github.com/envoyproxy/gateway/api/v1alpha1"
	listenerv3 "github.com/envoyproxy/go-control-plane/envoy/config/listener/v3"
	rbacconfigv3 "github.com/envoyproxy/go-control-plane/envoy/config/rbac/v3"
	networkrbacv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/network/rbac/v3"

	"github.com/egharness/egharness/translator/ir"
)

const networkRBACFilter = "envoy.filters.network.rbac"

// tcpAuthorizationFilter is the network RBAC filter a TCPRoute's SecurityPolicy compiles to
// (SP-02): only client CIDRs can be checked on a connection, so each rule is its CIDRs (or
// always, without any), first match decides, defaultAction (Deny unless set) otherwise.
// The policy stage refuses every other feature on a TCPRoute, and CIDRs that do not parse;
// should one get here, the chain denies every connection rather than let them all in.
func tcpAuthorizationFilter(statPrefix string, a *ir.Applied[egv1a1.SecurityPolicySpec]) *listenerv3.Filter {
	if a == nil || a.Spec == nil || a.Spec.Authorization == nil {
		return nil
	}
	auth := a.Spec.Authorization
	allow, deny := rbacAction("ALLOW", rbacconfigv3.RBAC_ALLOW), rbacAction("DENY", rbacconfigv3.RBAC_DENY)
	owner := fieldOwner(a, "authorization")
	var matchers []*cncfmatcherv3.Matcher_MatcherList_FieldMatcher
	for i, rule := range auth.Rules {
		name := fmt.Sprintf("securitypolicy/%s/%s/authorization/rule/%d", owner.Namespace, owner.Name, i)
		if rule.Name != nil && *rule.Name != "" {
			name = *rule.Name
		}
		var pred *predicate
		if rule.Principal != nil && len(rule.Principal.ClientCIDRs) > 0 {
			p, err := ipPredicate(rule.Principal.ClientCIDRs)
			if err != nil {
				return networkRBAC(statPrefix, &cncfmatcherv3.Matcher{OnNoMatch: &cncfmatcherv3.Matcher_OnMatch{OnMatch: &cncfmatcherv3.Matcher_OnMatch_Action{
					Action: &cncfv3.TypedExtensionConfig{Name: "default", TypedConfig: deny},
				}}})
			}
			pred = p
		}
		action := allow
		if rule.Action == egv1a1.AuthorizationActionDeny {
			action = deny
		}
		matchers = append(matchers, &cncfmatcherv3.Matcher_MatcherList_FieldMatcher{
			Predicate: pred,
			OnMatch: &cncfmatcherv3.Matcher_OnMatch{OnMatch: &cncfmatcherv3.Matcher_OnMatch_Action{
				Action: &cncfv3.TypedExtensionConfig{Name: name, TypedConfig: action},
			}},
		})
	}
	def := deny
	if auth.DefaultAction != nil && *auth.DefaultAction == egv1a1.AuthorizationActionAllow {
		def = allow
	}
	m := &cncfmatcherv3.Matcher{OnNoMatch: &cncfmatcherv3.Matcher_OnMatch{OnMatch: &cncfmatcherv3.Matcher_OnMatch_Action{
		Action: &cncfv3.TypedExtensionConfig{Name: "default", TypedConfig: def},
	}}}
	if len(matchers) > 0 {
		m.MatcherType = &cncfmatcherv3.Matcher_MatcherList_{MatcherList: &cncfmatcherv3.Matcher_MatcherList{Matchers: matchers}}
	}
	return networkRBAC(statPrefix, m)
}

func networkRBAC(statPrefix string, m *cncfmatcherv3.Matcher) *listenerv3.Filter {
	return &listenerv3.Filter{
		Name:       networkRBACFilter,
		ConfigType: &listenerv3.Filter_TypedConfig{TypedConfig: mustAny(&networkrbacv3.RBAC{StatPrefix: statPrefix, Matcher: m})},
	}
}
