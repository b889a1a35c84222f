package policy_test

import (
	"fmt"
	"runtime"
	"testing"
	"time"

	egv1a1 "github.com/envoyproxy/gateway/api/v1alpha1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	gwapiv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/egharness/egharness/translator/gatewayapi"
	"github.com/egharness/egharness/translator/policy"
	"github.com/egharness/egharness/translator/profile"
	"github.com/egharness/egharness/translator/resource"
)

// policyInput is one Gateway, `routes` HTTPRoutes on it, `gatewayPolicies`
// BackendTrafficPolicies all targeting the Gateway (the oldest wins, the others are
// Conflicted) and one BackendTrafficPolicy per route when perRoute is set.
func policyInput(routes, gatewayPolicies int, perRoute bool) []resource.Object {
	gwAPI := gwapiv1.GroupVersion.String()
	egAPI := egv1a1.GroupVersion.String()
	var objs []resource.Object
	add := func(apiVersion, kind string, o resource.KObject) {
		objs = append(objs, resource.Object{Obj: o, APIVersion: apiVersion, Kind: kind, File: "bench.yaml"})
	}
	add(gwAPI, "GatewayClass", &gwapiv1.GatewayClass{
		ObjectMeta: metav1.ObjectMeta{Name: "eg"},
		Spec:       gwapiv1.GatewayClassSpec{ControllerName: "gateway.envoyproxy.io/gatewayclass-controller"},
	})
	add(gwAPI, "Gateway", &gwapiv1.Gateway{
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "eg"},
		Spec: gwapiv1.GatewaySpec{GatewayClassName: "eg",
			Listeners: []gwapiv1.Listener{{Name: "http", Protocol: gwapiv1.HTTPProtocolType, Port: 80}}},
	})
	add("v1", "Service", &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "app"},
		Spec:       corev1.ServiceSpec{ClusterIP: "10.96.0.10", Ports: []corev1.ServicePort{{Name: "http", Port: 8080}}},
	})
	port := gwapiv1.PortNumber(8080)
	timeout := gwapiv1.Duration("10s")
	base := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for i := 0; i < routes; i++ {
		add(gwAPI, "HTTPRoute", &gwapiv1.HTTPRoute{
			ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: fmt.Sprintf("r%d", i)},
			Spec: gwapiv1.HTTPRouteSpec{
				CommonRouteSpec: gwapiv1.CommonRouteSpec{ParentRefs: []gwapiv1.ParentReference{{Name: "eg"}}},
				Hostnames:       []gwapiv1.Hostname{gwapiv1.Hostname(fmt.Sprintf("r%d.example.com", i))},
				Rules: []gwapiv1.HTTPRouteRule{{BackendRefs: []gwapiv1.HTTPBackendRef{{BackendRef: gwapiv1.BackendRef{
					BackendObjectReference: gwapiv1.BackendObjectReference{Name: "app", Port: &port}}}}}},
			},
		})
		if perRoute {
			add(egAPI, "BackendTrafficPolicy", &egv1a1.BackendTrafficPolicy{
				ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: fmt.Sprintf("route-%d", i)},
				Spec: egv1a1.BackendTrafficPolicySpec{
					PolicyTargetReferences: egv1a1.PolicyTargetReferences{
						TargetRefs: []gwapiv1.LocalPolicyTargetReferenceWithSectionName{{
							LocalPolicyTargetReference: gwapiv1.LocalPolicyTargetReference{Group: gwapiv1.GroupName, Kind: "HTTPRoute",
								Name: gwapiv1.ObjectName(fmt.Sprintf("r%d", i))}}}},
					ClusterSettings: egv1a1.ClusterSettings{
						Timeout: &egv1a1.Timeout{HTTP: &egv1a1.HTTPTimeout{RequestTimeout: &timeout}}},
				},
			})
		}
	}
	for i := 0; i < gatewayPolicies; i++ {
		add(egAPI, "BackendTrafficPolicy", &egv1a1.BackendTrafficPolicy{
			ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: fmt.Sprintf("gw-%d", i),
				CreationTimestamp: metav1.NewTime(base.Add(time.Duration(i) * time.Second))},
			Spec: egv1a1.BackendTrafficPolicySpec{
				PolicyTargetReferences: egv1a1.PolicyTargetReferences{
					TargetRefs: []gwapiv1.LocalPolicyTargetReferenceWithSectionName{{
						LocalPolicyTargetReference: gwapiv1.LocalPolicyTargetReference{Group: gwapiv1.GroupName, Kind: "Gateway",
							Name: "eg"}}}},
				ClusterSettings: egv1a1.ClusterSettings{
					Timeout: &egv1a1.Timeout{HTTP: &egv1a1.HTTPTimeout{RequestTimeout: &timeout}}},
			},
		})
	}
	return objs
}

// runPolicyStage measures the policy stage alone: the Gateway API stage runs outside the
// timer on fresh objects each time, since the policy stage writes into its IR.
func runPolicyStage(b *testing.B, objs []resource.Object) {
	p, err := profile.Get("")
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		gw := gatewayapi.Translator{Profile: p}.Translate(objs)
		runtime.GC() // the untimed stage's garbage is not the policy stage's cost
		b.StartTimer()
		out := policy.Translator{Profile: p}.Translate(objs, &gw.IR, gw.Topology)
		if len(out.Statuses) == 0 {
			b.Fatal("no policy statuses")
		}
	}
}

// BenchmarkPoliciesOnOneGateway: n policies target the same Gateway (one wins, n-1 are
// Conflicted), over 100 routes. Time per policy must stay flat as n grows.
func BenchmarkPoliciesOnOneGateway(b *testing.B) {
	for _, n := range []int{1000, 4000} {
		b.Run(fmt.Sprintf("policies=%d", n), func(b *testing.B) { runPolicyStage(b, policyInput(100, n, false)) })
	}
}

// BenchmarkPoliciesOnRoutes: n routes, each with its own policy, and a Gateway policy
// that all of them override (its Overridden message lists every route).
func BenchmarkPoliciesOnRoutes(b *testing.B) {
	for _, n := range []int{1000, 4000} {
		b.Run(fmt.Sprintf("routes=%d", n), func(b *testing.B) { runPolicyStage(b, policyInput(n, 1, true)) })
	}
}
