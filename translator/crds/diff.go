package crds

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// RuleChange is one difference between two releases' CRDs that decides what the API
// server admits: a kind or version served or not, a field added or removed, a constraint
// (type, format, enum, pattern, bounds, required, default) or a CEL rule changed.
type RuleChange struct {
	Kind    string `json:"kind"`    // group/kind, "HTTPRoute.gateway.networking.k8s.io"
	Version string `json:"version"` // the served version the change is in ("" for the kind itself)
	Path    string `json:"path"`    // field path, lists as [*] ("spec.rules[*].matches"); "" for the kind or version
	What    string `json:"what"`    // "field", "required", "format", "rule"...
	Before  string `json:"before"`  // "" when absent before
	After   string `json:"after"`   // "" when absent after
}

// String words the change in one line.
func (c RuleChange) String() string {
	where := c.Kind
	if c.Version != "" {
		where += " " + c.Version
	}
	if c.Path != "" {
		where += " " + c.Path
	}
	switch {
	case c.Before == "":
		return fmt.Sprintf("%s: %s added: %s", where, c.What, c.After)
	case c.After == "":
		return fmt.Sprintf("%s: %s removed: %s", where, c.What, c.Before)
	}
	return fmt.Sprintf("%s: %s %s → %s", where, c.What, c.Before, c.After)
}

// Diff lists what differs between two releases' CRDs, sorted by kind, version and path.
// Descriptions are left out: they change the documentation, not what is admitted.
func Diff(from, to *Set) ([]RuleChange, error) {
	kinds := map[schema.GroupKind]bool{}
	for gk := range from.byKind {
		kinds[gk] = true
	}
	for gk := range to.byKind {
		kinds[gk] = true
	}
	var out []RuleChange
	for gk := range kinds {
		a, err := from.CRD(gk)
		if err != nil {
			return nil, err
		}
		b, err := to.CRD(gk)
		if err != nil {
			return nil, err
		}
		out = append(out, diffCRD(gk.String(), a, b)...)
	}
	sort.SliceStable(out, func(i, j int) bool {
		x, y := out[i], out[j]
		if x.Kind != y.Kind {
			return x.Kind < y.Kind
		}
		if x.Version != y.Version {
			return x.Version < y.Version
		}
		if x.Path != y.Path {
			return x.Path < y.Path
		}
		if x.What != y.What {
			return x.What < y.What
		}
		return x.Before+x.After < y.Before+y.After
	})
	return out, nil
}

func diffCRD(kind string, a, b *apiextensionsv1.CustomResourceDefinition) []RuleChange {
	switch {
	case a == nil:
		return []RuleChange{{Kind: kind, What: "kind", After: "served (" + servedList(b) + ")"}}
	case b == nil:
		return []RuleChange{{Kind: kind, What: "kind", Before: "served (" + servedList(a) + ")"}}
	}
	var out []RuleChange
	if sa, sb := storageOf(a), storageOf(b); sa != sb {
		out = append(out, RuleChange{Kind: kind, What: "storage version", Before: sa, After: sb})
	}
	va, vb := servedVersions(a), servedVersions(b)
	for _, v := range union(keys(va), keys(vb)) {
		x, y := va[v], vb[v]
		switch {
		case x == nil:
			out = append(out, RuleChange{Kind: kind, Version: v, What: "version", After: "served"})
		case y == nil:
			out = append(out, RuleChange{Kind: kind, Version: v, What: "version", Before: "served"})
		case x.Schema != nil && y.Schema != nil:
			out = append(out, diffSchema(kind, v, "", x.Schema.OpenAPIV3Schema, y.Schema.OpenAPIV3Schema)...)
		}
	}
	return out
}

// schemaFacets are the single-valued keywords of a schema node diffSchema compares, in the
// order it reports them, each with how it is read as text: one reader serves both sides.
var schemaFacets = []struct {
	what string
	text func(*apiextensionsv1.JSONSchemaProps) string
}{
	{"type", func(s *apiextensionsv1.JSONSchemaProps) string { return s.Type }},
	{"format", func(s *apiextensionsv1.JSONSchemaProps) string { return s.Format }},
	{"pattern", func(s *apiextensionsv1.JSONSchemaProps) string { return s.Pattern }},
	{"enum", func(s *apiextensionsv1.JSONSchemaProps) string { return enumText(s.Enum) }},
	{"default", func(s *apiextensionsv1.JSONSchemaProps) string { return jsonText(s.Default) }},
	{"minimum", func(s *apiextensionsv1.JSONSchemaProps) string { return ptrText(s.Minimum) }},
	{"maximum", func(s *apiextensionsv1.JSONSchemaProps) string { return ptrText(s.Maximum) }},
	{"minLength", func(s *apiextensionsv1.JSONSchemaProps) string { return ptrText(s.MinLength) }},
	{"maxLength", func(s *apiextensionsv1.JSONSchemaProps) string { return ptrText(s.MaxLength) }},
	{"minItems", func(s *apiextensionsv1.JSONSchemaProps) string { return ptrText(s.MinItems) }},
	{"maxItems", func(s *apiextensionsv1.JSONSchemaProps) string { return ptrText(s.MaxItems) }},
	{"minProperties", func(s *apiextensionsv1.JSONSchemaProps) string { return ptrText(s.MinProperties) }},
	{"maxProperties", func(s *apiextensionsv1.JSONSchemaProps) string { return ptrText(s.MaxProperties) }},
	{"nullable", func(s *apiextensionsv1.JSONSchemaProps) string { return boolText(s.Nullable) }},
	{"x-kubernetes-preserve-unknown-fields", func(s *apiextensionsv1.JSONSchemaProps) string {
		return ptrText(s.XPreserveUnknownFields)
	}},
	{"x-kubernetes-list-type", func(s *apiextensionsv1.JSONSchemaProps) string { return ptrText(s.XListType) }},
}

// diffSchema compares one schema node and, recursively, its properties and items.
func diffSchema(kind, version, path string, a, b *apiextensionsv1.JSONSchemaProps) []RuleChange {
	var out []RuleChange
	add := func(what, before, after string) {
		if before != after {
			out = append(out, RuleChange{Kind: kind, Version: version, Path: path, What: what, Before: before, After: after})
		}
	}
	for _, f := range schemaFacets {
		add(f.what, f.text(a), f.text(b))
	}
	ra, rb := setOf(a.Required), setOf(b.Required)
	for _, f := range union(keys(ra), keys(rb)) {
		switch {
		case !ra[f]:
			add("required", "", f)
		case !rb[f]:
			add("required", f, "")
		}
	}
	rulesA, rulesB := rulesOf(a.XValidations), rulesOf(b.XValidations)
	for _, r := range union(keys(rulesA), keys(rulesB)) {
		add("rule", rulesA[r], rulesB[r])
	}
	for _, name := range union(keys(a.Properties), keys(b.Properties)) {
		pa, oka := a.Properties[name]
		pb, okb := b.Properties[name]
		child := name
		if path != "" {
			child = path + "." + name
		}
		switch {
		case !oka:
			out = append(out, RuleChange{Kind: kind, Version: version, Path: child, What: "field", After: fieldText(&pb)})
		case !okb:
			out = append(out, RuleChange{Kind: kind, Version: version, Path: child, What: "field", Before: fieldText(&pa)})
		default:
			out = append(out, diffSchema(kind, version, child, &pa, &pb)...)
		}
	}
	ia, ib := itemsOf(a), itemsOf(b)
	if ia != nil && ib != nil {
		out = append(out, diffSchema(kind, version, path+"[*]", ia, ib)...)
	}
	if aa, ab := additionalOf(a), additionalOf(b); aa != nil && ab != nil {
		out = append(out, diffSchema(kind, version, path+"[*]", aa, ab)...)
	}
	return out
}

func itemsOf(s *apiextensionsv1.JSONSchemaProps) *apiextensionsv1.JSONSchemaProps {
	if s.Items == nil {
		return nil
	}
	return s.Items.Schema
}

func additionalOf(s *apiextensionsv1.JSONSchemaProps) *apiextensionsv1.JSONSchemaProps {
	if s.AdditionalProperties == nil {
		return nil
	}
	return s.AdditionalProperties.Schema
}

// rulesOf keys CEL rules by their expression; the value is what a refusal says.
func rulesOf(vs apiextensionsv1.ValidationRules) map[string]string {
	out := map[string]string{}
	for _, v := range vs {
		msg := v.Message
		if msg == "" && v.MessageExpression != "" {
			msg = "(" + v.MessageExpression + ")"
		}
		out[v.Rule] = fmt.Sprintf("%s: %q", v.Rule, msg)
	}
	return out
}

func fieldText(s *apiextensionsv1.JSONSchemaProps) string {
	t := s.Type
	if t == "" {
		t = "any"
	}
	if s.Format != "" {
		t += " (" + s.Format + ")"
	}
	return t
}

func servedVersions(
	c *apiextensionsv1.CustomResourceDefinition,
) map[string]*apiextensionsv1.CustomResourceDefinitionVersion {
	out := map[string]*apiextensionsv1.CustomResourceDefinitionVersion{}
	for i := range c.Spec.Versions {
		if c.Spec.Versions[i].Served {
			out[c.Spec.Versions[i].Name] = &c.Spec.Versions[i]
		}
	}
	return out
}

func servedList(c *apiextensionsv1.CustomResourceDefinition) string {
	return strings.Join(keys(servedVersions(c)), ", ")
}

func storageOf(c *apiextensionsv1.CustomResourceDefinition) string {
	for _, v := range c.Spec.Versions {
		if v.Storage {
			return v.Name
		}
	}
	return ""
}

func enumText(vs []apiextensionsv1.JSON) string {
	if len(vs) == 0 {
		return ""
	}
	parts := make([]string, len(vs))
	for i, v := range vs {
		parts[i] = string(v.Raw)
	}
	return strings.Join(parts, ", ")
}

func jsonText(v *apiextensionsv1.JSON) string {
	if v == nil {
		return ""
	}
	var x any
	if json.Unmarshal(v.Raw, &x) == nil {
		b, _ := json.Marshal(x) // compact and key-sorted, so that layout is no change
		return string(b)
	}
	return string(v.Raw)
}

// ptrText is what p points to as text, or "" for nil.
func ptrText[T any](p *T) string {
	if p == nil {
		return ""
	}
	return fmt.Sprint(*p)
}

func boolText(b bool) string {
	if !b {
		return ""
	}
	return "true"
}

func setOf(list []string) map[string]bool {
	out := map[string]bool{}
	for _, s := range list {
		out[s] = true
	}
	return out
}

func keys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func union(a, b []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, s := range append(a, b...) {
		if !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	sort.Strings(out)
	return out
}
