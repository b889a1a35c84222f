package yamlpos

import (
	"errors"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

// Target types for DecodeStrict: JSON tags only, like the Kubernetes types.
type item struct {
	Port int    `json:"port"`
	Name string `json:"name"`
}

type doc struct {
	Name  string `json:"name"`
	Items []item `json:"items"`
	Meta  *struct {
		Labels   map[string]string `json:"labels"`
		Replicas int               `json:"replicas"`
	} `json:"meta"`
}

const lineDoc = `name: app
meta:
  labels:
    env: prod
items:
- port: 80
  name: http
- port: 443
  name: https
matrix:
- - a
  - b
- - c
`

func TestLine(t *testing.T) {
	root, err := Parse([]byte(lineDoc))
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	tests := []struct {
		path string
		want int
	}{
		{"", 1},                 // the root
		{"name", 1},             // a top-level key
		{"meta", 2},             // a mapping key
		{"meta.labels", 3},      // a nested key
		{"meta.labels.env", 4},  // deepest key
		{"items", 5},            // the key of a sequence
		{"items[0]", 6},         // first item
		{"items[1]", 8},         // second item
		{"items[1].name", 9},    // key inside an item
		{"items[0].port", 6},    // first key of an item is on the item's line
		{"matrix[1][0]", 13},    // nested sequences
		{"matrix[0][1]", 12},    // second element of the first inner sequence
		{"meta.labels.nope", 3}, // a missing key: deepest key reached
		{"items[7].name", 5},    // an index past the end: the sequence's key
		{"items.port", 5},       // a key step on a sequence: the sequence's key
		{"name[0]", 1},          // an index step on a scalar
		{"missing.deeper", 1},   // missing at the top: root line
	}
	for _, tt := range tests {
		if got := Line(root, tt.path); got != tt.want {
			t.Errorf("Line(%q) = %d, want %d", tt.path, got, tt.want)
		}
	}
	if got := Line(nil, "name"); got != 0 {
		t.Errorf("Line(nil) = %d, want 0", got)
	}
}

func TestSplitPath(t *testing.T) {
	got := splitPath("spec.rules[2].matches[0][1].path")
	want := []pathStep{{key: "spec", index: -1}, {key: "rules", index: -1}, {index: 2}, {key: "matches", index: -1},
		{index: 0}, {index: 1}, {key: "path", index: -1}}
	if len(got) != len(want) {
		t.Fatalf("splitPath = %+v, want %+v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("step %d = %+v, want %+v", i, got[i], want[i])
		}
	}
}

// decodeErrors decodes text into a doc and returns every *Error it reports.
func decodeErrors(t *testing.T, text string, offset int) []*Error {
	t.Helper()
	root, err := Parse([]byte(text))
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	var out doc
	err = DecodeStrict([]byte(text), root, &out, offset)
	if err == nil {
		return nil
	}
	var parts []error
	var j interface{ Unwrap() []error }
	if errors.As(err, &j) {
		parts = j.Unwrap()
	} else {
		parts = []error{err}
	}
	var errs []*Error
	for _, p := range parts {
		var e *Error
		if !errors.As(p, &e) {
			t.Fatalf("error %v (%T) is not a *yamlpos.Error", p, p)
		}
		errs = append(errs, e)
	}
	return errs
}

func TestDecodeStrictValid(t *testing.T) {
	text := "name: app\nitems:\n- {port: 80, name: http}\nmeta: {labels: {a: b}}\n"
	root, err := Parse([]byte(text))
	if err != nil {
		t.Fatal(err)
	}
	var out doc
	if err := DecodeStrict([]byte(text), root, &out, 0); err != nil {
		t.Fatalf("DecodeStrict: %v", err)
	}
	if out.Name != "app" || len(out.Items) != 1 || out.Items[0].Port != 80 || out.Items[0].Name != "http" ||
		out.Meta.Labels["a"] != "b" {
		t.Errorf("decoded %+v", out)
	}
}

func TestDecodeStrictUnknownField(t *testing.T) {
	text := "name: app\nitems:\n- port: 80\n  nmae: http\n"
	errs := decodeErrors(t, text, 0)
	if len(errs) != 1 {
		t.Fatalf("got %d errors %v, want 1", len(errs), errs)
	}
	e := errs[0]
	if e.Line != 4 || e.Path != "items[0].nmae" || e.Msg != `unknown field "items[0].nmae"` {
		t.Errorf("got %+v, want line 4, path items[0].nmae", *e)
	}
	if e.Error() != `line 4: unknown field "items[0].nmae"` {
		t.Errorf("Error() = %q", e.Error())
	}
}

func TestDecodeStrictEveryUnknownFieldWithOffset(t *testing.T) {
	text := "name: app\nbogus: 1\nmeta:\n  labels: {}\n  other: 2\n"
	errs := decodeErrors(t, text, 10)
	if len(errs) != 2 {
		t.Fatalf("got %d errors %v, want 2", len(errs), errs)
	}
	if errs[0].Line != 12 || errs[0].Path != "bogus" {
		t.Errorf("first error %+v, want line 12 (2 + offset 10), path bogus", *errs[0])
	}
	if errs[1].Line != 15 || errs[1].Path != "meta.other" {
		t.Errorf("second error %+v, want line 15, path meta.other", *errs[1])
	}
}

func TestDecodeStrictTypeError(t *testing.T) {
	text := "items: []\nname: 5\n"
	errs := decodeErrors(t, text, 0)
	if len(errs) != 1 {
		t.Fatalf("got %d errors %v, want 1", len(errs), errs)
	}
	e := errs[0]
	if e.Line != 2 || e.Path != "name" {
		t.Errorf("got %+v, want line 2, path name", *e)
	}
	if !strings.Contains(e.Msg, "cannot unmarshal number") || !strings.Contains(e.Msg, "of type string") {
		t.Errorf("message %q does not say what was wrong", e.Msg)
	}
	if strings.HasPrefix(e.Msg, "json: ") {
		t.Errorf("message %q keeps the json: prefix", e.Msg)
	}
}

func TestDecodeStrictTypeErrorNested(t *testing.T) {
	text := "name: app\nmeta:\n  labels: {env: prod}\n  replicas: three\n"
	errs := decodeErrors(t, text, 5)
	if len(errs) != 1 {
		t.Fatalf("got %d errors %v, want 1", len(errs), errs)
	}
	if errs[0].Line != 9 || errs[0].Path != "meta.replicas" {
		t.Errorf("got %+v, want line 9 (4 + offset 5), path meta.replicas", *errs[0])
	}
}

// A type error inside a sequence item should point at the field, not at the sequence.
func TestDecodeStrictTypeErrorInSequence(t *testing.T) {
	text := "name: app\nitems:\n- port: 1\n- port: eighty\n"
	errs := decodeErrors(t, text, 0)
	if len(errs) != 1 {
		t.Fatalf("got %d errors %v, want 1", len(errs), errs)
	}
	if errs[0].Line != 4 {
		t.Errorf("got line %d (%+v), want 4 (the line of `port: eighty`)", errs[0].Line, *errs[0])
	}
}

func TestDecodeStrictDuplicateKey(t *testing.T) {
	text := "name: a\nitems: []\nname: b\n"
	root, err := Parse([]byte(text))
	if err != nil {
		t.Fatal(err)
	}
	var out doc
	err = DecodeStrict([]byte(text), root, &out, 0)
	if err == nil {
		t.Fatal("a duplicate key was accepted")
	}
	if !strings.Contains(err.Error(), `key "name" already set`) {
		t.Errorf("error %q does not name the duplicate key", err)
	}
}

// DecodeStrict promises every strict problem with its line (and lineOffset applied).
func TestDecodeStrictDuplicateKeyLine(t *testing.T) {
	text := "name: a\nitems: []\nname: b\n"
	root, err := Parse([]byte(text))
	if err != nil {
		t.Fatal(err)
	}
	var out doc
	err = DecodeStrict([]byte(text), root, &out, 10)
	var e *Error
	if !errors.As(err, &e) {
		t.Fatalf("error %v is not a *yamlpos.Error", err)
	}
	if e.Line != 13 {
		t.Errorf("duplicate key reported at line %d (%q), want 13 (line 3 + offset 10)", e.Line, e.Error())
	}
}

func TestParseSyntaxError(t *testing.T) {
	tests := []struct {
		text     string
		wantLine int
		wantMsg  string
	}{
		{"name: app\n  bad: x\n", 2, "malformed YAML: mapping values are not allowed in this context"},
		{"a: b\nc: d\ne: f: g\n", 3, "malformed YAML: mapping values are not allowed in this context"},
		{"a: b\nc: d\ne: 'unterminated\n", 3, "malformed YAML: found unexpected end of stream"},
		{"a: 1\nb: @x\n", 2, "malformed YAML: found character that cannot start any token"},
	}
	for _, tt := range tests {
		_, err := Parse([]byte(tt.text))
		var e *Error
		if !errors.As(err, &e) {
			t.Errorf("Parse(%q) = %v, want a *yamlpos.Error", tt.text, err)
			continue
		}
		if e.Line != tt.wantLine {
			t.Errorf("Parse(%q): line %d, want %d (%v)", tt.text, e.Line, tt.wantLine, e)
		}
		if !strings.HasPrefix(e.Msg, tt.wantMsg) {
			t.Errorf("Parse(%q): message %q, want prefix %q", tt.text, e.Msg, tt.wantMsg)
		}
		if strings.Contains(e.Msg, "yaml: line") {
			t.Errorf("Parse(%q): message %q still carries the parser's line prefix", tt.text, e.Msg)
		}
	}
}

func TestParseUnwrapsDocument(t *testing.T) {
	root, err := Parse([]byte("a: 1\n"))
	if err != nil {
		t.Fatal(err)
	}
	if root.Kind != yaml.MappingNode || len(root.Content) != 2 || root.Content[0].Value != "a" {
		t.Errorf("root is %v with %d children, want the mapping a: 1", root.Kind, len(root.Content))
	}
}

func TestSyntaxErrorWithoutLine(t *testing.T) {
	err := syntaxError(errors.New("yaml: something odd"))
	var e *Error
	if !errors.As(err, &e) || e.Line != 0 || e.Msg != "malformed YAML: something odd" {
		t.Errorf("syntaxError = %#v", err)
	}
	if e.Error() != "malformed YAML: something odd" {
		t.Errorf("Error() without a line = %q", e.Error())
	}
}

func TestTypeErrorPath(t *testing.T) {
	tests := map[string]string{
		"cannot unmarshal string into Go struct field Listener.spec.listeners.port of type int32": "spec.listeners.port",
		"cannot unmarshal number into Go struct field T.name of type string":                      "name",
		"unexpected end of JSON input": "",
	}
	for msg, want := range tests {
		if got := typeErrorPath(msg); got != want {
			t.Errorf("typeErrorPath(%q) = %q, want %q", msg, got, want)
		}
	}
}

func TestToJSON(t *testing.T) {
	js, err := ToJSON([]byte("name: app\nitems:\n- {port: 80}\non: yes\n"))
	if err != nil {
		t.Fatal(err)
	}
	// YAML 1.1 scalars, as kubectl reads them: `on` and `yes` are booleans.
	if string(js) != `{"items":[{"port":80}],"name":"app","true":true}` {
		t.Errorf("ToJSON = %s", js)
	}
	_, err = ToJSON([]byte("a: 1\nb: @x\n"))
	var e *Error
	if !errors.As(err, &e) || e.Line != 2 || !strings.HasPrefix(e.Msg, "malformed YAML:") {
		t.Errorf("ToJSON syntax error = %#v", err)
	}
}

// ToJSON documents that duplicate keys carry their line.
func TestToJSONDuplicateKeyLine(t *testing.T) {
	_, err := ToJSON([]byte("name: a\nitems: []\nname: b\n"))
	var e *Error
	if !errors.As(err, &e) || e.Line != 3 {
		t.Errorf("ToJSON duplicate key = %#v, want Line 3", err)
	}
}

func TestDecodeJSONStrict(t *testing.T) {
	text := []byte("name: app\nitems:\n- port: 80\n  nmae: http\nmeta: {replicas: 2}\n")
	js, err := ToJSON(text)
	if err != nil {
		t.Fatal(err)
	}
	var out doc
	err = DecodeJSONStrict(js, text, &out, 100)
	var e *Error
	if !errors.As(err, &e) || e.Line != 104 || e.Path != "items[0].nmae" {
		t.Errorf("DecodeJSONStrict = %#v, want line 104 (4 + offset 100), path items[0].nmae", err)
	}

	good := []byte("name: app\nmeta: {replicas: 2}\n")
	js, _ = ToJSON(good)
	out = doc{}
	if err := DecodeJSONStrict(js, good, &out, 0); err != nil || out.Name != "app" || out.Meta.Replicas != 2 {
		t.Errorf("DecodeJSONStrict(good) = %v, %+v", err, out)
	}

	bad := []byte("name: app\nmeta:\n  replicas: two\n")
	js, _ = ToJSON(bad)
	err = DecodeJSONStrict(js, bad, &doc{}, 0)
	if !errors.As(err, &e) || e.Line != 3 || e.Path != "meta.replicas" {
		t.Errorf("DecodeJSONStrict type error = %#v, want line 3", err)
	}
}
