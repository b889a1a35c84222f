// Package resource decodes Kubernetes objects from multi-document YAML into their real Go
// types (Gateway API, Envoy Gateway v1alpha1, core and discovery v1) and names them.
package resource

import (
	"fmt"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// KObject is any typed Kubernetes object.
type KObject interface {
	runtime.Object
	metav1.Object
}

// Object is one decoded document and where it came from.
type Object struct {
	Obj        KObject
	APIVersion string
	Kind       string
	File       string
	Line       int // first line of the document in File
	// Raw is the document as JSON, kept for the kinds of the CRD-defined API groups
	// (CRDGroup): admission checks it against the real CRDs, unknown fields included,
	// which the typed Obj has lost.
	Raw []byte
	// DecodeErr is why the document did not decode into its Go type (a field of the wrong
	// type, a kind no Go type has; with Options.StrictTypes an unknown field too), with
	// file and line. When no Go value could be had, Obj holds only the identity (an
	// Unstructured); admission decides on such objects by the CRDs as the API server does.
	DecodeErr error
	// Added holds, by field path, what the object sets of the fields its profile's CRDs add
	// beyond the Go types (the named additions of a preview release, such as
	// spec.headers.maxRequestHeaderLimit in v1.10-preview): admission fills it from the
	// stored object, since the typed Obj cannot carry them.
	Added map[string]any
}

// Ref names the object.
func (o Object) Ref() Ref {
	return Ref{Kind: o.Kind, Namespace: o.Obj.GetNamespace(), Name: o.Obj.GetName()}
}

// Where is "file:line" for messages.
func (o Object) Where() string {
	if o.Line > 0 {
		return fmt.Sprintf("%s:%d", o.File, o.Line)
	}
	return o.File
}

// Ref identifies an object: kind, namespace ("" when cluster-scoped) and name.
type Ref struct {
	Kind      string `json:"kind"`
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
}

// String is Kind/namespace/name, or Kind/name for cluster-scoped objects.
func (r Ref) String() string {
	if r.Namespace == "" {
		return r.Kind + "/" + r.Name
	}
	return r.Kind + "/" + r.Namespace + "/" + r.Name
}

// Less orders refs by kind, namespace, name.
func (r Ref) Less(o Ref) bool {
	if r.Kind != o.Kind {
		return r.Kind < o.Kind
	}
	if r.Namespace != o.Namespace {
		return r.Namespace < o.Namespace
	}
	return r.Name < o.Name
}

// ParseRef reads Kind/namespace/name or Kind/name (cluster-scoped kinds).
func ParseRef(s string) (Ref, error) {
	parts := strings.Split(s, "/")
	switch {
	case len(parts) == 3 && parts[0] != "" && parts[1] != "" && parts[2] != "":
		return Ref{Kind: parts[0], Namespace: parts[1], Name: parts[2]}, nil
	case len(parts) == 2 && parts[0] != "" && parts[1] != "":
		if !ClusterScoped(parts[0]) {
			return Ref{}, fmt.Errorf("object reference %q: %s is namespaced, write %s/NAMESPACE/NAME", s, parts[0], parts[0])
		}
		return Ref{Kind: parts[0], Name: parts[1]}, nil
	}
	return Ref{}, fmt.Errorf("object reference %q: want Kind/namespace/name (or Kind/name for a cluster-scoped kind)", s)
}
