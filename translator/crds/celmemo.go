package crds

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"math"
	"slices"
	"strings"
	"sync"

	celvalidation "k8s.io/apiextensions-apiserver/pkg/apiserver/schema/cel"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// celMemo runs a CRD version's CEL rules as the API server's CEL validator does on a create,
// and remembers what each part of an object gave: a CEL rule sees only its own field (self;
// oldSelf exists only on updates), so the same value under the same schema node gives the
// same errors and costs the same budget. Real files repeat themselves (the same retry
// policy, match or backendRef in thousands of objects), and the API server's CEL value
// adapter is slow (it rebuilds a schema's property map on every field access), so most of
// an object's rules are answered from memory.
//
// The walk follows the validator's own tree (its exported Items, Properties,
// AdditionalProperties and AllOfValidators): each node's rules are run by the validator
// itself, on a copy of the node without its children, and the children are walked in the
// order the validator walks them (rules, allOf, then items or properties). A remembered
// answer is used only when the remaining budget is more than it cost, so an object that
// runs out of budget is answered by the validator as before; answers that ran out are not
// remembered. The root is never remembered (its rules see metadata.name, which differs).
type celMemo struct {
	root *memoNode

	mu    sync.RWMutex
	cache map[memoKey]memoEntry
}

// memoMaxEntries bounds the memory of a long-lived process (`serve --watch`): the cache
// starts again when it is full. About 100 bytes an entry.
const memoMaxEntries = 1 << 18

// memoNode is one node of the validator with its children taken out (own) and the
// children as memo nodes.
type memoNode struct {
	own   *celvalidation.Validator
	allOf []*memoNode
	items *memoNode
	addl  *memoNode
	props map[string]*memoNode
	// read is what own's rules read of a value (celaccess.go), nil when they read all of it
	// or there are none
	read *access
}

// memoKey is a node's answer for a value: for the whole subtree (own false: its rules and
// its children's), or for its own rules only, keyed by what they read of the value.
type memoKey struct {
	node *memoNode
	own  bool
	sum  [sha256.Size]byte
}

// memoEntry is what a node gave for one value: its errors, with the field path they were
// found at (path) so they can be moved to another, and the budget it used.
type memoEntry struct {
	path string
	errs []field.Error
	cost int64
}

func newCELMemo(v *celvalidation.Validator) *celMemo {
	if v == nil {
		return nil
	}
	return &celMemo{root: newMemoNode(v), cache: map[memoKey]memoEntry{}}
}

func newMemoNode(v *celvalidation.Validator) *memoNode {
	if v == nil {
		return nil
	}
	own := *v
	own.Items, own.Properties, own.AllOfValidators, own.AdditionalProperties = nil, nil, nil, nil
	n := &memoNode{own: &own, items: newMemoNode(v.Items), addl: newMemoNode(v.AdditionalProperties), read: ownAccess(v)}
	for _, a := range v.AllOfValidators {
		n.allOf = append(n.allOf, newMemoNode(a))
	}
	if v.Properties != nil {
		n.props = make(map[string]*memoNode, len(v.Properties))
		for k := range v.Properties {
			p := v.Properties[k]
			n.props[k] = newMemoNode(&p)
		}
	}
	return n
}

// Validate is celvalidation.Validator.Validate of a create (no old object) from the root.
func (m *celMemo) Validate(ctx context.Context, obj any, budget int64) field.ErrorList {
	var buf []byte
	errs, _ := m.walk(ctx, m.root, nil, obj, budget, &buf)
	return errs
}

func (m *celMemo) walk(ctx context.Context, n *memoNode, path *field.Path, obj any, budget int64,
	buf *[]byte) (field.ErrorList, int64) {
	if n == nil || obj == nil {
		return nil, budget
	}
	var key memoKey
	cacheable := false
	if path != nil {
		*buf = (*buf)[:0]
		var ok bool
		if *buf, ok = appendCanonical(*buf, obj); ok {
			key = memoKey{node: n, sum: sha256.Sum256(*buf)}
			m.mu.RLock()
			e, hit := m.cache[key]
			m.mu.RUnlock()
			if hit && budget > e.cost {
				return e.at(path.String()), budget - e.cost
			}
			cacheable = true
		}
	}
	start := budget
	errs, budget := m.validateOwn(ctx, n, path, obj, budget, buf)
	var more field.ErrorList
	for _, a := range n.allOf {
		if budget < 0 {
			break
		}
		more, budget = m.walk(ctx, a, path, obj, budget, buf)
		errs = append(errs, more...)
	}
	if budget >= 0 {
		switch o := obj.(type) {
		case []any:
			if n.items != nil {
				for i := range o {
					more, budget = m.walk(ctx, n.items, path.Index(i), o[i], budget, buf)
					errs = append(errs, more...)
					if budget < 0 {
						break
					}
				}
			}
		case map[string]any:
			if n.addl != nil {
				for k, v := range o {
					more, budget = m.walk(ctx, n.addl, path.Key(k), v, budget, buf)
					errs = append(errs, more...)
					if budget < 0 {
						break
					}
				}
			}
			if n.props != nil && budget >= 0 {
				for k, v := range o {
					if sub := n.props[k]; sub != nil {
						more, budget = m.walk(ctx, sub, path.Child(k), v, budget, buf)
						errs = append(errs, more...)
						if budget < 0 {
							break
						}
					}
				}
			}
		}
	}
	if cacheable {
		m.remember(key, path, errs, start, budget)
	}
	return errs, budget
}

// validateOwn runs a node's own rules, or takes their answer from memory when a value that
// reads the same to them was seen before (n.read).
func (m *celMemo) validateOwn(ctx context.Context, n *memoNode, path *field.Path, obj any, budget int64,
	buf *[]byte) (field.ErrorList, int64) {
	if path == nil || n.read == nil {
		return n.own.Validate(ctx, path, nil, obj, nil, budget)
	}
	*buf = (*buf)[:0]
	var ok bool
	if *buf, ok = appendRead(*buf, obj, n.read); !ok {
		return n.own.Validate(ctx, path, nil, obj, nil, budget)
	}
	key := memoKey{node: n, own: true, sum: sha256.Sum256(*buf)}
	m.mu.RLock()
	e, hit := m.cache[key]
	m.mu.RUnlock()
	if hit && budget > e.cost {
		return e.at(path.String()), budget - e.cost
	}
	start := budget
	errs, budget := n.own.Validate(ctx, path, nil, obj, nil, budget)
	m.remember(key, path, errs, start, budget)
	return errs, budget
}

// remember keeps what a node gave, unless it ran out of budget.
func (m *celMemo) remember(key memoKey, path *field.Path, errs field.ErrorList, start, budget int64) {
	if budget < 0 {
		return
	}
	if e, ok := newMemoEntry(path.String(), errs, start-budget); ok {
		m.mu.Lock()
		if len(m.cache) >= memoMaxEntries {
			clear(m.cache)
		}
		m.cache[key] = e
		m.mu.Unlock()
	}
}

// newMemoEntry keeps copies of the errors found at path; not when one of them is not
// under path (it could not be moved).
func newMemoEntry(path string, errs field.ErrorList, cost int64) (memoEntry, bool) {
	e := memoEntry{path: path, cost: cost}
	if len(errs) > 0 {
		e.errs = make([]field.Error, len(errs))
	}
	for i, err := range errs {
		if !under(err.Field, path) {
			return memoEntry{}, false
		}
		e.errs[i] = *err
	}
	return e, true
}

// under reports whether field path f is p or below it.
func under(f, p string) bool {
	if !strings.HasPrefix(f, p) {
		return false
	}
	return len(f) == len(p) || f[len(p)] == '.' || f[len(p)] == '['
}

// at is the entry's errors found at path instead.
func (e memoEntry) at(path string) field.ErrorList {
	if len(e.errs) == 0 {
		return nil
	}
	out := make(field.ErrorList, len(e.errs))
	for i := range e.errs {
		err := e.errs[i]
		err.Field = path + err.Field[len(e.path):]
		out[i] = &err
	}
	return out
}

// appendCanonical appends a value of an unstructured object in a form that tells apart
// every two values a CEL rule could tell apart: types are tagged, strings and collections
// prefixed with their length, map keys sorted. Values of any other Go type are not
// encoded (false): such a part is not remembered.
func appendCanonical(b []byte, v any) ([]byte, bool) {
	switch x := v.(type) {
	case nil:
		return append(b, 'n'), true
	case bool:
		if x {
			return append(b, 't'), true
		}
		return append(b, 'f'), true
	case string:
		b = append(b, 's')
		b = binary.AppendUvarint(b, uint64(len(x)))
		return append(b, x...), true
	case int64:
		b = append(b, 'i')
		return binary.AppendVarint(b, x), true
	case float64:
		b = append(b, 'd')
		return binary.BigEndian.AppendUint64(b, math.Float64bits(x)), true
	case []any:
		b = append(b, 'a')
		b = binary.AppendUvarint(b, uint64(len(x)))
		for _, e := range x {
			var ok bool
			if b, ok = appendCanonical(b, e); !ok {
				return b, false
			}
		}
		return b, true
	case map[string]any:
		b = append(b, 'm')
		b = binary.AppendUvarint(b, uint64(len(x)))
		var small [16]string
		for _, k := range sortedKeys(x, small[:0]) {
			b = appendKey(b, k)
			var ok bool
			if b, ok = appendCanonical(b, x[k]); !ok {
				return b, false
			}
		}
		return b, true
	}
	return b, false
}

// noCELMemo runs the CEL validator without celMemo (tests compare the two).
var noCELMemo = false

// sortedKeys appends m's keys to buf, sorted.
func sortedKeys(m map[string]any, buf []string) []string {
	for k := range m {
		buf = append(buf, k)
	}
	slices.Sort(buf)
	return buf
}

// appendKey appends a map key, prefixed with its length.
func appendKey(b []byte, k string) []byte {
	b = binary.AppendUvarint(b, uint64(len(k)))
	return append(b, k...)
}
