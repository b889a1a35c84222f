// Package crds holds the CustomResourceDefinitions of one EG release (EG's own and the
// Gateway API CRDs EG bundles) and applies them to objects the way the Kubernetes API
// server does on create: the request version must be served, unknown fields are refused
// (strict field validation, kubectl's default), schema defaults are filled in, the
// OpenAPI constraints and CEL rules of the version's schema and ObjectMeta's rules are
// checked, and an admitted object is converted to the CRD's storage version (these CRDs
// convert with strategy None: only apiVersion changes).
//
// The validators are apiextensions-apiserver's own (structural schema, pruning,
// defaulting, the schema validator and the custom resource strategy with its CEL
// validator), so verdicts and messages are the API server's. A Set parses a CRD only when
// an object of its kind first needs it and builds each version's validator once; a Set is
// safe for concurrent use.
package crds

import (
	"bytes"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/yaml"
)

// Set is one release's CRDs, indexed by group and kind.
type Set struct {
	// Release names where the CRDs come from ("EG v1.9.1 (Gateway API v1.6.1)").
	Release string
	byKind  map[schema.GroupKind]*entry
	groups  map[string]bool
	// additions are the named changes of a preview release (additions.go).
	additions []Addition
}

// entry is one CRD: its raw document until first use, then the parsed definition and a
// validator per version, built on demand.
type entry struct {
	doc []byte

	once sync.Once
	crd  *apiextensionsv1.CustomResourceDefinition
	err  error

	mu       sync.Mutex
	versions map[string]*versionValidator

	// additions patch the schema when it is parsed (a preview release's).
	additions []*Addition
}

// New indexes a stream of CRD documents (multi-document YAML). Only each document's
// names are read now; the schema is parsed when an object of its kind arrives.
func New(release string, bundle []byte) (*Set, error) {
	s := &Set{Release: release, byKind: map[schema.GroupKind]*entry{}, groups: map[string]bool{}}
	for _, doc := range splitYAML(bundle) {
		gk, ok := crdIdentity(doc)
		if !ok {
			continue // a comment-only document, or not a CRD
		}
		if _, dup := s.byKind[gk]; dup {
			return nil, fmt.Errorf("%s: two CustomResourceDefinitions for %s", release, gk)
		}
		s.byKind[gk] = &entry{doc: doc}
		s.groups[gk.Group] = true
	}
	if len(s.byKind) == 0 {
		return nil, fmt.Errorf("%s: no CustomResourceDefinition found", release)
	}
	return s, nil
}

// FromDir reads every *.yaml file of dir (recursively) as CRD documents.
func FromDir(release, dir string) (*Set, error) {
	var bundle bytes.Buffer
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() || !(strings.HasSuffix(path, ".yaml") || strings.HasSuffix(path, ".yml")) {
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		bundle.WriteString("\n---\n")
		bundle.Write(b)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("%s: reading CRDs from %s: %w", release, dir, err)
	}
	return New(release, bundle.Bytes())
}

// Governs reports whether the API group is one this Set's CRDs define: an object of such a
// group whose kind or version the Set does not serve is refused, as the API server does.
func (s *Set) Governs(group string) bool { return s.groups[group] }

// Kinds lists the group/kinds the Set defines, sorted.
func (s *Set) Kinds() []schema.GroupKind {
	out := make([]schema.GroupKind, 0, len(s.byKind))
	for gk := range s.byKind {
		out = append(out, gk)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].String() < out[j].String() })
	return out
}

// CRD returns the parsed definition of a group/kind (nil when the Set has none).
func (s *Set) CRD(gk schema.GroupKind) (*apiextensionsv1.CustomResourceDefinition, error) {
	e := s.byKind[gk]
	if e == nil {
		return nil, nil
	}
	return e.parsed()
}

func (e *entry) parsed() (*apiextensionsv1.CustomResourceDefinition, error) {
	e.once.Do(func() {
		var crd apiextensionsv1.CustomResourceDefinition
		if err := yaml.UnmarshalStrict(e.doc, &crd); err != nil {
			e.err = fmt.Errorf("parsing CustomResourceDefinition: %w", err)
			return
		}
		if err := applyAdditions(&crd, e.additions); err != nil {
			e.err = fmt.Errorf("CustomResourceDefinition %s: %w", crd.Name, err)
			return
		}
		e.crd = &crd
		e.doc = nil
	})
	return e.crd, e.err
}

// splitYAML cuts a multi-document stream at its "---" lines.
func splitYAML(b []byte) [][]byte {
	var out [][]byte
	var cur []byte
	for len(b) > 0 {
		line := b
		if i := bytes.IndexByte(b, '\n'); i >= 0 {
			line, b = b[:i+1], b[i+1:]
		} else {
			b = nil
		}
		if t := bytes.TrimRight(line, "\r\n"); bytes.Equal(t, []byte("---")) || bytes.HasPrefix(t, []byte("--- ")) {
			out = append(out, cur)
			cur = nil
			continue
		}
		cur = append(cur, line...)
	}
	return append(out, cur)
}

// crdIdentity reads a CRD document's spec.group and spec.names.kind from its top lines
// without parsing the (large) schema: controller-gen and Gateway API write both at fixed
// indentation before `versions:`. A document laid out otherwise is parsed whole.
func crdIdentity(doc []byte) (schema.GroupKind, bool) {
	var gk schema.GroupKind
	isCRD, inSpec, inNames := false, false, false
	for _, line := range bytes.Split(doc, []byte("\n")) {
		l := string(bytes.TrimRight(line, "\r"))
		switch {
		case l == "kind: CustomResourceDefinition":
			isCRD = true
		case l == "spec:":
			inSpec = true
		case inSpec && strings.HasPrefix(l, "  group: "):
			gk.Group = strings.TrimSpace(strings.TrimPrefix(l, "  group: "))
		case inSpec && l == "  names:":
			inNames = true
			continue
		case inNames && strings.HasPrefix(l, "    kind: "):
			gk.Kind = strings.TrimSpace(strings.TrimPrefix(l, "    kind: "))
		case inSpec && strings.HasPrefix(l, "  versions:"):
			if isCRD && gk.Group != "" && gk.Kind != "" {
				return gk, true
			}
			return parsedIdentity(doc)
		}
		if inNames && len(l) > 2 && !strings.HasPrefix(l, "    ") {
			inNames = false
		}
	}
	if isCRD && gk.Group != "" && gk.Kind != "" {
		return gk, true
	}
	if !isCRD {
		return gk, false
	}
	return parsedIdentity(doc)
}

func parsedIdentity(doc []byte) (schema.GroupKind, bool) {
	var crd struct {
		Kind string `json:"kind"`
		Spec struct {
			Group string `json:"group"`
			Names struct {
				Kind string `json:"kind"`
			} `json:"names"`
		} `json:"spec"`
	}
	if err := yaml.Unmarshal(doc, &crd); err != nil || crd.Kind != "CustomResourceDefinition" {
		return schema.GroupKind{}, false
	}
	return schema.GroupKind{Group: crd.Spec.Group, Kind: crd.Spec.Names.Kind}, crd.Spec.Group != "" &&
		crd.Spec.Names.Kind != ""
}
