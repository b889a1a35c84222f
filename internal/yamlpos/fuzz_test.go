package yamlpos

import (
	"errors"
	"testing"
)

// FuzzYAML checks the YAML layer on any bytes: parsing and converting never panic, error
// lines stay inside the text, and the alias measure bounds what the conversion really
// builds, so a text within the alias limit cannot expand past it.
func FuzzYAML(f *testing.F) {
	for _, s := range []string{
		lineDoc,
		"a: &a [1, 2]\nb: *a\nc: {<<: {x: *a}}\n",
		"a: &a {x: 1}\nb: {<<: *a, y: 2}\n",
		"a: &a [*a]\n",
		"x0: &x0 [\"lol\", \"lol\"]\nx1: &x1 [*x0, *x0]\nx2: [*x1, *x1]\n",
		"a: 1\nb: [x\n",
		"a: 'abc\n",
		"\xff\xfe",
		"- [[[[{a: b}]]]]\n",
		"a: \"\\x01\\x02\"\nb: &b \"\\u0001\\u0001\"\nc: [*b, *b, *b]\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		lines := LineCount(data)
		inText := func(what string, err error) {
			var e *Error
			if errors.As(err, &e) && (e.Line < 0 || e.Line > lines) {
				t.Errorf("%s: line %d of a %d-line text: %v", what, e.Line, lines, err)
			}
		}
		root, perr := Parse(data)
		inText("Parse", perr)
		js, jerr := ToJSON(data)
		inText("ToJSON", jerr)
		if perr == nil {
			added, err := CheckNode(root, Limits{MaxDepth: -1, MaxAliasBytes: -1})
			inText("CheckNode", err)
			if err == nil && jerr == nil {
				// Escaping can make one byte six (\u0001); the rest is structure.
				if bound := 6*(int64(len(data))+added) + 64; int64(len(js)) > bound {
					t.Errorf("the text expands to %d bytes of JSON, over the measured bound %d (aliases add %d)", len(js), bound,
						added)
				}
				if d := JSONDepth(js); d > 0 {
					if l := DepthLine(data, d-1); l < 1 || l > lines {
						t.Errorf("DepthLine(%d) = %d for a %d-line text", d-1, l, lines)
					}
				}
			}
			_ = Line(root, "a.b[0].c")
		}
		if jerr == nil {
			var out map[string]any
			inText("DecodeStrict", DecodeStrict(data, root, &out, 0))
		}
	})
}
