// Package yamlpos decodes YAML strictly into Go types and reports every problem with the
// line it stands on. Kubernetes types only carry JSON tags, so YAML is converted to JSON and
// decoded with sigs.k8s.io/json, whose strict errors carry the field path; the path is then
// looked up in the YAML node tree to recover the line.
package yamlpos

import (
	"bytes"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"

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
func Parse(data []byte) (_ *yaml.Node, err error) {
	defer recoverParser(&err)
	var n yaml.Node
	if err := yaml.Unmarshal(data, &n); err != nil {
		return nil, placeError(syntaxError(err), data)
	}
	if n.Kind == yaml.DocumentNode && len(n.Content) == 1 {
		return n.Content[0], nil
	}
	return &n, nil
}

// recoverParser turns a panic inside a YAML or JSON library into an error: whatever the
// input, decoding fails with a message, never with a crash.
func recoverParser(err *error) {
	if r := recover(); r != nil {
		*err = &Error{Msg: fmt.Sprintf("malformed YAML: the parser failed on this input (%v)", r)}
	}
}

// syntaxError turns "yaml: line 4: could not find expected ':'" into an Error with Line 4;
// "yaml: unmarshal errors:\n  line 3: key "name" already set in map" (a duplicate key)
// likewise gets Line 3.
func syntaxError(err error) error {
	msg := err.Error()
	msg = strings.TrimPrefix(msg, "error converting YAML to JSON: ")
	msg = strings.TrimPrefix(msg, "yaml: ")
	if rest, ok := strings.CutPrefix(msg, "unmarshal errors:\n"); ok {
		first, _, _ := strings.Cut(strings.TrimSpace(rest), "\n")
		msg = strings.TrimSpace(first)
		if num, tail, ok := strings.Cut(strings.TrimPrefix(msg, "line "), ":"); ok && strings.HasPrefix(msg, "line ") {
			if l, convErr := strconv.Atoi(num); convErr == nil {
				return &Error{Line: l, Msg: "malformed YAML:" + tail}
			}
		}
	}
	if rest, ok := strings.CutPrefix(msg, "line "); ok {
		if num, tail, ok := strings.Cut(rest, ":"); ok {
			if l, convErr := strconv.Atoi(num); convErr == nil {
				if parserProblem(strings.TrimSpace(tail)) {
					l++
				}
				return &Error{Line: l, Msg: "malformed YAML:" + tail}
			}
		}
	}
	return &Error{Msg: "malformed YAML: " + msg}
}

// placeError puts a syntax error's line inside the text. A problem found at the end of a
// truncated text is marked on the line after its last one, which no editor shows; the
// reader's problems (control characters, broken UTF-8) carry no line at all, so the
// first offending character is looked up.
func placeError(err error, data []byte) error {
	var e *Error
	if !errors.As(err, &e) {
		return err
	}
	if e.Line == 0 && readerProblem(e.Msg) {
		e.Line = badCharLine(data)
	}
	if e.Line <= 0 {
		return err
	}
	last := LineCount(bytes.TrimRight(data, " \t\r\n"))
	if e.Line > last {
		e.Line = last
	}
	return err
}

// LineCount is the number of lines in data as YAML counts them: LF, CRLF, a lone CR, NEL,
// LS and PS each end a line.
func LineCount(data []byte) int {
	n := 1
	for i := 0; i < len(data); i++ {
		switch c := data[i]; {
		case c == '\n':
			n++
		case c == '\r':
			if i+1 < len(data) && data[i+1] == '\n' {
				i++
			}
			n++
		case c == 0xc2 && i+1 < len(data) && data[i+1] == 0x85: // NEL
			n++
			i++
		case c == 0xe2 && i+2 < len(data) && data[i+1] == 0x80 && (data[i+2] == 0xa8 || data[i+2] == 0xa9): // LS, PS
			n++
			i += 2
		}
	}
	return n
}

func readerProblem(msg string) bool {
	for _, p := range []string{"control characters are not allowed", "invalid leading UTF-8 octet",
		"invalid trailing UTF-8 octet",
		"incomplete UTF-8 octet sequence", "invalid length of a UTF-8 sequence", "invalid Unicode character"} {
		if strings.Contains(msg, p) {
			return true
		}
	}
	return false
}

// badCharLine is the line of the first character YAML does not allow (C0 and C1 controls
// other than tab, CR and LF; DEL; surrogates; U+FFFE, U+FFFF; invalid UTF-8), 0 if none.
func badCharLine(data []byte) int {
	line := 1
	for i := 0; i < len(data); {
		r, size := utf8.DecodeRune(data[i:])
		switch {
		case r == utf8.RuneError && size <= 1,
			r < 0x20 && r != '\t' && r != '\n' && r != '\r',
			r == 0x7f, r >= 0x80 && r <= 0x9f && r != 0x85,
			r >= 0xd800 && r <= 0xdfff, r == 0xfffe, r == 0xffff:
			return line
		case r == '\n':
			line++
		}
		i += size
	}
	return 0
}

// parserProblem reports whether msg is one of libyaml's parser (not scanner) problems.
// go-yaml prints their marks 0-based (it adds one only for scanner errors), so their
// lines are one short.
func parserProblem(msg string) bool {
	for _, p := range []string{"did not find expected ", "found duplicate %", "found incompatible YAML document",
		"found undefined tag handle"} {
		if strings.HasPrefix(msg, p) {
			return true
		}
	}
	return false
}

// ToJSON converts one YAML document to JSON with Kubernetes' YAML rules (YAML 1.1
// scalars, as kubectl reads them). Duplicate keys and syntax errors carry their line.
func ToJSON(data []byte) (_ []byte, err error) {
	defer recoverParser(&err)
	js, err := sigsyaml.YAMLToJSONStrict(data)
	if err != nil {
		return nil, toJSONError(data, err)
	}
	return js, nil
}

// toJSONError words a conversion failure. go-yaml v2 (under sigs.k8s.io/yaml) marks a
// syntax error where the parser gave up, which for a truncated text is past its end; v3
// marks where the broken construct starts (the unclosed bracket). On this error path the
// text is parsed again with v3 and, when it fails there too, v3's error is used, so
// scenario files and object files say the same thing about the same text.
func toJSONError(data []byte, err error) error {
	e := syntaxError(err)
	var ye *Error
	if errors.As(e, &ye) && strings.HasPrefix(ye.Msg, "malformed YAML: ") &&
		!strings.Contains(ye.Msg, "already set in map") {
		if _, perr := Parse(data); perr != nil {
			return perr
		}
	}
	return placeError(e, data)
}

// DecodeJSONStrict decodes js (the JSON form of the YAML text) into out, refusing unknown
// and duplicate fields. Only when something is wrong is the YAML parsed again, to put a
// line on each problem: the happy path reads the text once.
func DecodeJSONStrict(js, text []byte, out any, lineOffset int) (err error) {
	defer recoverParser(&err)
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
func DecodeStrict(data []byte, root *yaml.Node, out any, lineOffset int) (err error) {
	defer recoverParser(&err)
	js, err := sigsyaml.YAMLToJSONStrict(data)
	if err != nil {
		return offset(toJSONError(data, err), lineOffset)
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
		return &Error{Line: lineOfKind(root, splitPath(path), valueKind(msg)), Path: path, Msg: msg}
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
	for _, step := range joinDottedKeys(root, splitPath(path)) {
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

// joinDottedKeys rejoins key steps that a mapping holds as one key with dots in it
// ("v1.8" under expectByProfile), preferring the longest key that exists.
func joinDottedKeys(root *yaml.Node, steps []pathStep) []pathStep {
	var out []pathStep
	n := root
	for i := 0; i < len(steps); i++ {
		st := steps[i]
		if st.index < 0 && n != nil && n.Kind == yaml.MappingNode {
			for j := len(steps) - 1; j > i; j-- {
				key := st.key
				ok := true
				for _, more := range steps[i+1 : j+1] {
					if more.index >= 0 {
						ok = false
						break
					}
					key += "." + more.key
				}
				if ok && valueAt(n, pathStep{key: key, index: -1}) != nil {
					st = pathStep{key: key, index: -1}
					i = j
					break
				}
			}
		}
		out = append(out, st)
		if n != nil {
			n = valueAt(n, st)
		}
	}
	return out
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

// valueKind is the JSON kind of the offending value in "cannot unmarshal <kind> into ...".
func valueKind(msg string) string {
	return between(msg, "cannot unmarshal ", " ")
}

// between is the text of msg after the first start and before the end that follows it (to
// the end of msg when there is none), or "" without a start: the decoders' messages are
// text, and these helpers read values out of them.
func between(msg, start, end string) string {
	_, rest, ok := strings.Cut(msg, start)
	if !ok {
		return ""
	}
	text, _, _ := strings.Cut(rest, end)
	return text
}

// lineOfKind follows steps like Line, but encoding/json's type errors name no sequence
// index: through a sequence it takes the first element in which the rest of the path ends
// on a value of the offending JSON kind.
func lineOfKind(n *yaml.Node, steps []pathStep, kind string) int {
	if n == nil {
		return 0
	}
	if len(steps) == 0 {
		return n.Line
	}
	if n.Kind == yaml.SequenceNode && steps[0].index < 0 {
		for _, item := range n.Content {
			if l := lineOfKind(item, steps, kind); l > 0 && kindAt(item, steps) == kind {
				return l
			}
		}
		return n.Line
	}
	step := steps[0]
	switch {
	case step.index >= 0 && n.Kind == yaml.SequenceNode && step.index < len(n.Content):
		return lineOfKind(n.Content[step.index], steps[1:], kind)
	case step.index < 0 && n.Kind == yaml.MappingNode:
		for i := 0; i+1 < len(n.Content); i += 2 {
			if n.Content[i].Value == step.key {
				if len(steps) == 1 {
					return n.Content[i].Line
				}
				return lineOfKind(n.Content[i+1], steps[1:], kind)
			}
		}
	}
	return n.Line
}

// kindAt is the JSON kind of the value steps reach from n ("" when they reach nothing);
// through a sequence without index, the first element that reaches one decides.
func kindAt(n *yaml.Node, steps []pathStep) string {
	switch {
	case n == nil:
		return ""
	case len(steps) == 0:
		return jsonKind(n)
	case n.Kind == yaml.SequenceNode && steps[0].index < 0:
		for _, item := range n.Content {
			if k := kindAt(item, steps); k != "" {
				return k
			}
		}
		return ""
	}
	return kindAt(valueAt(n, steps[0]), steps[1:])
}

func jsonKind(n *yaml.Node) string {
	switch n.Kind {
	case yaml.SequenceNode:
		return "array"
	case yaml.MappingNode:
		return "object"
	case yaml.ScalarNode:
		switch n.Tag {
		case "!!int", "!!float":
			return "number"
		case "!!bool":
			return "bool"
		case "!!null":
			return "null"
		}
		return "string"
	}
	return ""
}

func valueAt(n *yaml.Node, st pathStep) *yaml.Node {
	switch {
	case st.index >= 0 && n.Kind == yaml.SequenceNode && st.index < len(n.Content):
		return n.Content[st.index]
	case st.index < 0 && n.Kind == yaml.MappingNode:
		for i := 0; i+1 < len(n.Content); i += 2 {
			if n.Content[i].Value == st.key {
				return n.Content[i+1]
			}
		}
	}
	return nil
}

// typeErrorPath pulls the field path out of encoding/json's type errors, which name it as
// "Go struct field <Struct>.<path> of type ..." without exposing it as a value.
func typeErrorPath(msg string) string {
	field := between(msg, "Go struct field ", " of type")
	_, path, ok := strings.Cut(field, ".")
	if !ok {
		return ""
	}
	return path
}
