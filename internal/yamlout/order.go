package yamlout

import (
	"slices"
	"unicode"
	"unicode/utf8"

	yaml "go.yaml.in/yaml/v2"
)

// The YAML emitter sorts a map's keys "numbers within keys by value", comparing rune by rune
// from the first difference. That is not a total order once keys mix letters and digits
// (a2 < a19 < a1b < a2), so its result then depends on the order the keys come in, which for
// a Go map changes from run to run: JWT providers named issuer_<hex> printed in a different
// order each time. Here maps become yaml.MapSlice, whose order the emitter keeps, sorted by
// keyLess: a strict total order that agrees with the emitter's wherever the emitter's order
// of a set of keys is consistent (every golden file, the fuzz test), so the bytes are the
// ones sigs.k8s.io/yaml prints, and stay the same from run to run where it printed several.

// keyLess orders keys as sequences of tokens, each a maximal run of digits or one other
// rune. Digit runs compare by value, then the shorter first (fewer leading zeros); a rune
// that is neither letter nor digit comes before a digit run, which comes before a letter;
// two runes of the same kind compare by code point; a key that is a prefix of the other
// comes first.
func keyLess(a, b string) bool {
	return keyCompare(a, b) < 0
}

func keyCompare(a, b string) int {
	for a != "" && b != "" {
		ta, ka := nextToken(a)
		tb, kb := nextToken(b)
		a, b = a[len(ta):], b[len(tb):]
		if ka != kb {
			return ka - kb
		}
		if ka == tokenDigits {
			if c := compareDigits(ta, tb); c != 0 {
				return c
			}
			continue
		}
		ra, _ := utf8.DecodeRuneInString(ta)
		rb, _ := utf8.DecodeRuneInString(tb)
		if ra != rb {
			return int(ra) - int(rb)
		}
	}
	return len(a) - len(b)
}

// token kinds, in the order the emitter puts them
const (
	tokenOther = iota
	tokenDigits
	tokenLetter
)

func nextToken(s string) (string, int) {
	r, n := utf8.DecodeRuneInString(s)
	switch {
	case isDigit(r):
		for n < len(s) && isDigit(rune(s[n])) {
			n++
		}
		return s[:n], tokenDigits
	case unicode.IsLetter(r):
		return s[:n], tokenLetter
	}
	return s[:n], tokenOther
}

// isDigit: only ASCII digits have values here (the emitter adds up other Unicode digits'
// code points as if they were ASCII, which orders nothing).
func isDigit(r rune) bool { return r >= '0' && r <= '9' }

func compareDigits(a, b string) int {
	x, y := trimZeros(a), trimZeros(b)
	if len(x) != len(y) {
		return len(x) - len(y)
	}
	for i := range len(x) {
		if x[i] != y[i] {
			return int(x[i]) - int(y[i])
		}
	}
	return len(a) - len(b)
}

func trimZeros(s string) string {
	for len(s) > 1 && s[0] == '0' {
		s = s[1:]
	}
	return s
}

// ordered turns a decoded JSON object into the map the emitter prints in keyLess order.
func ordered(m map[string]any) yaml.MapSlice {
	out := make(yaml.MapSlice, 0, len(m))
	for k, v := range m {
		out = append(out, yaml.MapItem{Key: k, Value: v})
	}
	slices.SortFunc(out, func(x, y yaml.MapItem) int { return keyCompare(x.Key.(string), y.Key.(string)) })
	return out
}
