package resource

import (
	"regexp"

	"go.yaml.in/yaml/v3"

	"github.com/egharness/egharness/internal/yamlpos"
)

// listKindLine spots a document that may be a list (`kind: List`, `kind: HTTPRouteList`)
// without parsing every document twice.
var listKindLine = regexp.MustCompile(`(?m)^kind:\s*["']?[A-Za-z]*List["']?\s*$`)

// expandLists replaces each list document (what `kubectl get -o yaml` prints: apiVersion
// v1, kind List, items) by one document per item, each keeping the line where the item
// starts, so a cluster dump reads like the objects it holds. A document that does not
// parse, or is not a list with items, is left as it is for the decoder to judge.
func expandLists(docs []document) []document {
	var out []document
	for _, d := range docs {
		if !listKindLine.Match(d.text) {
			out = append(out, d)
			continue
		}
		items, ok := listItems(d)
		if !ok {
			out = append(out, d)
			continue
		}
		out = append(out, items...)
	}
	return out
}

func listItems(d document) ([]document, bool) {
	root, err := yamlpos.Parse(d.text)
	if err != nil || root.Kind != yaml.MappingNode {
		return nil, false
	}
	var items *yaml.Node
	for i := 0; i+1 < len(root.Content); i += 2 {
		if root.Content[i].Value == "items" {
			items = root.Content[i+1]
		}
	}
	if items == nil || (items.Kind != yaml.SequenceNode && !(items.Kind == yaml.ScalarNode && items.Tag == "!!null")) {
		return nil, false
	}
	var out []document
	for _, it := range items.Content {
		text, err := yaml.Marshal(it)
		if err != nil {
			return nil, false
		}
		out = append(out, document{text: text, line: d.line + it.Line - 1})
	}
	return out, true
}
