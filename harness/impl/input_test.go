package impl

import (
	"strings"
	"testing"

	"github.com/egharness/egharness/translator/resource"
)

// An implementation reads a CRD kind's object as written: an unknown field and a field of
// the wrong type reach it (the API server would refuse them, and so may it), a field left
// out is not sent as an empty value, and the namespace the harness gave it is filled in.
func TestInputSendsObjectsAsWritten(t *testing.T) {
	text := "apiVersion: gateway.networking.k8s.io/v1\nkind: HTTPRoute\nmetadata: {name: r}\nspec:\n" +
		"  hostnames: one.example.com\n  bogus: 1\n" +
		"---\napiVersion: gateway.networking.k8s.io/v1\nkind: BackendTLSPolicy\nmetadata: {name: b, namespace: apps}\n" +
		"spec:\n  targetRefs: [{group: \"\", kind: Service, name: s}]\n  validation: {wellKnownCACertificates: System}\n"
	dec, err := resource.Decode("in.yaml", []byte(text), resource.Options{})
	if err != nil {
		t.Fatal(err)
	}
	in, err := Input(Request{Objects: dec.Objects})
	if err != nil {
		t.Fatal(err)
	}
	got := string(in)
	for _, want := range []string{"bogus: 1", "hostnames: one.example.com", "namespace: default", "namespace: apps"} {
		if !strings.Contains(got, want) {
			t.Errorf("the input lacks %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, "hostname: \"\"") {
		t.Errorf("a field left out was sent empty:\n%s", got)
	}
}
