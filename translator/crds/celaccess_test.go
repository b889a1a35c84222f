package crds

import (
	"strings"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
	celvalidation "k8s.io/apiextensions-apiserver/pkg/apiserver/schema/cel"
)

// What a node's rules read of self decides which values share a remembered answer: too
// little and a verdict is wrong, so every use the analysis does not know reads the whole.
func TestOwnAccess(t *testing.T) {
	str := structuralschema.Structural{Generic: structuralschema.Generic{Type: "string"}}
	obj := func(props map[string]structuralschema.Structural) structuralschema.Structural {
		return structuralschema.Structural{Generic: structuralschema.Generic{Type: "object"}, Properties: props}
	}
	filter := obj(
		map[string]structuralschema.Structural{"type": str,
			"header": obj(map[string]structuralschema.Structural{"name": str})})
	list := structuralschema.Structural{Generic: structuralschema.Generic{Type: "array"}, Items: &filter}
	labels := structuralschema.Structural{Generic: structuralschema.Generic{Type: "object"},
		AdditionalProperties: &structuralschema.StructuralOrBool{Structural: &str}}
	node := obj(
		map[string]structuralschema.Structural{"type": str, "header": filter.Properties["header"], "filters": list,
			"labels": labels, "name": str})

	for _, c := range []struct {
		rules []string
		want  string // describe(access); "" for the whole value
	}{
		{[]string{"!(has(self.header) && self.type != 'Header')"}, "{header:{} type:whole}"},
		{[]string{"self.filters.all(f, !has(f.header))"}, "{filters:[{header:{}}]}"},
		{[]string{"size(self.filters) <= 16", "self.filters.size() > 0"}, "{filters:size}"},
		{[]string{"self.filters[0].type == 'A'"}, "{filters:[{type:whole}]}"},
		{[]string{"self.labels.all(k, k.startsWith('x'))"}, "{labels:keys}"},
		{[]string{"self == self"}, ""},
		{[]string{"size(self) > 1"}, "size"},
		{[]string{"self.name == oldSelf.name"}, ""},
		{[]string{"self.filters.exists(f, f == self.filters[0])"}, "{filters:[whole]}"},
		{[]string{"self.labels.foo == 'x'"}, "{labels:whole}"},
		{[]string{"self.?name.orValue('') != ''"}, ""},
		{[]string{"self.type == 'A' ? has(self.header.name) : true"}, "{header:{name:{}} type:whole}"},
		{[]string{"this is not CEL ("}, ""},
	} {
		s := node
		for _, r := range c.rules {
			s.XValidations = append(s.XValidations, apiextensionsv1.ValidationRule{Rule: r})
		}
		got := ""
		if a := ownAccess(&celvalidation.Validator{Schema: &s}); a != nil {
			got = describe(a)
		}
		if got != c.want {
			t.Errorf("%q: read %q, want %q", c.rules, got, c.want)
		}
	}
}

func describe(a *access) string {
	var parts []string
	if a.whole {
		return "whole"
	}
	if a.size {
		parts = append(parts, "size")
	}
	if a.keys {
		parts = append(parts, "keys")
	}
	if a.elems != nil {
		return "[" + describe(a.elems) + "]"
	}
	if len(a.fields) > 0 {
		a.finish()
		var fs []string
		for _, k := range a.ordered {
			fs = append(fs, k+":"+describe(a.fields[k]))
		}
		parts = append(parts, "{"+strings.Join(fs, " ")+"}")
	}
	if len(parts) == 0 {
		return "{}"
	}
	return strings.Join(parts, " ")
}
