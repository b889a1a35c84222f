package result

import "testing"

// Parent keys are how scenarios and recorded divergences name a parent; a cluster-scoped
// one (a GatewayClass) has no namespace part.
func TestParentRefString(t *testing.T) {
	for _, c := range []struct {
		ref  ParentRef
		want string
	}{
		{ParentRef{Kind: "Gateway", Namespace: "default", Name: "eg"}, "Gateway/default/eg"},
		{ParentRef{Kind: "Gateway", Namespace: "default", Name: "eg", SectionName: "http", Port: 80},
			"Gateway/default/eg/http:80"},
		{ParentRef{Kind: "GatewayClass", Name: "eg"}, "GatewayClass/eg"},
	} {
		if got := c.ref.String(); got != c.want {
			t.Errorf("%+v: got %q, want %q", c.ref, got, c.want)
		}
	}
}
