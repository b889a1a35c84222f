package crds

import (
	"embed"
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	jsonpatch "github.com/evanphx/json-patch/v5"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/yaml"
)

// Preview is the CRD release of the v1.10-preview profile: no EG v1.10 release exists, so
// its CRDs are v1.9.1's with the named additions of additions/v1.10-preview.yaml.
const Preview = "v1.10-preview"

//go:embed additions/*.yaml
var additionFiles embed.FS

// Addition is one named change a preview release makes to its base release's CRDs.
type Addition struct {
	// Name says what it adds, for reports (ctp-max-request-header-limit).
	Name string `json:"name"`
	// Source is where EG made the change (a pull request on EG's main branch).
	Source string `json:"source"`
	// Kind is the CRD's Kind.group.
	Kind string `json:"kind"`
	// Fields are the object fields it adds (spec.headers.maxRequestHeaderLimit), the
	// values admission hands the translator beside the Go types, which lack them.
	Fields []string `json:"fields"`
	// Patch is an RFC 6902 patch of each served version's openAPIV3Schema.
	Patch json.RawMessage `json:"patch"`

	gk    schema.GroupKind
	patch jsonpatch.Patch
}

// additionsFile is the layout of additions/<release>.yaml.
type additionsFile struct {
	Base      string     `json:"base"`
	Additions []Addition `json:"additions"`
}

// previewOf reads the additions of a preview release (false when release is none).
func previewOf(release string) (*additionsFile, bool, error) {
	b, err := additionFiles.ReadFile("additions/" + release + ".yaml")
	if err != nil {
		return nil, false, nil
	}
	var f additionsFile
	if err := yaml.UnmarshalStrict(b, &f); err != nil {
		return nil, true, fmt.Errorf("additions/%s.yaml: %w", release, err)
	}
	for i := range f.Additions {
		a := &f.Additions[i]
		kind, group, ok := strings.Cut(a.Kind, ".")
		if a.Name == "" || !ok || len(a.Fields) == 0 {
			return nil, true, fmt.Errorf("additions/%s.yaml: addition %d needs a name, a Kind.group and its fields", release, i)
		}
		a.gk = schema.GroupKind{Group: group, Kind: kind}
		if a.patch, err = decodePatch(string(a.Patch)); err != nil {
			return nil, true, fmt.Errorf("additions/%s.yaml: %s: %w", release, a.Name, err)
		}
	}
	return &f, true, nil
}

func decodePatch(js string) (jsonpatch.Patch, error) { return jsonpatch.DecodePatch([]byte(js)) }

// withAdditions gives the Set's CRDs the additions, each applied when its CRD is parsed.
func (s *Set) withAdditions(adds []Addition) error {
	for i := range adds {
		a := &adds[i]
		e := s.byKind[a.gk]
		if e == nil {
			return fmt.Errorf("%s: addition %s: no CustomResourceDefinition for %s", s.Release, a.Name, a.gk)
		}
		e.additions = append(e.additions, a)
		s.additions = append(s.additions, *a)
	}
	return nil
}

// Additions are the named changes the Set's CRDs carry beyond their base release, in the
// order they are applied (none for a real release).
func (s *Set) Additions() []Addition { return s.additions }

// AddedFields are the fields the additions give a kind, sorted: values of fields no Go
// type of the base release has.
func (s *Set) AddedFields(kind string) []string {
	var out []string
	for _, a := range s.additions {
		if a.gk.Kind == kind {
			out = append(out, a.Fields...)
		}
	}
	sort.Strings(out)
	return out
}

// applyAdditions patches every version's schema of a parsed CRD.
func applyAdditions(crd *apiextensionsv1.CustomResourceDefinition, adds []*Addition) error {
	if len(adds) == 0 {
		return nil // a real release's CRD: nothing to round-trip
	}
	for i := range crd.Spec.Versions {
		v := &crd.Spec.Versions[i]
		if v.Schema == nil || v.Schema.OpenAPIV3Schema == nil {
			continue
		}
		doc, err := json.Marshal(v.Schema.OpenAPIV3Schema)
		if err != nil {
			return err
		}
		for _, a := range adds {
			if doc, err = a.patch.Apply(doc); err != nil {
				return fmt.Errorf("addition %s, version %s: %w", a.Name, v.Name, err)
			}
		}
		var props apiextensionsv1.JSONSchemaProps
		if err := yaml.UnmarshalStrict(doc, &props); err != nil {
			return fmt.Errorf("version %s after the additions: %w", v.Name, err)
		}
		v.Schema.OpenAPIV3Schema = &props
	}
	return nil
}
