package crds

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/runtime/schema"
)

// TestPreviewCarriesItsAdditions: the v1.10-preview Set is v1.9.1's CRDs with every named
// addition applied, and only the additions' kinds gain fields.
func TestPreviewCarriesItsAdditions(t *testing.T) {
	s, err := ForRelease(Preview)
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Additions()) == 0 {
		t.Fatal("no additions")
	}
	if !strings.Contains(s.Release, "ctp-max-request-header-limit") {
		t.Errorf("the release label does not name its additions: %q", s.Release)
	}
	if got := s.AddedFields("ClientTrafficPolicy"); len(got) != 1 || got[0] != "spec.headers.maxRequestHeaderLimit" {
		t.Errorf("ClientTrafficPolicy added fields: %v", got)
	}
	if got := s.AddedFields("HTTPRoute"); len(got) != 0 {
		t.Errorf("HTTPRoute gained fields: %v", got)
	}
	crd, err := s.CRD(schema.GroupKind{Group: "gateway.envoyproxy.io", Kind: "ClientTrafficPolicy"})
	if err != nil {
		t.Fatal(err)
	}
	headers := crd.Spec.Versions[0].Schema.OpenAPIV3Schema.Properties["spec"].Properties["headers"]
	if _, ok := headers.Properties["maxRequestHeaderLimit"]; !ok {
		t.Error("the patched schema has no spec.headers.maxRequestHeaderLimit")
	}
	base, err := ForRelease(Built)
	if err != nil {
		t.Fatal(err)
	}
	if len(base.Additions()) != 0 {
		t.Errorf("%s has additions: %v", Built, base.Additions())
	}
	bcrd, _ := base.CRD(schema.GroupKind{Group: "gateway.envoyproxy.io", Kind: "ClientTrafficPolicy"})
	bheaders := bcrd.Spec.Versions[0].Schema.OpenAPIV3Schema.Properties["spec"].Properties["headers"]
	if _, ok := bheaders.Properties["maxRequestHeaderLimit"]; ok {
		t.Errorf("patching the preview changed %s's own CRD", Built)
	}
}

// TestAdditionThatDoesNotApply: a patch whose path is not in the schema fails the CRD's
// parse, naming the addition, instead of being dropped.
func TestAdditionThatDoesNotApply(t *testing.T) {
	s, err := load(Built)
	if err != nil {
		t.Fatal(err)
	}
	f, _, err := previewOf(Preview)
	if err != nil {
		t.Fatal(err)
	}
	bad := f.Additions[0]
	var patchErr error
	bad.patch, patchErr = decodePatch(
		`[{"op": "replace", "path": "/properties/spec/properties/nosuchfield/type", "value": "string"}]`)
	if patchErr != nil {
		t.Fatal(patchErr)
	}
	if err := s.withAdditions([]Addition{bad}); err != nil {
		t.Fatal(err)
	}
	_, err = s.CRD(bad.gk)
	if err == nil || !strings.Contains(err.Error(), bad.Name) {
		t.Fatalf("error %v, expected one naming %s", err, bad.Name)
	}
}
