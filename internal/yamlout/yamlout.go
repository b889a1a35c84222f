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
// same emitter writes every piece, so the bytes are the same. Write prints the pieces as they
// are emitted, a chunk at a time, so that neither the whole output nor the whole decoded
// document has to stay in memory until the end.
package yamlout

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"

	yaml "go.yaml.in/yaml/v2"

	"github.com/egharness/egharness/internal/parallel"
)

// splitAbove is the size (in values) above which a list is emitted element by element.
const splitAbove = 2048

// chunk is how many pieces are emitted (in parallel) and written before the next ones: the
// output of a large document is never all in memory, and each piece's part of the decoded
// document is let go once it is written.
const chunk = 256

// lazyAbove is the size (in bytes of JSON) above which an object's members are decoded and
// emitted one at a time, each let go before the next: the decoded form of a document is ten
// times its JSON, and only the largest member of the top objects is then decoded at once.
const lazyAbove = 1 << 16

// FromJSON converts one JSON document to YAML.
func FromJSON(js []byte) ([]byte, error) {
	var buf bytes.Buffer
	buf.Grow(len(js) + len(js)/4)
	if err := write(&buf, js, splitAbove, lazyAbove); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// Write converts one JSON document to YAML and writes it to w as it goes (10k routes print
// about 30 MB of YAML). On an error, part of the document may have been written.
func Write(w io.Writer, js []byte) error {
	bw := bufio.NewWriterSize(w, 1<<16)
	if err := write(bw, js, splitAbove, lazyAbove); err != nil {
		return err
	}
	return bw.Flush()
}

func write(w io.Writer, js []byte, split, lazy int) error {
	if !json.Valid(js) {
		_, err := decode(js) // for its message
		if err == nil {
			err = fmt.Errorf("yaml output: invalid JSON")
		}
		return err
	}
	e := emitter{split: split, lazy: lazy, token: placeholderBase(js)}
	return e.value(w, nil, js)
}

func decode(js []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(js))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, fmt.Errorf("yaml output: %w", err)
	}
	if _, err := dec.Token(); err == nil {
		return nil, fmt.Errorf("yaml output: more than one JSON value")
	}
	return typed(v)
}

type emitter struct {
	split, lazy int
	token       string
}

// value writes the YAML of raw (valid JSON) as the value at path, a chain of map keys whose
// lines the caller has written except the last one: it writes what the document
// {path[0]: {path[1]: … raw}} prints, without its first len(path)-1 lines. Printing each
// member inside the keys of its path keeps its indentation and line wrapping the ones it has
// in the whole document, so the bytes are the same.
func (e emitter) value(w io.Writer, path []string, raw []byte) error {
	if len(raw) > e.lazy {
		if keys, members, ok := objectMembers(raw); ok {
			if len(path) > 0 {
				// the last key's own line, as it reads above a non-empty map
				out, err := yaml.Marshal(nest(path, yaml.MapSlice{{Key: "x", Value: 0}}))
				if err != nil {
					return err
				}
				if _, err := w.Write(nthLine(out, len(path)-1)); err != nil {
					return err
				}
			}
			for _, k := range keys {
				if err := e.value(w, append(path[:len(path):len(path)], k), members[k]); err != nil {
					return err
				}
				members[k] = nil
			}
			return nil
		}
	}
	v, err := decode(raw)
	if err != nil {
		return err
	}
	p := &pieces{split: e.split, token: e.token}
	// from here on the split lists' elements are held by their pieces only
	root, _, _ := p.prepare(nest(path, v), nil)
	skeleton, err := yaml.Marshal(root)
	if err != nil {
		return err
	}
	for range max(len(path)-1, 0) {
		skeleton = skeleton[bytes.IndexByte(skeleton, '\n')+1:]
	}
	return p.assemble(w, skeleton)
}

// nest puts v at the end of a chain of map keys.
func nest(path []string, v any) any {
	for i := len(path) - 1; i >= 0; i-- {
		v = yaml.MapSlice{{Key: path[i], Value: v}}
	}
	return v
}

func nthLine(text []byte, n int) []byte {
	for range n {
		text = text[bytes.IndexByte(text, '\n')+1:]
	}
	if j := bytes.IndexByte(text, '\n'); j >= 0 {
		return text[:j+1]
	}
	return text
}

// objectMembers splits a non-empty JSON object into its members, undecoded, with its keys in
// the order they are printed (keyLess). It says no for anything else.
func objectMembers(raw []byte) ([]string, map[string]json.RawMessage, bool) {
	if b := bytes.TrimLeft(raw, " \t\r\n"); len(b) == 0 || b[0] != '{' {
		return nil, nil, false
	}
	var members map[string]json.RawMessage
	if err := json.Unmarshal(raw, &members); err != nil || len(members) == 0 {
		return nil, nil, false
	}
	keys := make([]string, 0, len(members))
	for k := range members {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, keyCompare)
	return keys, members, true
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
	case yaml.MapSlice:
		var out yaml.MapSlice
		size := 1
		for i, item := range x {
			k := item.Key.(string)
			kp := append(path[:len(path):len(path)], step{key: &k})
			ev, n, changed := p.prepare(item.Value, kp)
			if list, ok := ev.([]any); ok && len(list) > 1 && n > p.split {
				ev, n, changed = p.splitList(list, kp), 1, true
			}
			size += n
			if changed && out == nil {
				out = slices.Clone(x)
			}
			if out != nil {
				out[i].Value = ev
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
			v = yaml.MapSlice{{Key: *k, Value: v}}
		} else {
			v = []any{v}
		}
	}
	return v
}

// assemble writes text, putting each split list's pieces where its placeholder is. Pieces
// are emitted a chunk at a time, on every core, and dropped once written.
func (p *pieces) assemble(w io.Writer, text []byte) error {
	for len(text) > 0 {
		line := text
		if j := bytes.IndexByte(text, '\n'); j >= 0 {
			line = text[:j+1]
		}
		text = text[len(line):]
		id, head, ok := p.placeholder(line)
		if !ok {
			if _, err := w.Write(line); err != nil {
				return err
			}
			continue
		}
		if _, err := fmt.Fprintf(w, "%s\n", head); err != nil {
			return err
		}
		ids := p.lists[id]
		for len(ids) > 0 {
			batch := ids[:min(chunk, len(ids))]
			ids = ids[len(batch):]
			out := make([][]byte, len(batch))
			errs := make([]error, len(batch))
			parallel.Each(len(batch), func(i int) {
				out[i], errs[i] = yaml.Marshal(p.docs[batch[i]])
			})
			for i, piece := range batch {
				if errs[i] != nil {
					return errs[i]
				}
				p.docs[piece] = nil
				body := out[i]
				for range p.skip[id] {
					body = body[bytes.IndexByte(body, '\n')+1:]
				}
				if err := p.assemble(w, body); err != nil {
					return err
				}
			}
		}
	}
	return nil
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

// typed replaces json.Number values by the Go number the YAML parser resolves the same text
// to, and objects by maps in the order they are printed (order.go).
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
		return ordered(x), nil
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
	if errors.Is(err, strconv.ErrRange) {
		// out of float64's range: the YAML parser leaves such a number as its text, which
		// the emitter prints unquoted
		return string(n), nil
	}
	if err != nil {
		return nil, fmt.Errorf("yaml output: number %s: %w", n, err)
	}
	return f, nil
}
