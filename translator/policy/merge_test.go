package policy

import (
	"testing"

	egv1a1 "github.com/envoyproxy/gateway/api/v1alpha1"
	gwapiv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/egharness/egharness/translator/ir"
)

// A merged policy knows, field by nested field, which policy wrote what only the parent
// sets: references there resolve in the parent's namespace (MRG-05).
func TestMergeRecordsNestedOwners(t *testing.T) {
	strategic := egv1a1.StrategicMerge
	parent := &pol[egv1a1.SecurityPolicySpec]{ref: ir.PolicyRef{Kind: "SecurityPolicy", Namespace: "infra", Name: "gw"},
		spec: &egv1a1.SecurityPolicySpec{
			OIDC: &egv1a1.OIDC{
				ClientIDRef:  &gwapiv1.SecretObjectReference{Name: "client-id"},
				ClientSecret: gwapiv1.SecretObjectReference{Name: "client-secret"},
			},
			CORS: &egv1a1.CORS{},
		}}
	child := &pol[egv1a1.SecurityPolicySpec]{ref: ir.PolicyRef{Kind: "SecurityPolicy", Namespace: "app", Name: "shop"},
		mergeType: &strategic, spec: &egv1a1.SecurityPolicySpec{
			OIDC: &egv1a1.OIDC{ClientSecret: gwapiv1.SecretObjectReference{Name: "mine"}},
		}}
	a, err := mergePolicies(parent, child)
	if err != nil {
		t.Fatal(err)
	}
	for path, want := range map[string]string{
		"oidc":                      "shop", // both declare it
		"oidc.clientSecret":         "shop", // the child's value
		"oidc.clientSecret.name":    "shop",
		"oidc.clientIDRef":          "gw", // only the parent sets it
		"oidc.clientIDRef.name":     "gw",
		"cors":                      "gw",
		"cors.allowOrigins":         "gw",
		"oidc.provider.backendRefs": "shop", // nobody sets it: the policy itself
	} {
		if got := a.OwnerOfPath(path).Name; got != want {
			t.Errorf("OwnerOfPath(%s) = %s, want %s", path, got, want)
		}
	}
}
