// Package yamlpos decodes YAML strictly into Go types and reports every problem with the
// line it stands on. Kubernetes types only carry JSON tags, so YAML is converted to JSON and
// decoded with sigs.k8s.io/json, whose strict errors carry the field path; the path is then
// looked up in the YAML node tree to recover the line.
package yamlpos

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
	kjson "sigs.k8s.io/json"
	sigsyaml "sigs.k8s.io/yaml"
)

// Error is a decoding problem at a line of the YAML text (1-based; 0 when unknown).
type Error struct {
	Line int
	Path string // field path, e.g. spec.rules[0].matches; "" when not known
	Msg  string
}

func (e *Error) Error() string {
	var b strings.Builder
	if e.Line > 0 {
		fmt.Fprintf(&b, "line %d: ", e.Line)
	}
	b.WriteString(e.Msg)
	return b.String()
}

// Parse reads one YAML document into a node tree. Syntax errors keep the parser's line.
func Parse(data []byte) (*yaml.Node, error) {
	var n yaml.Node
	if err := yaml.Unmarshal(data, &n); err != nil {
		return nil, syntaxError(err)
	}
	if n.Kind == yaml.DocumentNode && len(n.Content) == 1 {
		return n.Content[0], nil
	}
	return &n, nil
}

// syntaxError turns "yaml: line 4: could not find expected ':'" into an Error with Line 4.
func syntaxError(err error) error {
	msg := err.Error()
	msg = strings.TrimPrefix(msg, "yaml: ")
	if rest, ok := strings.CutPrefix(msg, "line "); ok {
		if num, tail, ok := strings.Cut(rest, ":"); ok {
			if l, convErr := strconv.Atoi(num); convErr == nil {
				return &Error{Line: l, Msg: "malformed YAML:" + tail}
			}
		}
	}
	return &Error{Msg: "malformed YAML: " + msg}
}

// ToJSON converts one YAML document to JSON with Kubernetes' YAML rules (YAML 1.1
// scalars, as kubectl reads them). Duplicate keys and syntax errors carry their line.
func ToJSON(data []byte) ([]byte, error) {
	js, err := sigsyaml.YAMLToJSONStrict(data)
	if err != nil {
		return nil, syntaxError(err)
	}
	return js, nil
}

// DecodeJSONStrict decodes js (the JSON form of the YAML text) into out, refusing unknown
// and duplicate fields. Only when something is wrong is the YAML parsed again, to put a
// line on each problem: the happy path reads the text once.
func DecodeJSONStrict(js, text []byte, out any, lineOffset int) error {
	strict, err := kjson.UnmarshalStrict(js, out, kjson.DisallowDuplicateFields, kjson.DisallowUnknownFields)
	if err == nil && len(strict) == 0 {
		return nil
	}
	root, _ := Parse(text) // nil on error: lines are then unknown
	if err != nil {
		return offset(fieldError(root, err), lineOffset)
	}
	errs := make([]error, 0, len(strict))
	for _, s := range strict {
		errs = append(errs, offset(fieldError(root, s), lineOffset))
	}
	return errors.Join(errs...)
}

// DecodeStrict decodes YAML into out, refusing unknown and duplicate fields and values of
// the wrong type. All strict problems are reported, each with its line; root locates paths.
// lineOffset is added to every line (for a document cut out of a larger file).
func DecodeStrict(data []byte, root *yaml.Node, out any, lineOffset int) error {
	js, err := sigsyaml.YAMLToJSONStrict(data)
	if err != nil {
		return offset(syntaxError(err), lineOffset)
	}
	strict, err := kjson.UnmarshalStrict(js, out, kjson.DisallowDuplicateFields, kjson.DisallowUnknownFields)
	if err != nil {
		return offset(fieldError(root, err), lineOffset)
	}
	errs := make([]error, 0, len(strict))
	for _, s := range strict {
		errs = append(errs, offset(fieldError(root, s), lineOffset))
	}
	return errors.Join(errs...)
}

func offset(err error, by int) error {
	var e *Error
	if errors.As(err, &e) && e.Line > 0 {
		e.Line += by
	}
	return err
}

func fieldError(root *yaml.Node, err error) error {
	var fe kjson.FieldError
	msg := strings.TrimPrefix(err.Error(), "json: ")
	if errors.As(err, &fe) {
		path := fe.FieldPath()
		return &Error{Line: Line(root, path), Path: path, Msg: msg}
	}
	if path := typeErrorPath(msg); path != "" {
		return &Error{Line: Line(root, path), Path: path, Msg: msg}
	}
	return &Error{Msg: msg}
}

// Line returns the line of the deepest node that path reaches (the key of the last step
// when it exists), or the root's line. Path syntax: a.b[2].c
func Line(root *yaml.Node, path string) int {
	if root == nil {
		return 0
	}
	line := root.Line
	n := root
	for _, step := range splitPath(path) {
		if n == nil {
			break
		}
		switch {
		case step.index >= 0 && n.Kind == yaml.SequenceNode:
			if step.index >= len(n.Content) {
				return line
			}
			n = n.Content[step.index]
			line = n.Line
		case step.index < 0 && n.Kind == yaml.MappingNode:
			var next *yaml.Node
			for i := 0; i+1 < len(n.Content); i += 2 {
				if n.Content[i].Value == step.key {
					line = n.Content[i].Line
					next = n.Content[i+1]
					break
				}
			}
			if next == nil {
				return line
			}
			n = next
		default:
			return line
		}
	}
	return line
}

type pathStep struct {
	key   string
	index int // -1 for a key step
}

func splitPath(path string) []pathStep {
	var steps []pathStep
	for _, part := range strings.Split(path, ".") {
		if part == "" {
			continue
		}
		key, rest, _ := strings.Cut(part, "[")
		if key != "" {
			steps = append(steps, pathStep{key: key, index: -1})
		}
		for rest != "" {
			num, tail, _ := strings.Cut(rest, "]")
			if i, err := strconv.Atoi(num); err == nil {
				steps = append(steps, pathStep{index: i})
			}
			_, rest, _ = strings.Cut(tail, "[")
		}
	}
	return steps
}

// typeErrorPath pulls the field path out of encoding/json's type errors, which name it as
// "Go struct field <Struct>.<path> of type ..." without exposing it as a value.
func typeErrorPath(msg string) string {
	_, rest, ok := strings.Cut(msg, "Go struct field ")
	if !ok {
		return ""
	}
	field, _, _ := strings.Cut(rest, " of type")
	_, path, ok := strings.Cut(field, ".")
	if !ok {
		return ""
	}
	return path
}
