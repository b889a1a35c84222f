package refgrant

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	gwapiv1 "sigs.k8s.io/gateway-api/apis/v1"
	gwapiv1b1 "sigs.k8s.io/gateway-api/apis/v1beta1"

	"github.com/egharness/egharness/translator/resource"
)

func name(s string) *gwapiv1.ObjectName { n := gwapiv1.ObjectName(s); return &n }

func TestPermits(t *testing.T) {
	const gw = "gateway.networking.k8s.io"
	const eg = "gateway.envoyproxy.io"
	route := From{Group: gw, Kind: "HTTPRoute", Namespace: "apps"}
	svc := To{Group: "", Kind: "Service", Namespace: "backends", Name: "payments"}
	grant := func(ns string, from gwapiv1.ReferenceGrantFrom, to gwapiv1.ReferenceGrantTo) *Index {
		grants := &Index{}
		grants.Add(
			ns,
			gwapiv1.ReferenceGrantSpec{From: []gwapiv1.ReferenceGrantFrom{from}, To: []gwapiv1.ReferenceGrantTo{to}},
		)
		return grants
	}
	okFrom := gwapiv1.ReferenceGrantFrom{Group: gw, Kind: "HTTPRoute", Namespace: "apps"}
	okTo := gwapiv1.ReferenceGrantTo{Group: "", Kind: "Service", Name: name("payments")}
	anyName := gwapiv1.ReferenceGrantTo{Group: "", Kind: "Service"}
	emptyName := gwapiv1.ReferenceGrantTo{Group: "", Kind: "Service", Name: name("")}

	cases := []struct {
		name   string
		grants *Index
		from   From
		to     To
		want   bool
	}{
		{"same namespace needs no grant", nil, route, To{Kind: "Service", Namespace: "apps", Name: "x"}, true},
		{"no grant", &Index{}, route, svc, false},
		{"nil index, other namespace", nil, route, svc, false},
		{"exact grant", grant("backends", okFrom, okTo), route, svc, true},
		{"grant without a name covers every object of the kind", grant("backends", okFrom, anyName), route, svc, true},
		{"grant with an empty name covers every object of the kind", grant("backends", okFrom, emptyName), route, svc, true},
		{"grant in another namespace than the target's", grant("apps", okFrom, okTo), route, svc, false},
		{"from another namespace",
			grant("backends", gwapiv1.ReferenceGrantFrom{Group: gw, Kind: "HTTPRoute", Namespace: "other"}, okTo), route, svc,
			false},
		{"from another kind",
			grant("backends", gwapiv1.ReferenceGrantFrom{Group: gw, Kind: "GRPCRoute", Namespace: "apps"}, okTo), route, svc,
			false},
		{"from another group",
			grant("backends", gwapiv1.ReferenceGrantFrom{Group: eg, Kind: "HTTPRoute", Namespace: "apps"}, okTo), route, svc,
			false},
		{"to another name",
			grant("backends", okFrom, gwapiv1.ReferenceGrantTo{Group: "", Kind: "Service", Name: name("ledger")}), route, svc,
			false},
		{"to another kind",
			grant("backends", okFrom, gwapiv1.ReferenceGrantTo{Group: "", Kind: "Secret", Name: name("payments")}), route, svc,
			false},
		{"to another group",
			grant("backends", okFrom, gwapiv1.ReferenceGrantTo{Group: eg, Kind: "Service", Name: name("payments")}), route, svc,
			false},
		{"core group is empty, not core", grant("backends", okFrom, gwapiv1.ReferenceGrantTo{Group: "core", Kind: "Service"}),
			route, svc, false},
		{"policy referrer: EG group and kind",
			grant("vault", gwapiv1.ReferenceGrantFrom{Group: eg, Kind: "SecurityPolicy", Namespace: "infra"},
				gwapiv1.ReferenceGrantTo{Kind: "Secret"}),
			From{Group: eg, Kind: "SecurityPolicy", Namespace: "infra"}, To{Kind: "Secret", Namespace: "vault", Name: "users"},
			true},
		{"policy referrer from the route's namespace is not the policy's",
			grant("vault", gwapiv1.ReferenceGrantFrom{Group: eg, Kind: "SecurityPolicy", Namespace: "infra"},
				gwapiv1.ReferenceGrantTo{Kind: "Secret"}),
			From{Group: eg, Kind: "SecurityPolicy", Namespace: "app"}, To{Kind: "Secret", Namespace: "vault", Name: "users"},
			false},
	}
	for _, c := range cases {
		if got := c.grants.Permits(c.from, c.to); got != c.want {
			t.Errorf("%s: Permits(%+v, %+v) = %v, want %v", c.name, c.from, c.to, got, c.want)
		}
	}
}

func TestNewReadsBothVersions(t *testing.T) {
	objs := []resource.Object{
		{Obj: &gwapiv1.ReferenceGrant{ObjectMeta: metav1.ObjectMeta{Namespace: "b", Name: "v1"},
			Spec: gwapiv1.ReferenceGrantSpec{
				From: []gwapiv1.ReferenceGrantFrom{{Group: "gateway.networking.k8s.io", Kind: "HTTPRoute", Namespace: "a"}},
				To:   []gwapiv1.ReferenceGrantTo{{Kind: "Service"}}}}},
		{Obj: &gwapiv1b1.ReferenceGrant{ObjectMeta: metav1.ObjectMeta{Namespace: "c", Name: "v1beta1"},
			Spec: gwapiv1b1.ReferenceGrantSpec{
				From: []gwapiv1b1.ReferenceGrantFrom{{Group: "gateway.networking.k8s.io", Kind: "TCPRoute", Namespace: "a"}},
				To:   []gwapiv1b1.ReferenceGrantTo{{Kind: "Service"}}}}},
	}
	grants := New(objs)
	if !grants.Permits(From{"gateway.networking.k8s.io", "HTTPRoute", "a"}, To{"", "Service", "b", "s"}) {
		t.Error("v1 grant not read")
	}
	if !grants.Permits(From{"gateway.networking.k8s.io", "TCPRoute", "a"}, To{"", "Service", "c", "s"}) {
		t.Error("v1beta1 grant not read")
	}
	if grants.Permits(From{"gateway.networking.k8s.io", "TCPRoute", "a"}, To{"", "Service", "b", "s"}) {
		t.Error("a grant applied across namespaces")
	}
}
