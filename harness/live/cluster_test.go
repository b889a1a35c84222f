package live_test

import (
	"strings"
	"testing"

	"github.com/egharness/egharness/harness/live"
	"github.com/egharness/egharness/translator/resource"
	"github.com/egharness/egharness/translator/result"
)

func TestDefaultGateway(t *testing.T) {
	gw, err := live.DefaultGateway(
		"default via 172.18.0.1 dev eth0 \n172.18.0.0/16 dev eth0 proto kernel scope link src 172.18.0.2\n")
	if err != nil || gw != "172.18.0.1" {
		t.Errorf("%q %v", gw, err)
	}
	if _, err := live.DefaultGateway("172.18.0.0/16 dev eth0"); err == nil {
		t.Error("no default route, no error")
	}
}

// Whatever this machine has, the answer is a runtime or one line that says why there is
// none (the kind suite skips with it).
func TestRuntime(t *testing.T) {
	_, name, err := live.Runtime()
	if err != nil {
		if !strings.HasPrefix(err.Error(), "no container runtime: ") || strings.Contains(err.Error(), "\n") {
			t.Errorf("runtime error is not one clear line: %q", err)
		}
		t.Logf("%s (%s)", err, name)
	}
}

// EG's statuses, read back from the cluster, go through the same checks as the reference's.
func TestStatusFrom(t *testing.T) {
	route := resource.Ref{Kind: "HTTPRoute", Namespace: "default", Name: "app"}
	st, err := live.StatusFrom(route, []byte(`{"apiVersion":"gateway.networking.k8s.io/v1","kind":"HTTPRoute",
	  "status":{"parents":[{"parentRef":{"group":"gateway.networking.k8s.io","name":"eg","sectionName":"http"},
	    "controllerName":"gateway.envoyproxy.io/gatewayclass-controller",
	    "conditions":[{"type":"Accepted","status":"True","reason":"Accepted","message":"Route is accepted",
	      "lastTransitionTime":"2026-01-01T00:00:00Z"}]}]}}`))
	if err != nil {
		t.Fatal(err)
	}
	want := result.ParentRef{Kind: "Gateway", Namespace: "default", Name: "eg", SectionName: "http"}
	if len(st.Parents) != 1 || st.Parents[0].Ref != want ||
		st.Parents[0].Conditions[0] != (result.Condition{Type: "Accepted", Status: "True", Reason: "Accepted",
			Message: "Route is accepted"}) {
		t.Errorf("%+v", st)
	}
	gw := resource.Ref{Kind: "Gateway", Namespace: "default", Name: "eg"}
	st, err = live.StatusFrom(gw, []byte(`{"status":{
	  "conditions":[{"type":"Programmed","status":"True","reason":"Programmed","message":"ok"}],
	  "listeners":[{"name":"http","attachedRoutes":2,"supportedKinds":[],
	    "conditions":[{"type":"Accepted","status":"True","reason":"Accepted","message":""}]}]}}`))
	if err != nil || len(st.Listeners) != 1 || st.Listeners[0].AttachedRoutes != 2 ||
		st.Conditions[0].Type != "Programmed" {
		t.Errorf("%+v %v", st, err)
	}
	// a policy's GatewayClass ancestor is cluster-scoped: it gets no namespace (as the
	// corpus reads EG's testdata and as scenarios write it, GatewayClass/eg)
	policy := resource.Ref{Kind: "EnvoyExtensionPolicy", Namespace: "default", Name: "wasm"}
	st, err = live.StatusFrom(policy, []byte(`{"status":{"ancestors":[
	  {"ancestorRef":{"group":"gateway.networking.k8s.io","kind":"GatewayClass","name":"eg"},"conditions":[]},
	  {"ancestorRef":{"group":"gateway.networking.k8s.io","kind":"Gateway","name":"eg"},"conditions":[]}]}}`))
	if err != nil || len(st.Parents) != 2 || st.Parents[0].Ref.String() != "GatewayClass/eg" ||
		st.Parents[1].Ref.String() != "Gateway/default/eg" {
		t.Errorf("ancestors %+v %v", st.Parents, err)
	}
	if _, err := live.StatusFrom(gw, []byte(`{"status":[]}`)); err == nil ||
		!strings.Contains(err.Error(), "Gateway/default/eg") {
		t.Errorf("bad status: %v", err)
	}
}

// Every scenario's objects convert to what is applied; Services lose their pinned
// clusterIP, and statuses read back feed check.Run unchanged.
func TestToUnstructured(t *testing.T) {
	n := 0
	for _, sc := range scenarios(t) {
		for _, o := range sc.Objects {
			u, err := live.ToUnstructured(o)
			if err != nil {
				t.Fatal(err)
			}
			if u.GetKind() != o.Kind || u.GetAPIVersion() != o.APIVersion || u.GetName() != o.Obj.GetName() {
				t.Errorf("%s: %s %s %s", o.Where(), u.GetAPIVersion(), u.GetKind(), u.GetName())
			}
			if _, ok := u.Object["status"]; ok {
				t.Errorf("%s: status applied", o.Where())
			}
			if o.Kind == "Service" {
				n++
				if _, ok := u.Object["spec"].(map[string]any)["clusterIP"]; ok {
					t.Errorf("%s: clusterIP kept", o.Where())
				}
			}
		}
		if len(live.Namespaces(sc.Objects)) == 0 {
			t.Errorf("%s: no namespaces", sc.Name)
		}
	}
	if n == 0 {
		t.Error("no Service seen")
	}
}
