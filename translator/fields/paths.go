package fields

import (
	"fmt"
	"sort"
	"strings"
)

// Paths are written compactly in the registry: `spec.retry{numRetries,perRetry{timeout}}`
// stands for spec.retry.numRetries and spec.retry.perRetry.timeout. A segment ending in
// `[]` is a list's element (`spec.rules[]{name}` is spec.rules[].name) and `*` is a map's
// value (`spec.infrastructure.labels.*`).

// expand turns compact paths into full ones.
func expand(compact ...string) []string {
	var out []string
	for _, c := range compact {
		paths, rest, err := parseList(c, "")
		if err != nil || rest != "" {
			panic(fmt.Sprintf("fields: bad compact path %q: %v (left %q)", c, err, rest))
		}
		out = append(out, paths...)
	}
	return out
}

// parseList reads `item(,item)*` up to a closing brace or the end.
func parseList(s, prefix string) ([]string, string, error) {
	var out []string
	for {
		s = strings.TrimSpace(s)
		i := strings.IndexAny(s, "{},")
		name := s
		if i >= 0 {
			name = s[:i]
		}
		name = strings.TrimSpace(name)
		if name == "" {
			return nil, s, fmt.Errorf("empty name")
		}
		full := name
		if prefix != "" {
			full = prefix + "." + name
		}
		if i >= 0 && s[i] == '{' {
			sub, rest, err := parseList(s[i+1:], full)
			if err != nil {
				return nil, rest, err
			}
			if !strings.HasPrefix(rest, "}") {
				return nil, rest, fmt.Errorf("missing }")
			}
			out = append(out, sub...)
			s = strings.TrimSpace(rest[1:])
		} else {
			out = append(out, full)
			if i < 0 {
				return out, "", nil
			}
			s = s[i:]
		}
		if strings.HasPrefix(s, ",") {
			s = s[1:]
			continue
		}
		return out, s, nil
	}
}

// ancestors are the strict ancestors of a path, a list field both as itself and as its
// element (spec.rules and spec.rules[] for spec.rules[].name).
func ancestors(p string) []string {
	var out []string
	segs := strings.Split(p, ".")
	for i := 1; i < len(segs); i++ {
		a := strings.Join(segs[:i], ".")
		if strings.HasSuffix(a, "[]") {
			out = append(out, strings.TrimSuffix(a, "[]"))
		}
		out = append(out, a)
	}
	if strings.HasSuffix(p, "[]") {
		out = append(out, strings.TrimSuffix(p, "[]"))
	}
	return out
}

// Compact writes full paths compactly, the inverse of expand (sorted, shared prefixes
// grouped): what a failing test prints for a maintainer to paste.
func Compact(paths []string) string {
	type node struct {
		kids map[string]*node
		leaf bool
	}
	root := &node{kids: map[string]*node{}}
	for _, p := range paths {
		n := root
		for _, s := range strings.Split(p, ".") {
			k := n.kids[s]
			if k == nil {
				k = &node{kids: map[string]*node{}}
				n.kids[s] = k
			}
			n = k
		}
		n.leaf = true
	}
	var write func(n *node) string
	write = func(n *node) string {
		names := make([]string, 0, len(n.kids))
		for k := range n.kids {
			names = append(names, k)
		}
		sort.Strings(names)
		var parts []string
		for _, name := range names {
			k := n.kids[name]
			// a chain of single children is written as a dotted name
			for len(k.kids) == 1 && !k.leaf {
				for s, only := range k.kids {
					name, k = name+"."+s, only
				}
			}
			switch {
			case len(k.kids) == 0:
				parts = append(parts, name)
			case k.leaf:
				parts = append(parts, name, name+"{"+write(k)+"}")
			default:
				parts = append(parts, name+"{"+write(k)+"}")
			}
		}
		return strings.Join(parts, ",")
	}
	return write(root)
}
