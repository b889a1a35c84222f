package policy

import (
	"strings"
	"testing"

	egv1a1 "github.com/envoyproxy/gateway/api/v1alpha1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	gwapiv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/egharness/egharness/translator/ir"
	"github.com/egharness/egharness/translator/refgrant"
	"github.com/egharness/egharness/translator/resource"
	"github.com/egharness/egharness/translator/result"
)

func routesWith(p ir.RoutePolicies) (*ir.XDS, *ir.HTTPRoute) {
	r := &ir.HTTPRoute{Name: "r", Policies: p, Destination: &ir.Destination{Name: "d"}}
	return &ir.XDS{HTTP: []*ir.HTTPListener{{Name: "l", Routes: []*ir.HTTPRoute{r}}}}, r
}

func luaPolicy(ls ...egv1a1.Lua) ir.RoutePolicies {
	return ir.RoutePolicies{Extension: &ir.Applied[egv1a1.EnvoyExtensionPolicySpec]{
		Policy: ir.PolicyRef{Kind: "EnvoyExtensionPolicy", Namespace: "apps", Name: "lua"},
		Spec:   &egv1a1.EnvoyExtensionPolicySpec{Lua: ls},
	}}
}

func objects(os ...resource.KObject) *RefObjects {
	var objs []resource.Object
	for _, o := range os {
		objs = append(objs, resource.Object{Obj: o})
	}
	return NewRefObjects(objs, refgrant.New(objs))
}

func TestLuaOffFailsClosed(t *testing.T) {
	code := "function envoy_on_request(h) end"
	x, r := routesWith(luaPolicy(egv1a1.Lua{Type: egv1a1.LuaValueTypeInline, Inline: &code}))
	errs := ResolveFeatures(x, objects(), false)
	err := errs[ir.PolicyRef{Kind: "EnvoyExtensionPolicy", Namespace: "apps", Name: "lua"}]
	if err == nil || err.Error() != "Lua: Skipping Lua EnvoyExtensionPolicy as feature is disabled in the Gateway" {
		t.Fatalf("error %v", err)
	}
	if r.DirectResponse == nil || r.DirectResponse.Status != 500 || r.Policies.Extension != nil {
		t.Errorf("route must fail closed with 500 and carry no Lua: %+v", r)
	}

	x, r = routesWith(luaPolicy(egv1a1.Lua{Type: egv1a1.LuaValueTypeInline, Inline: &code}))
	if errs := ResolveFeatures(x, objects(), true); len(errs) != 0 || r.DirectResponse != nil ||
		r.PolicyData.Lua[0] != code {
		t.Errorf("Lua on: %v %+v", errs, r)
	}
}

func TestLuaConfigMapInFieldNamespace(t *testing.T) {
	p := luaPolicy(egv1a1.Lua{Type: egv1a1.LuaValueTypeValueRef, ValueRef: &gwapiv1.LocalObjectReference{Name: "scripts"}})
	p.Extension.FieldOwner = map[string]ir.PolicyRef{"lua": {Kind: "EnvoyExtensionPolicy", Namespace: "platform",
		Name: "lua"}} // merged from a parent (MRG-05)
	x, r := routesWith(p)
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "platform", Name: "scripts"},
		Data: map[string]string{"b": "function envoy_on_request(h) end -- b", "a": "function envoy_on_request(h) end -- a"}}
	if errs := ResolveFeatures(x, objects(cm), true); len(errs) != 0 {
		t.Fatal(errs)
	}
	if r.PolicyData.Lua[0] != "function envoy_on_request(h) end -- a" {
		t.Errorf("without a lua key the first key's value is read, got %q", r.PolicyData.Lua[0])
	}
	x, _ = routesWith(p)
	cm.Namespace = "apps"
	errs := ResolveFeatures(x, objects(cm), true)
	if err := errs[p.Extension.Policy]; err == nil ||
		!strings.Contains(err.Error(), "can't find the referenced configmap scripts in namespace platform") {
		t.Errorf("error %v", err)
	}
}

func TestBasicAuthUsers(t *testing.T) {
	sp := func() ir.RoutePolicies {
		return ir.RoutePolicies{Security: &ir.Applied[egv1a1.SecurityPolicySpec]{
			Policy: ir.PolicyRef{Kind: "SecurityPolicy", Namespace: "apps", Name: "basic"},
			Spec: &egv1a1.SecurityPolicySpec{
				BasicAuth: &egv1a1.BasicAuth{Users: gwapiv1.SecretObjectReference{Name: "users"}}},
		}}
	}
	secret := func(users string) *corev1.Secret {
		return &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "apps", Name: "users"},
			Data: map[string][]byte{".htpasswd": []byte(users)}}
	}
	cases := []struct {
		users, err string
	}{
		{"foo:{SHA}Ys23Ag/5IOWqZCw9QGaVDdHwH00=\r\nbar:{SHA}Ys23Ag/5IOWqZCw9QGaVDdHwH00=\r\n", ""},
		{"foo:$apr1$abc", "BasicAuth: unsupported htpasswd format: please use {SHA}"},
		{"foo", "BasicAuth: invalid htpasswd format: each line must be in the format 'username:password'"},
	}
	for _, c := range cases {
		x, r := routesWith(sp())
		errs := ResolveFeatures(x, objects(secret(c.users)), true)
		got := ""
		for _, e := range errs {
			got = e.Error()
		}
		if got != c.err {
			t.Errorf("%q: error %q, want %q", c.users, got, c.err)
		}
		if c.err == "" && strings.Contains(string(r.PolicyData.BasicAuthUsers), "\r") {
			t.Errorf("CRLF must become LF")
		}
	}
	x, r := routesWith(sp())
	errs := ResolveFeatures(x, objects(), true)
	if len(errs) != 1 || r.DirectResponse == nil {
		t.Errorf("a missing Secret fails the route closed: %v", errs)
	}
	for _, e := range errs {
		if e.Error() != "BasicAuth: secret apps/users does not exist" {
			t.Errorf("error %q", e)
		}
	}
}

func TestTCPRouteSecurity(t *testing.T) {
	opt := true
	ref := ir.PolicyRef{Kind: "SecurityPolicy", Namespace: "apps", Name: "tcp"}
	x := &ir.XDS{
		TCP: []*ir.TCPListener{
			{Routes: []*ir.TCPRoute{
				{Name: "tcproute/apps/db", Policies: ir.RoutePolicies{Security: &ir.Applied[egv1a1.SecurityPolicySpec]{
					Policy: ref, Spec: &egv1a1.SecurityPolicySpec{JWT: &egv1a1.JWT{Optional: &opt}},
				}}}}}}}
	// The policy targets the TCPRoute: the TCP rule applies (a Gateway policy's would not).
	tcpPolicy := &egv1a1.SecurityPolicy{ObjectMeta: metav1.ObjectMeta{Namespace: "apps", Name: "tcp"},
		Spec: egv1a1.SecurityPolicySpec{
			PolicyTargetReferences: egv1a1.PolicyTargetReferences{
				TargetRefs: []gwapiv1.LocalPolicyTargetReferenceWithSectionName{
					{LocalPolicyTargetReference: gwapiv1.LocalPolicyTargetReference{Group: gwapiv1.GroupName, Kind: "TCPRoute",
						Name: "db"}}}}}}
	gatewayWide := *x.TCP[0].Routes[0]
	gatewayWide.Policies.Security = &ir.Applied[egv1a1.SecurityPolicySpec]{Policy: ir.PolicyRef{Kind: "SecurityPolicy",
		Namespace: "apps", Name: "gateway-wide"},
		Spec: &egv1a1.SecurityPolicySpec{JWT: &egv1a1.JWT{Optional: &opt}}}
	x.TCP[0].Routes = append(x.TCP[0].Routes, &gatewayWide)
	errs := ResolveFeatures(x, objects(tcpPolicy), true)
	if _, refused := errs[gatewayWide.Policies.Security.Policy]; refused || x.TCP[0].Routes[1].Policies.Security == nil {
		t.Errorf("a policy that does not target a TCPRoute is not held to the TCP rule: %v", errs)
	}
	if err := errs[ref]; err == nil ||
		err.Error() != "invalid SecurityPolicy for TCP route: only authorization is supported for TCP (routes/listeners)" {
		t.Errorf("error %v", err)
	}
	if x.TCP[0].Routes[0].Policies.Security != nil {
		t.Errorf("an invalid policy does not stay on the route")
	}
	statuses := []result.ObjectStatus{{
		Object: resource.Ref{Kind: "SecurityPolicy", Namespace: "apps", Name: "tcp"},
		Parents: []result.ParentStatus{{Conditions: []result.Condition{{Type: "Accepted", Status: "True",
			Reason: "Accepted"}}}},
	}}
	MarkFeatureErrors(statuses, errs)
	c := statuses[0].Parents[0].Conditions[0]
	if c.Status != "False" || c.Reason != "Invalid" ||
		c.Message != "Invalid SecurityPolicy for TCP route: only authorization is supported for TCP (routes/listeners)." {
		t.Errorf("condition %+v", c)
	}
	deny := egv1a1.AuthorizationActionDeny
	if err := CheckTCPSecurity(
		&egv1a1.SecurityPolicySpec{Authorization: &egv1a1.Authorization{DefaultAction: &deny,
			Rules: []egv1a1.AuthorizationRule{
				{Action: egv1a1.AuthorizationActionAllow, Principal: &egv1a1.Principal{ClientCIDRs: []egv1a1.CIDR{"10.0.0.0/8"}}},
			}}}); err != nil {
		t.Errorf("client CIDRs are what TCP supports: %v", err)
	}
}

// fakeBackends resolves every backendRef to one address.
type fakeBackends struct{}

func (fakeBackends) ResolvePolicyBackends(owner ir.PolicyRef, refs []egv1a1.BackendRef, name string,
	http2 bool) (*ir.Destination, error) {
	return &ir.Destination{Name: name, HTTP2: http2, Settings: []*ir.Backend{{Name: name + "/backend/0", Weight: 1,
		Endpoints: []ir.Endpoint{{Host: "10.0.0.1", Port: 9000}}, Kind: "Service", Namespace: owner.Namespace,
		ServiceName: string(refs[0].Name)}}}, nil
}

func (fakeBackends) PolicyBackendAuthority(ns string, ref gwapiv1.BackendObjectReference) string {
	return string(ref.Name) + "." + ns
}

func TestOnlyLuaIsGated(t *testing.T) {
	port := gwapiv1.PortNumber(9000)
	extProc := []egv1a1.ExtProc{{BackendCluster: egv1a1.BackendCluster{BackendRefs: []egv1a1.BackendRef{{
		BackendObjectReference: gwapiv1.BackendObjectReference{Name: "proc", Port: &port},
	}}}}}
	ref := ir.PolicyRef{Kind: "EnvoyExtensionPolicy", Namespace: "apps", Name: "ext"}
	p := ir.RoutePolicies{Extension: &ir.Applied[egv1a1.EnvoyExtensionPolicySpec]{
		Policy: ref, Spec: &egv1a1.EnvoyExtensionPolicySpec{ExtProc: extProc},
	}}
	x, r := routesWith(p)
	if errs := ResolveFeatures(x, objects().WithBackends(fakeBackends{}), false); len(errs) != 0 ||
		r.DirectResponse != nil || r.Policies.Extension == nil {
		t.Fatalf("ext_proc is not gated by enableLua (EEP-04): %v %+v", errs, r)
	}
	if r.PolicyData == nil || len(r.PolicyData.ExtProc) != 1 ||
		r.PolicyData.ExtProc[0].Destination.Name != "envoyextensionpolicy/apps/ext/extproc/0" {
		t.Errorf("ext_proc service not resolved: %+v", r.PolicyData)
	}
	// Wasm is refused for want of a wasm cache, never for the Lua gate.
	p.Extension.Spec.Wasm = []egv1a1.Wasm{{Code: egv1a1.WasmCodeSource{Type: egv1a1.HTTPWasmCodeSourceType}}}
	x, _ = routesWith(p)
	if errs := ResolveFeatures(x, objects().WithBackends(fakeBackends{}), false); errs[ref] == nil ||
		errs[ref].Error() != "Wasm: wasm cache is not initialized" {
		t.Errorf("Wasm: %v", errs)
	}
	p.Extension.Spec.Wasm = nil
	code := "function envoy_on_request(h) end"
	p.Extension.Spec.Lua = []egv1a1.Lua{{Type: egv1a1.LuaValueTypeInline, Inline: &code}}
	x, r = routesWith(p)
	if errs := ResolveFeatures(x, objects().WithBackends(fakeBackends{}), false); len(errs) != 1 ||
		r.DirectResponse == nil {
		t.Errorf("with Lua among them the whole policy is refused: %v", errs)
	}
}
