package yamlpos

import (
	"errors"
	"strings"
	"testing"
)

func TestJSONDepth(t *testing.T) {
	tests := map[string]int{
		`1`:                            0,
		`"[[["`:                        0,
		`{}`:                           1,
		`{"a":[1,{"b":"]]]}"}]}`:       3,
		`{"a":"\"[","b":[[]]}`:         3,
		`[[],[[]],[]]`:                 3,
		`{"a":"\\","b":{"c":{"d":1}}}`: 3,
	}
	for js, want := range tests {
		if got := JSONDepth([]byte(js)); got != want {
			t.Errorf("JSONDepth(%s) = %d, want %d", js, got, want)
		}
	}
}

func TestCheckNodeDepth(t *testing.T) {
	text := "a: 1\nb:\n  c:\n    - [1, [2]]\n"
	root, err := Parse([]byte(text))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := CheckNode(root, Limits{MaxDepth: 5, MaxAliasBytes: -1}); err != nil {
		t.Errorf("depth 5 under a limit of 5: %v", err)
	}
	_, err = CheckNode(root, Limits{MaxDepth: 4, MaxAliasBytes: -1})
	var le *LimitError
	if !errors.As(err, &le) || le.Kind != LimitDepth || le.Line != 4 || le.Max != 4 {
		t.Errorf("limit 4: %#v", err)
	}
	if le != nil && le.Error() != "line 4: nesting deeper than 4 levels" {
		t.Errorf("Error() = %q", le.Error())
	}
	if _, err := CheckNode(root, Limits{MaxDepth: -1, MaxAliasBytes: -1}); err != nil {
		t.Errorf("no limit: %v", err)
	}
	if l := DepthLine([]byte(text), 2); l != 4 {
		t.Errorf("DepthLine(2) = %d, want 4 (c's sequence, the first node at level 3)", l)
	}
	if l := DepthLine([]byte(text), 9); l != 0 {
		t.Errorf("DepthLine of a shallow text = %d, want 0", l)
	}
}

func TestCheckAliases(t *testing.T) {
	laughs := "a: &a [\"lol\", \"lol\", \"lol\", \"lol\"]\n" +
		"b: &b [*a, *a, *a, *a]\n" +
		"c: &c [*b, *b, *b, *b]\n" +
		"d: [*c, *c, *c, *c]\n"
	added, err := CheckAliases([]byte(laughs), -1)
	if err != nil || added < 4*4*4*4*6 {
		t.Fatalf("unlimited: added %d, %v", added, err)
	}
	_, err = CheckAliases([]byte(laughs), added-1)
	var le *LimitError
	if !errors.As(err, &le) || le.Kind != LimitAlias || le.Line != 4 {
		t.Errorf("one byte short: %#v", err)
	}
	if _, err := CheckAliases([]byte(laughs), added); err != nil {
		t.Errorf("exactly at the limit: %v", err)
	}
	// Without both & and * there is nothing to measure (and no parse).
	if added, err := CheckAliases([]byte("host: \"*.example.com\"\n"), 0); added != 0 || err != nil {
		t.Errorf("no anchors: %d, %v", added, err)
	}
	// A cycle is an error, not a hang.
	if _, err := CheckAliases([]byte("a: &a [*a]\n"), -1); err == nil ||
		!strings.Contains(err.Error(), "alias to itself") {
		t.Errorf("cycle: %v", err)
	}
	// Exponential expansion saturates instead of overflowing.
	var b strings.Builder
	b.WriteString("x0: &x0 [1, 1]\n")
	for i := 1; i < 100; i++ {
		b.WriteString("x" + itoa(i) + ": &x" + itoa(i) + " [*x" + itoa(i-1) + ", *x" + itoa(i-1) + "]\n")
	}
	added, err = CheckAliases([]byte(b.String()), 1<<40)
	if err == nil || added <= 1<<40 {
		t.Errorf("2^100 expansion: added %d, %v", added, err)
	}
}

func itoa(i int) string {
	const digits = "0123456789"
	if i < 10 {
		return digits[i : i+1]
	}
	return itoa(i/10) + digits[i%10:i%10+1]
}

// go-yaml prints parser problems' lines 0-based and marks a truncated text's problem past
// its end: the line must be where the broken construct is.
func TestSyntaxErrorLines(t *testing.T) {
	tests := []struct {
		text string
		line int
	}{
		{"a: 1\nb: [x\n", 2},
		{"a: 1\nb: {x: 1\n", 2},
		{"a: 1\nb: [\n  x,\n  y\n", 2},
		{"a:\n  - b\n c: d\n", 3},
		{"kind: x\nspec: [\n", 2},
		{"a: 1\nb: 'abc\n\n\n", 2},
		{"a: 1\nb: \x01\n", 2},
		{"a: 1\n\nb: \xff\xfe\n", 3},
	}
	for _, tt := range tests {
		for name, f := range map[string]func([]byte) error{
			"Parse":  func(b []byte) error { _, err := Parse(b); return err },
			"ToJSON": func(b []byte) error { _, err := ToJSON(b); return err },
		} {
			err := f([]byte(tt.text))
			var e *Error
			if !errors.As(err, &e) || e.Line != tt.line {
				t.Errorf("%s(%q) = %v, want line %d", name, tt.text, err, tt.line)
			}
		}
	}
}

func TestBadCharLine(t *testing.T) {
	tests := map[string]int{"ok\n": 0, "a\nb\x00": 2, "\x7f": 1, "a\n\nc\xc3": 3, "é\nü\n\u0085\n": 0, "a\n\u0080": 2,
		"\t\r\n": 0}
	for in, want := range tests {
		if got := badCharLine([]byte(in)); got != want {
			t.Errorf("badCharLine(%q) = %d, want %d", in, got, want)
		}
	}
}
