package live

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/egharness/egharness/translator/ir"
	"github.com/egharness/egharness/translator/resource"
	"github.com/egharness/egharness/translator/result"
)

// FieldManager owns what the suite applies (server-side apply).
const FieldManager = "egharness"

// EG is a cluster that runs a real Envoy Gateway, reached through a kubeconfig: the suite
// applies a scenario's objects there and reads back the statuses EG writes.
type EG struct {
	Client client.Client
}

// ConnectEG connects with a kubeconfig file.
func ConnectEG(kubeconfig string) (*EG, error) {
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		return nil, fmt.Errorf("kubeconfig %s: %w", kubeconfig, err)
	}
	c, err := client.New(cfg, client.Options{})
	if err != nil {
		return nil, fmt.Errorf("kubeconfig %s: %w", kubeconfig, err)
	}
	return &EG{Client: c}, nil
}

// ToUnstructured turns a scenario object into what is applied. A Service's clusterIP is
// dropped: scenarios pin addresses the real cluster's range may not hold, and the API
// server picks one.
func ToUnstructured(o resource.Object) (*unstructured.Unstructured, error) {
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(o.Obj)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", o.Where(), err)
	}
	u := &unstructured.Unstructured{Object: m}
	u.SetAPIVersion(o.APIVersion)
	u.SetKind(o.Kind)
	unstructured.RemoveNestedField(u.Object, "status")
	unstructured.RemoveNestedField(u.Object, "metadata", "creationTimestamp")
	unstructured.RemoveNestedField(u.Object, "metadata", "resourceVersion")
	unstructured.RemoveNestedField(u.Object, "metadata", "uid")
	if o.Kind == "Service" && o.APIVersion == "v1" {
		unstructured.RemoveNestedField(u.Object, "spec", "clusterIP")
		unstructured.RemoveNestedField(u.Object, "spec", "clusterIPs")
	}
	return u, nil
}

// Namespaces are the namespaces the objects live in, which must exist before they do.
func Namespaces(objs []resource.Object) []string {
	var out []string
	for _, o := range objs {
		if ns := o.Obj.GetNamespace(); ns != "" && !slices.Contains(out, ns) {
			out = append(out, ns)
		}
	}
	slices.Sort(out)
	return out
}

// Apply creates the objects' namespaces and applies the objects, in order. It returns what
// it applied (to delete afterwards), even when it stops at an error.
func (e *EG) Apply(ctx context.Context, objs []resource.Object) ([]*unstructured.Unstructured, error) {
	var applied []*unstructured.Unstructured
	for _, ns := range Namespaces(objs) {
		u := &unstructured.Unstructured{}
		u.SetAPIVersion("v1")
		u.SetKind("Namespace")
		u.SetName(ns)
		if err := e.Client.Create(ctx, u); err != nil && !apierrors.IsAlreadyExists(err) {
			return applied, fmt.Errorf("namespace %s: %w", ns, err)
		}
	}
	for _, o := range objs {
		u, err := ToUnstructured(o)
		if err != nil {
			return applied, err
		}
		if err := e.Client.Apply(ctx, client.ApplyConfigurationFromUnstructured(u), client.FieldOwner(FieldManager),
			client.ForceOwnership); err != nil {
			return applied, fmt.Errorf("%s (%s): %w", o.Ref(), o.Where(), err)
		}
		applied = append(applied, u)
	}
	return applied, nil
}

// Delete removes what Apply applied, last first; objects already gone are fine.
// GatewayClasses stay: the cluster's own EG installation owns the class scenarios name.
func (e *EG) Delete(ctx context.Context, applied []*unstructured.Unstructured) error {
	for i := len(applied) - 1; i >= 0; i-- {
		if applied[i].GetKind() == "GatewayClass" {
			continue
		}
		if err := e.Client.Delete(ctx, applied[i]); err != nil && !apierrors.IsNotFound(err) {
			return fmt.Errorf("deleting %s %s/%s: %w", applied[i].GetKind(), applied[i].GetNamespace(), applied[i].GetName(),
				err)
		}
	}
	return nil
}

// Status reads an object's status as EG wrote it.
func (e *EG) Status(ctx context.Context, o resource.Object) (result.ObjectStatus, error) {
	u := &unstructured.Unstructured{}
	u.SetAPIVersion(o.APIVersion)
	u.SetKind(o.Kind)
	if err := e.Client.Get(ctx, client.ObjectKey{Namespace: o.Obj.GetNamespace(), Name: o.Obj.GetName()}, u); err != nil {
		return result.ObjectStatus{}, fmt.Errorf("%s: %w", o.Ref(), err)
	}
	b, err := json.Marshal(u.Object)
	if err != nil {
		return result.ObjectStatus{}, err
	}
	return StatusFrom(o.Ref(), b)
}

// GatewayAddress is the first address EG wrote on the Gateway's status ("" until then).
func (e *EG) GatewayAddress(ctx context.Context, namespace, name string) (string, error) {
	u := &unstructured.Unstructured{}
	u.SetAPIVersion("gateway.networking.k8s.io/v1")
	u.SetKind("Gateway")
	if err := e.Client.Get(ctx, client.ObjectKey{Namespace: namespace, Name: name}, u); err != nil {
		return "", err
	}
	addrs, _, _ := unstructured.NestedSlice(u.Object, "status", "addresses")
	for _, a := range addrs {
		if m, ok := a.(map[string]any); ok {
			if v, ok := m["value"].(string); ok && v != "" {
				return v, nil
			}
		}
	}
	return "", nil
}

// GatewayPort is the Gateway port behind an Envoy listener port (10080 → 80), which a real
// EG's LoadBalancer Service exposes.
func GatewayPort(x *ir.XDS, envoyPort uint32) uint32 {
	if x != nil {
		for _, l := range x.HTTP {
			if l.Port == envoyPort {
				return l.GatewayPort
			}
		}
		for _, l := range x.TCP {
			if l.Port == envoyPort {
				return l.GatewayPort
			}
		}
		for _, l := range x.UDP {
			if l.Port == envoyPort {
				return l.GatewayPort
			}
		}
	}
	return envoyPort
}
