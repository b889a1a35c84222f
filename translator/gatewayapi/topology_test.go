package gatewayapi

import (
	"strings"
	"testing"

	"github.com/egharness/egharness/translator/refgrant"
)

// The stage indexes the ReferenceGrants once and hands that index on in the Topology:
// the policy stage asks the same one (policy targets, Secrets, CA bundles, backendRefs).
func TestTopologyCarriesTheGrants(t *testing.T) {
	grant := `---
apiVersion: gateway.networking.k8s.io/v1beta1
kind: ReferenceGrant
metadata: {name: vault, namespace: vault}
spec:
  from: [{group: gateway.envoyproxy.io, kind: SecurityPolicy, namespace: default}]
  to: [{group: "", kind: Secret}]
`
	out := translateYAML(t, strings.Replace(portObjects, "PARENTS", "[{name: eg}]", 1)+grant)
	if out.Topology == nil || out.Topology.Grants == nil {
		t.Fatal("the Topology carries no ReferenceGrant index")
	}
	policy := refgrant.From{Group: "gateway.envoyproxy.io", Kind: "SecurityPolicy", Namespace: "default"}
	secret := refgrant.To{Kind: "Secret", Namespace: "vault", Name: "users"}
	if !out.Topology.Grants.Permits(policy, secret) {
		t.Error("the grant in vault does not let the SecurityPolicy read the Secret")
	}
	route := refgrant.From{Group: "gateway.networking.k8s.io", Kind: "HTTPRoute", Namespace: "default"}
	if out.Topology.Grants.Permits(route, secret) {
		t.Error("a grant from SecurityPolicies lets an HTTPRoute read the Secret")
	}
}
