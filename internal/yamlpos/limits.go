package yamlpos

import (
	"bytes"
	"fmt"

	"go.yaml.in/yaml/v3"
)

// Limits bound what a YAML text may become once parsed. A negative value means no limit.
type Limits struct {
	// MaxDepth is the deepest nesting of mappings and sequences (counted as JSON nesting:
	// a document {a: [1]} has depth 2), aliases expanded.
	MaxDepth int
	// MaxAliasBytes is how many bytes (measured as JSON) alias expansion may add: each
	// alias counts the full expanded size of the node it names ("billion laughs").
	MaxAliasBytes int64
}

// LimitKind says which limit a text is over.
type LimitKind int

// The limits.
const (
	LimitDepth LimitKind = iota + 1
	LimitAlias
)

// LimitError is a text over one of Limits, at Line (1-based, of the text checked).
type LimitError struct {
	Kind LimitKind
	Line int
	Max  int64
}

func (e *LimitError) Error() string {
	what := fmt.Sprintf("nesting deeper than %d levels", e.Max)
	if e.Kind == LimitAlias {
		what = fmt.Sprintf("YAML aliases expand to more than %d bytes", e.Max)
	}
	if e.Line > 0 {
		return fmt.Sprintf("line %d: %s", e.Line, what)
	}
	return what
}

// saturate keeps sizes from overflowing: expansion sizes grow exponentially with nested
// aliases, and only "over the limit" matters past this point.
const saturate = int64(1) << 60

func add(a, b int64) int64 {
	if a >= saturate-b {
		return saturate
	}
	return a + b
}

// shape is what a node becomes once its aliases are expanded.
type shape struct {
	size   int64 // bytes as JSON, roughly: scalars with quotes, one separator per item
	added  int64 // bytes that aliases inside the node add
	height int   // nesting of mappings and sequences, the node's own included
}

// walker measures nodes, following aliases. Each node is measured once (aliases refer to
// anchored nodes; the depth search asks again about nodes on its way down), so a walk is
// linear in the number of nodes written, whatever they expand to.
type walker struct {
	memo   map[*yaml.Node]shape
	active map[*yaml.Node]bool
}

func (w *walker) measure(n *yaml.Node) (shape, error) {
	if n == nil {
		return shape{}, nil
	}
	if s, ok := w.memo[n]; ok {
		return s, nil
	}
	if n.Anchor != "" {
		// Only anchored nodes are alias targets, so only they can close a cycle.
		if w.active[n] {
			return shape{},
				&Error{Line: n.Line, Msg: fmt.Sprintf("malformed YAML: anchor %q contains an alias to itself", n.Anchor)}
		}
		w.active[n] = true
		defer delete(w.active, n)
	}
	var s shape
	switch n.Kind {
	case yaml.AliasNode:
		if n.Alias == nil {
			return shape{}, &Error{Line: n.Line, Msg: fmt.Sprintf("malformed YAML: unknown anchor %q referenced", n.Value)}
		}
		t, err := w.measure(n.Alias)
		if err != nil {
			return shape{}, err
		}
		s = shape{size: t.size, added: t.size, height: t.height}
	case yaml.ScalarNode:
		s.size = int64(len(n.Value)) + 3
	default: // documents, mappings, sequences
		s.size = 2
		for _, c := range n.Content {
			cs, err := w.measure(c)
			if err != nil {
				return shape{}, err
			}
			s.size = add(s.size, add(cs.size, 1))
			s.added = add(s.added, cs.added)
			s.height = max(s.height, cs.height)
		}
		if n.Kind == yaml.MappingNode || n.Kind == yaml.SequenceNode {
			s.height++
		}
	}
	w.memo[n] = s
	return s, nil
}

func newWalker() *walker {
	return &walker{memo: map[*yaml.Node]shape{}, active: map[*yaml.Node]bool{}}
}

// CheckNode measures a parsed tree against l. It returns the bytes alias expansion adds
// (so a caller can keep one budget over many documents) and a *LimitError, naming the
// line of the offending alias or of the first mapping or sequence past the depth limit,
// when the tree is over a limit. An alias to its own anchor is an *Error.
func CheckNode(root *yaml.Node, l Limits) (int64, error) {
	w := newWalker()
	s, err := w.measure(root)
	if err != nil {
		return 0, err
	}
	if l.MaxAliasBytes >= 0 && s.added > l.MaxAliasBytes {
		return s.added, &LimitError{Kind: LimitAlias, Line: w.aliasLine(root, l.MaxAliasBytes), Max: l.MaxAliasBytes}
	}
	if l.MaxDepth >= 0 && s.height > l.MaxDepth {
		return s.added, &LimitError{Kind: LimitDepth, Line: w.depthLine(root, 0, l.MaxDepth), Max: int64(l.MaxDepth)}
	}
	return s.added, nil
}

// aliasLine is the line of the alias, in document order, at which the bytes added so far
// pass max.
func (w *walker) aliasLine(root *yaml.Node, limit int64) int {
	var sum int64
	var find func(n *yaml.Node) int
	find = func(n *yaml.Node) int {
		if n == nil {
			return 0
		}
		if n.Kind == yaml.AliasNode {
			s, _ := w.measure(n.Alias)
			if sum = add(sum, s.size); sum > limit {
				return n.Line
			}
			return 0
		}
		for _, c := range n.Content {
			if l := find(c); l > 0 {
				return l
			}
		}
		return 0
	}
	if l := find(root); l > 0 {
		return l
	}
	return root.Line
}

// depthLine descends to the first mapping or sequence at nesting level limit+1; depth is
// the nesting above n. An alias on the way is where the excess comes from: its line is
// returned.
func (w *walker) depthLine(n *yaml.Node, depth, limit int) int {
	if n.Kind == yaml.AliasNode {
		return n.Line
	}
	if n.Kind == yaml.MappingNode || n.Kind == yaml.SequenceNode {
		depth++
		if depth > limit {
			return n.Line
		}
	}
	for _, c := range n.Content {
		if s, err := w.measure(c); err == nil && depth+s.height > limit {
			return w.depthLine(c, depth, limit)
		}
	}
	return n.Line
}

// MayHaveAliases reports whether text can hold an alias at all: an alias (*name) needs an
// anchor (&name) in the same document. Most Kubernetes documents hold neither, and skip
// the extra parse CheckAliases needs.
func MayHaveAliases(text []byte) bool {
	return bytes.IndexByte(text, '&') >= 0 && bytes.IndexByte(text, '*') >= 0
}

// CheckAliases measures the alias expansion of one YAML document before anything expands
// it (sigs.k8s.io/yaml would build the whole expansion). It returns the bytes aliases add;
// over maxBytes (negative: no limit) it returns a *LimitError. A text that does not parse
// returns the parser's *Error.
func CheckAliases(text []byte, maxBytes int64) (int64, error) {
	if !MayHaveAliases(text) {
		return 0, nil
	}
	root, err := Parse(text)
	if err != nil {
		return 0, err
	}
	return CheckNode(root, Limits{MaxDepth: -1, MaxAliasBytes: maxBytes})
}

// JSONDepth is the nesting depth of objects and arrays in the JSON text js.
func JSONDepth(js []byte) int {
	depth, deepest := 0, 0
	inString, escaped := false, false
	for _, c := range js {
		if inString {
			switch {
			case escaped:
				escaped = false
			case c == '\\':
				escaped = true
			case c == '"':
				inString = false
			}
			continue
		}
		switch c {
		case '"':
			inString = true
		case '{', '[':
			depth++
			deepest = max(deepest, depth)
		case '}', ']':
			depth--
		}
	}
	return deepest
}

// DepthLine is the line in text of the first mapping or sequence past maxDepth levels
// (0 when the text does not parse or is not that deep).
func DepthLine(text []byte, maxDepth int) int {
	root, err := Parse(text)
	if err != nil {
		return 0
	}
	w := newWalker()
	s, err := w.measure(root)
	if err != nil || s.height <= maxDepth {
		return 0
	}
	return w.depthLine(root, 0, maxDepth)
}
