package upgrade

import (
	"context"
	"strings"
	"testing"

	"github.com/egharness/egharness/harness/impl"
)

// A field the reference translator does not translate is a note of the report when a side
// is the reference (neither side's output shows its effect), and none when no side is.
func TestFieldNotes(t *testing.T) {
	objs := decodeObjects(t, `
apiVersion: gateway.envoyproxy.io/v1alpha1
kind: BackendTrafficPolicy
metadata: {name: p, namespace: default}
spec:
  targetRefs: [{group: gateway.networking.k8s.io, kind: HTTPRoute, name: r}]
  admissionControl: {samplingWindow: 30s}
`)
	from, err := ParseSide("v1.8", "", impl.Options{})
	if err != nil {
		t.Fatal(err)
	}
	to, err := ParseSide("v1.9", "", impl.Options{})
	if err != nil {
		t.Fatal(err)
	}
	rep, err := Check(context.Background(), Request{Objects: objs, From: from, To: to})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Notes) != 1 ||
		!strings.HasPrefix(rep.Notes[0],
			"BackendTrafficPolicy default/p: spec.admissionControl is not translated by the reference translator, "+
				"so its effect is not compared") {
		t.Errorf("notes %q, want the admissionControl field named once", rep.Notes)
	}
	other := Side{Label: "x", Impl: impl.Exec{Command: "true"}, Profile: to.Profile}
	if n := fieldNotes(Request{Objects: objs, From: other, To: other}); n != nil {
		t.Errorf("notes without a reference side: %q", n)
	}
}
