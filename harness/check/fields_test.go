package check

import "testing"

// TestSubsetDiffNullMeansUnset: a null in an expectation asks for the field to be unset.
func TestSubsetDiffNullMeansUnset(t *testing.T) {
	got := map[string]any{"statPrefix": "http-80", "maxRequestHeadersKb": float64(96)}
	cases := []struct {
		want map[string]any
		diff string
	}{
		{map[string]any{"maxRequestHeadersKb": float64(96)}, ""},
		{map[string]any{"requestTimeout": nil}, ""},
		{map[string]any{"maxRequestHeadersKb": nil}, ".maxRequestHeadersKb is 96, expected it unset"},
		{map[string]any{"requestTimeout": "5s"}, `has no .requestTimeout (expected "5s")`},
	}
	for _, c := range cases {
		if d := subsetDiff("", toAny(c.want), got); d != c.diff {
			t.Errorf("want %v: diff %q, expected %q", c.want, d, c.diff)
		}
	}
}

func toAny(m map[string]any) any { return m }
