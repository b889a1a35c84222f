package kubeapi_test

import (
	"context"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/controller-runtime/pkg/client"
	gwapiv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/egharness/egharness/harness/gwconformance/kubeapi"
	"github.com/egharness/egharness/translator/crds"
)

func newServer(t *testing.T) (*kubeapi.Server, client.Client) {
	t.Helper()
	set, err := crds.ForRelease("v1.9.1")
	if err != nil {
		t.Fatal(err)
	}
	srv, err := kubeapi.NewServer(set)
	if err != nil {
		t.Fatal(err)
	}
	c, err := srv.Client()
	if err != nil {
		t.Fatal(err)
	}
	return srv, c
}

func gateway() *gwapiv1.Gateway {
	return &gwapiv1.Gateway{
		ObjectMeta: metav1.ObjectMeta{Name: "gw", Namespace: "ns"},
		Spec: gwapiv1.GatewaySpec{GatewayClassName: "eg", Listeners: []gwapiv1.Listener{
			{Name: "http", Port: 80, Protocol: gwapiv1.HTTPProtocolType},
		}},
	}
}

// The API server's write semantics that the suite relies on: defaults from the CRD,
// system fields, generation on spec changes only, status as a subresource.
func TestWriteSemantics(t *testing.T) {
	_, c := newServer(t)
	ctx := context.Background()
	gw := gateway()
	if err := c.Create(ctx, gw); err != nil {
		t.Fatal(err)
	}
	got := &gwapiv1.Gateway{}
	if err := c.Get(ctx, client.ObjectKeyFromObject(gw), got); err != nil {
		t.Fatal(err)
	}
	if got.UID == "" || got.CreationTimestamp.IsZero() || got.Generation != 1 || got.ResourceVersion == "" {
		t.Fatalf("system fields not set: uid %q created %v generation %d rv %q", got.UID, got.CreationTimestamp,
			got.Generation, got.ResourceVersion)
	}
	// The CRD defaults allowedRoutes.namespaces.from to Same.
	ar := got.Spec.Listeners[0].AllowedRoutes
	if ar == nil || ar.Namespaces == nil || ar.Namespaces.From == nil ||
		*ar.Namespaces.From != gwapiv1.NamespacesFromSame {
		t.Fatalf("CRD default not applied: allowedRoutes %+v", ar)
	}

	// A status write keeps the spec and the generation.
	got.Status.Conditions = []metav1.Condition{{Type: "Accepted", Status: "True", Reason: "Accepted",
		LastTransitionTime: metav1.Now(), ObservedGeneration: 1}}
	if err := c.Status().Update(ctx, got); err != nil {
		t.Fatal(err)
	}
	// An object write keeps the status, and raises the generation only for a spec change.
	meta := got.DeepCopy()
	meta.Labels = map[string]string{"a": "b"}
	meta.Status = gwapiv1.GatewayStatus{}
	if err := c.Update(ctx, meta); err != nil {
		t.Fatal(err)
	}
	if err := c.Get(ctx, client.ObjectKeyFromObject(gw), got); err != nil {
		t.Fatal(err)
	}
	if got.Generation != 1 || len(got.Status.Conditions) != 1 {
		t.Fatalf("a label change: generation %d (want 1), conditions %d (want the status kept)", got.Generation,
			len(got.Status.Conditions))
	}
	patched := got.DeepCopy()
	patched.Spec.Listeners[0].Port = 8080
	if err := c.Patch(ctx, patched, client.MergeFrom(got)); err != nil {
		t.Fatal(err)
	}
	if err := c.Get(ctx, client.ObjectKeyFromObject(gw), got); err != nil {
		t.Fatal(err)
	}
	if got.Generation != 2 || got.Spec.Listeners[0].Port != 8080 {
		t.Fatalf("a spec patch: generation %d (want 2), port %d", got.Generation, got.Spec.Listeners[0].Port)
	}

	// A stale resourceVersion is a conflict.
	stale := got.DeepCopy()
	stale.ResourceVersion = "1"
	stale.Spec.Listeners[0].Port = 9090
	if err := c.Update(ctx, stale); !apierrors.IsConflict(err) {
		t.Fatalf("a stale update: %v, want a conflict", err)
	}
	if err := c.Create(ctx, gateway()); !apierrors.IsAlreadyExists(err) {
		t.Fatalf("a second create: %v, want AlreadyExists", err)
	}
}

// What the CRD refuses, the facade refuses, with the API server's message.
func TestCRDRefusal(t *testing.T) {
	_, c := newServer(t)
	gw := gateway()
	gw.Spec.Listeners[0].Port = 0
	err := c.Create(context.Background(), gw)
	if !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), "port") {
		t.Fatalf("a Gateway listener on port 0: %v, want Invalid naming the port", err)
	}
}

// The typed clientset (the suite's Pod lists and logs) goes through the same facade.
func TestClientsetAndSelectors(t *testing.T) {
	srv, c := newServer(t)
	ctx := context.Background()
	srv.Facade.Logs = func(ns, pod string) ([]byte, error) { return []byte("log of " + ns + "/" + pod), nil }
	for _, name := range []string{"a", "b"} {
		p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ns", Labels: map[string]string{"app": name}},
			Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "i"}}}}
		if err := c.Create(ctx, p); err != nil {
			t.Fatal(err)
		}
	}
	cs, err := kubernetes.NewForConfig(srv.Facade.RestConfig())
	if err != nil {
		t.Fatal(err)
	}
	pods, err := cs.CoreV1().Pods("ns").List(ctx, metav1.ListOptions{LabelSelector: "app=b"})
	if err != nil {
		t.Fatal(err)
	}
	if len(pods.Items) != 1 || pods.Items[0].Name != "b" {
		t.Fatalf("label selector app=b: %d pods", len(pods.Items))
	}
	b, err := cs.CoreV1().Pods("ns").GetLogs("a", &corev1.PodLogOptions{}).DoRaw(ctx)
	if err != nil || string(b) != "log of ns/a" {
		t.Fatalf("logs: %q, %v", b, err)
	}
	// Deleting a Namespace takes its objects with it.
	if err := c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "ns"}}); err != nil {
		t.Fatal(err)
	}
	if err := c.Delete(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "ns"}}); err != nil {
		t.Fatal(err)
	}
	if err := c.Get(ctx, client.ObjectKey{Namespace: "ns", Name: "a"}, &corev1.Pod{}); !apierrors.IsNotFound(err) {
		t.Fatalf("a Pod of a deleted Namespace: %v, want NotFound", err)
	}
}
