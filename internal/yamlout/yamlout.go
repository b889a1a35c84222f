// Package yamlout prints JSON documents as YAML, the same bytes sigs.k8s.io/yaml's
// JSONToYAML gives, fast enough for a whole translation of 10k routes.
//
// JSONToYAML is slow on large documents in two ways. It reads the JSON with the YAML parser
// (to keep integers integers), which costs seconds per megabyte on a single-line document.
// And the YAML emitter keeps every event of a document until the document ends, so one
// 25 MB document (10k routes) grows a slice of tens of millions of events: 30 s and 2 GB.
//
// Here encoding/json reads the document, numbers get the types the YAML parser would give
// them (int, then uint64, then float64), and large lists are emitted one element at a time
// (on every core), each as a small document of its own placed at the element's depth so
// that its indentation and line wrapping are the ones it has in the whole document. The
// same emitter writes every piece, so the bytes are the same.
package yamlout

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"

	yaml "go.yaml.in/yaml/v2"

	"github.com/egharness/egharness/internal/parallel"
)

// splitAbove is the size (in values) above which a list is emitted element by element.
const splitAbove = 2048

// FromJSON converts one JSON document to YAML.
func FromJSON(js []byte) ([]byte, error) {
	return fromJSON(js, splitAbove)
}

func fromJSON(js []byte, split int) ([]byte, error) {
	dec := json.NewDecoder(bytes.NewReader(js))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, fmt.Errorf("yaml output: %w", err)
	}
	if _, err := dec.Token(); err == nil {
		return nil, fmt.Errorf("yaml output: more than one JSON value")
	}
	v, err := typed(v)
	if err != nil {
		return nil, err
	}
	p := &pieces{split: split, token: placeholderBase(js)}
	root, _, _ := p.prepare(v, nil)
	p.docs = append(p.docs, root) // the skeleton is the last piece
	out := make([][]byte, len(p.docs))
	errs := make([]error, len(p.docs))
	parallel.Each(len(p.docs), func(i int) {
		out[i], errs[i] = yaml.Marshal(p.docs[i])
	})
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	var buf bytes.Buffer
	buf.Grow(len(js) + len(js)/4)
	p.assemble(&buf, out[len(out)-1], out)
	return buf.Bytes(), nil
}

// pieces are the documents emitted separately. A list that is split is replaced in its
// parent by a placeholder scalar; piece i renders element i of such a list, wrapped in the
// keys and one-element lists of its path so that it sits at its own depth, and the first
// lines (one per key of the path) are dropped when the piece is put in place.
type pieces struct {
	split int
	token string
	docs  []any
	// lists[i] is the piece numbers of the elements that replace placeholder i, and skip
	// how many leading lines each of those pieces has to drop.
	lists [][]int
	skip  []int
}

// step is one step of a value's path: a map key, or (key == nil) a list element.
type step struct{ key *string }

// prepare returns v with its large lists replaced by placeholders, copying the maps and
// lists it changes (never the input), its size in values, and whether it changed.
func (p *pieces) prepare(v any, path []step) (any, int, bool) {
	switch x := v.(type) {
	case map[string]any:
		var out map[string]any
		size := 1
		for k, e := range x {
			kp := append(path[:len(path):len(path)], step{key: &k})
			ev, n, changed := p.prepare(e, kp)
			if list, ok := ev.([]any); ok && len(list) > 1 && n > p.split {
				ev, n, changed = p.splitList(list, kp), 1, true
			}
			size += n
			if changed && out == nil {
				out = make(map[string]any, len(x))
				for k2, e2 := range x {
					out[k2] = e2
				}
			}
			if out != nil {
				out[k] = ev
			}
		}
		if out == nil {
			return x, size, false
		}
		return out, size, true
	case []any:
		var out []any
		size := 1
		ep := append(path[:len(path):len(path)], step{})
		for i, e := range x {
			ev, n, changed := p.prepare(e, ep)
			size += n
			if changed && out == nil {
				out = append([]any(nil), x...)
			}
			if out != nil {
				out[i] = ev
			}
		}
		if out == nil {
			return x, size, false
		}
		return out, size, true
	}
	return v, 1, false
}

// splitList makes one piece per (prepared) element of the list at path, whose last step is
// the list's key: only lists that are map values are split, so that the placeholder reads
// "key: token".
func (p *pieces) splitList(list []any, path []step) string {
	id := len(p.lists)
	ids := make([]int, 0, len(list))
	for _, e := range list {
		ids = append(ids, len(p.docs))
		p.docs = append(p.docs, wrap(path, e))
	}
	keys := 0
	for _, s := range path {
		if s.key != nil {
			keys++
		}
	}
	p.lists = append(p.lists, ids)
	p.skip = append(p.skip, keys)
	return p.token + strconv.Itoa(id)
}

// wrap puts elem, as the only element of a list, at the end of path.
func wrap(path []step, elem any) any {
	v := any([]any{elem})
	for i := len(path) - 1; i >= 0; i-- {
		if k := path[i].key; k != nil {
			v = map[string]any{*k: v}
		} else {
			v = []any{v}
		}
	}
	return v
}

// assemble writes text, putting each split list's pieces (from out) where its placeholder is.
func (p *pieces) assemble(buf *bytes.Buffer, text []byte, out [][]byte) {
	for len(text) > 0 {
		line := text
		if j := bytes.IndexByte(text, '\n'); j >= 0 {
			line = text[:j+1]
		}
		text = text[len(line):]
		id, head, ok := p.placeholder(line)
		if !ok {
			buf.Write(line)
			continue
		}
		buf.Write(head)
		buf.WriteByte('\n')
		for _, piece := range p.lists[id] {
			body := out[piece]
			for range p.skip[id] {
				body = body[bytes.IndexByte(body, '\n')+1:]
			}
			p.assemble(buf, body, out)
		}
	}
}

// placeholder reads "<indent>key: <token><n>\n" and returns n and "<indent>key:".
func (p *pieces) placeholder(line []byte) (int, []byte, bool) {
	t := bytes.TrimRight(line, "\n")
	j := bytes.LastIndex(t, []byte(": "+p.token))
	if j < 0 {
		return 0, nil, false
	}
	id, err := strconv.Atoi(string(t[j+2+len(p.token):]))
	if err != nil || id < 0 || id >= len(p.lists) {
		return 0, nil, false
	}
	return id, t[:j+1], true
}

// placeholderBase is a plain scalar that does not occur in the input, so that a value of
// the document is never taken for a placeholder.
func placeholderBase(js []byte) string {
	base := "yamlout-split-list-"
	for bytes.Contains(js, []byte(base)) {
		base += "x-"
	}
	return base
}

// typed replaces json.Number values, in place, by the Go number the YAML parser resolves the
// same text to.
func typed(v any) (any, error) {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			t, err := typed(e)
			if err != nil {
				return nil, err
			}
			x[k] = t
		}
	case []any:
		for i, e := range x {
			t, err := typed(e)
			if err != nil {
				return nil, err
			}
			x[i] = t
		}
	case json.Number:
		return number(x)
	}
	return v, nil
}

func number(n json.Number) (any, error) {
	if i, err := n.Int64(); err == nil {
		if int64(int(i)) == i {
			return int(i), nil
		}
		return i, nil
	}
	if u, err := strconv.ParseUint(string(n), 10, 64); err == nil {
		return u, nil
	}
	f, err := n.Float64()
	if err != nil {
		return nil, fmt.Errorf("yaml output: number %s: %w", n, err)
	}
	return f, nil
}
