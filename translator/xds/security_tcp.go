package xds

import (
	cncfmatcherv3 "github.com/cncf/xds/go/xds/type/matcher/v3"
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
func tcpAuthorizationFilter(statPrefix string, a *ir.Authorization) *listenerv3.Filter {
	if a == nil {
		return nil
	}
	m, err := authorizationMatcher(a, func(rule ir.AuthorizationRule) (*predicate, error) {
		if len(rule.ClientCIDRs) == 0 {
			return nil, nil // a rule without CIDRs matches every connection
		}
		return ipPredicate(rule.ClientCIDRs)
	})
	if err != nil {
		deny := rbacAction("DENY", rbacconfigv3.RBAC_DENY)
		m = &cncfmatcherv3.Matcher{OnNoMatch: decision("default", deny)}
	}
	return networkRBAC(statPrefix, m)
}

func networkRBAC(statPrefix string, m *cncfmatcherv3.Matcher) *listenerv3.Filter {
	return &listenerv3.Filter{
		Name: networkRBACFilter,
		ConfigType: &listenerv3.Filter_TypedConfig{TypedConfig: mustAny(
			&networkrbacv3.RBAC{StatPrefix: statPrefix, Matcher: m})},
	}
}
