package resource_test

import (
	"strings"
	"testing"

	"github.com/egharness/egharness/translator/resource"
)

func TestParseRefRoundTrip(t *testing.T) {
	tests := []struct {
		in   string
		want resource.Ref
	}{
		{"HTTPRoute/default/app", resource.Ref{Kind: "HTTPRoute", Namespace: "default", Name: "app"}},
		{"Gateway/infra/eg", resource.Ref{Kind: "Gateway", Namespace: "infra", Name: "eg"}},
		{"GatewayClass/eg", resource.Ref{Kind: "GatewayClass", Name: "eg"}},
		{"Namespace/apps", resource.Ref{Kind: "Namespace", Name: "apps"}},
	}
	for _, tt := range tests {
		got, err := resource.ParseRef(tt.in)
		if err != nil {
			t.Errorf("ParseRef(%q): %v", tt.in, err)
			continue
		}
		if got != tt.want {
			t.Errorf("ParseRef(%q) = %+v, want %+v", tt.in, got, tt.want)
		}
		if got.String() != tt.in {
			t.Errorf("ParseRef(%q).String() = %q", tt.in, got.String())
		}
	}
}

func TestParseRefErrors(t *testing.T) {
	tests := []struct {
		in, want string
	}{
		{"HTTPRoute/app", `object reference "HTTPRoute/app": HTTPRoute is namespaced, write HTTPRoute/NAMESPACE/NAME`},
		{"HTTPRoute", `object reference "HTTPRoute": want Kind/namespace/name`},
		{"", `object reference "": want Kind/namespace/name`},
		{"HTTPRoute//app", `object reference "HTTPRoute//app": want Kind/namespace/name`},
		{"HTTPRoute/default/", `want Kind/namespace/name`},
		{"/default/app", `want Kind/namespace/name`},
		{"HTTPRoute/a/b/c", `want Kind/namespace/name`},
		{"GatewayClass/", `want Kind/namespace/name`},
	}
	for _, tt := range tests {
		_, err := resource.ParseRef(tt.in)
		if err == nil {
			t.Errorf("ParseRef(%q) accepted", tt.in)
			continue
		}
		if !strings.Contains(err.Error(), tt.want) {
			t.Errorf("ParseRef(%q) error %q, want it to contain %q", tt.in, err, tt.want)
		}
	}
}

func TestRefLess(t *testing.T) {
	a := resource.Ref{Kind: "Gateway", Namespace: "b", Name: "a"}
	b := resource.Ref{Kind: "HTTPRoute", Namespace: "a", Name: "a"}
	c := resource.Ref{Kind: "HTTPRoute", Namespace: "a", Name: "b"}
	d := resource.Ref{Kind: "HTTPRoute", Namespace: "b", Name: "a"}
	order := []resource.Ref{a, b, c, d}
	for i := range order {
		for j := range order {
			if got, want := order[i].Less(order[j]), i < j; got != want {
				t.Errorf("%s.Less(%s) = %t, want %t", order[i], order[j], got, want)
			}
		}
	}
}

func TestClusterScoped(t *testing.T) {
	for kind, want := range map[string]bool{"GatewayClass": true, "Namespace": true, "EnvoyGateway": true,
		"Gateway": false, "Service": false} {
		if got := resource.ClusterScoped(kind); got != want {
			t.Errorf("ClusterScoped(%s) = %t", kind, got)
		}
	}
}

func TestWhereWithoutLine(t *testing.T) {
	if got := (resource.Object{File: "x.yaml"}).Where(); got != "x.yaml" {
		t.Errorf("Where() = %q", got)
	}
}
