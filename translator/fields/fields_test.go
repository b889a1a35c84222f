package fields

import (
	"sort"
	"strings"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"

	"github.com/egharness/egharness/translator/crds"
)

// schemaPaths are the field paths of a schema below the object's root, lists as [] and
// maps as *, skipping apiVersion, kind, metadata and status.
func schemaPaths(s *apiextensionsv1.JSONSchemaProps, p string, out map[string]bool) {
	if s == nil {
		return
	}
	for name, c := range s.Properties {
		if p == "" && (name == "apiVersion" || name == "kind" || name == "metadata" || name == "status") {
			continue
		}
		q := name
		if p != "" {
			q = p + "." + name
		}
		out[q] = true
		schemaPaths(&c, q, out)
	}
	if s.Items != nil && s.Items.Schema != nil {
		schemaPaths(s.Items.Schema, p+"[]", out)
	}
	if s.AdditionalProperties != nil && s.AdditionalProperties.Schema != nil {
		schemaPaths(s.AdditionalProperties.Schema, p+".*", out)
	}
}

// classified reports whether a schema path is in the kind's registry: an entry, an
// ancestor of one, or below a gap entry.
func (k *kindIndex) classified(p string) bool {
	if k.handled[p] || k.containers[p] {
		return true
	}
	for q := p; ; {
		if _, ok := k.notHandled[q]; ok || k.noEffect[q] {
			return true
		}
		i := strings.LastIndexAny(q, ".[")
		if i < 0 {
			return false
		}
		q = q[:i]
	}
}

// TestRegistryCoversCRDs: every field of every served version of the CRDs compiled in, and
// of the fields the v1.10-preview additions give them, is classified, every registry entry
// is a field of those CRDs, and every kind the CRDs define has an entry.
func TestRegistryCoversCRDs(t *testing.T) {
	set, err := crds.ForRelease(crds.Preview)
	if err != nil {
		t.Fatal(err)
	}
	byKind := index()
	for _, gk := range set.Kinds() {
		crd, err := set.CRD(gk)
		if err != nil {
			t.Fatal(err)
		}
		paths := map[string]bool{}
		for _, v := range crd.Spec.Versions {
			if v.Served && v.Schema != nil {
				schemaPaths(v.Schema.OpenAPIV3Schema, "", paths)
			}
		}
		k := byKind[gk.Kind]
		if k == nil {
			var all []string
			for p := range paths {
				all = append(all, p)
			}
			t.Errorf("%s: no registry entry; its fields: %s", gk.Kind, Compact(leaves(all)))
			continue
		}
		var missing []string
		for p := range paths {
			if !k.classified(p) {
				missing = append(missing, p)
			}
		}
		if len(missing) > 0 {
			sort.Strings(missing)
			t.Errorf("%s: %d fields not classified in the registry: %s", gk.Kind, len(missing), Compact(leaves(missing)))
		}
		var stale []string
		for _, p := range entries(k) {
			if !paths[p] {
				stale = append(stale, p)
			}
		}
		if len(stale) > 0 {
			sort.Strings(stale)
			t.Errorf("%s: registry entries that are no field of the CRD: %s", gk.Kind, strings.Join(stale, " "))
		}
	}
	for kind := range Registry {
		found := false
		for _, gk := range set.Kinds() {
			found = found || gk.Kind == kind
		}
		if !found {
			t.Errorf("registry kind %s has no CRD in %s", kind, crds.Built)
		}
	}
}

func entries(k *kindIndex) []string {
	var out []string
	for p := range k.handled {
		out = append(out, p)
	}
	for p := range k.notHandled {
		out = append(out, p)
	}
	for p := range k.noEffect {
		out = append(out, p)
	}
	return out
}

// leaves drops the paths that are ancestors of others: the compact form names them anyway.
func leaves(paths []string) []string {
	inner := map[string]bool{}
	for _, p := range paths {
		for _, a := range ancestors(p) {
			inner[a] = true
		}
	}
	var out []string
	for _, p := range paths {
		if !inner[p] {
			out = append(out, p)
		}
	}
	return out
}
