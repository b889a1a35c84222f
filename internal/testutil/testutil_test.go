package testutil

import "testing"

func TestIndent(t *testing.T) {
	for in, want := range map[string]string{
		"":                  "",
		"a\n":               "  a\n",
		"a: 1\n\nb:\n  c\n": "  a: 1\n\n  b:\n    c\n",
		"no newline":        "  no newline",
	} {
		if got := Indent(in); got != want {
			t.Errorf("Indent(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestLineOf(t *testing.T) {
	if got := LineOf(t, "a\nb marker\nc marker\n", "marker"); got != 2 {
		t.Errorf("LineOf = %d, want 2", got)
	}
}
