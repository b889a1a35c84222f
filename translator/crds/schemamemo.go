package crds

import (
	"crypto/sha256"
	"reflect"
	"sync"
	"sync/atomic"

	apiservervalidation "k8s.io/apiextensions-apiserver/pkg/apiserver/validation"
	"k8s.io/kube-openapi/pkg/validation/spec"
	"k8s.io/kube-openapi/pkg/validation/strfmt"
	"k8s.io/kube-openapi/pkg/validation/validate"
)

// schemaMemo is the API server's OpenAPI schema validator (kube-openapi's
// validate.SchemaValidator, as apiextensions-apiserver builds it for a create) with the
// answers of repeated parts of objects remembered. The schema validator answers a value
// from the value and its schema node alone (the field path only goes into the words of
// its errors), and real files repeat the same rule, match, backendRef or retry policy in
// thousands of objects, so the validation of a part seen before is skipped.
//
// The validator walks an object's properties and list items through two public hooks,
// SchemaValidatorOptions.NewValidatorForField and NewValidatorForIndex (the API server's
// own ratcheting validator follows the walk the same way). schemaMemo installs them: the
// child validator it returns keys the child's value (a typed, key-sorted SHA-256, the one
// celMemo uses) with the child's schema node, and on a miss runs validate.NewSchemaValidator
// on the child itself, with the hooks again for the child's own children.
//
// Only answers without errors or warnings are remembered: such a validate.Result holds
// nothing but its MatchCount (how many validators applied, which depends on the value and
// the node only), so it reads the same at any field path. An answer with errors carries
// its field path in words kube-openapi formats into unexported fields (errors.Validation's
// message), which cannot be moved to another path without rebuilding kube-openapi's
// errors; such a part is validated in full every time, as before. Real inputs are
// mostly valid, so this is where the time was.
//
// The schema node's identity: for list items and additionalProperties the validator passes
// the schema's own pointer, but for a property it passes a pointer to a range copy of the
// properties map's value (a new address every call). So the memo builds its own tree of
// nodes from the schema once (properties by name, items, additionalProperties) and each
// child validator knows its parent node: a field is a property of the parent when the
// parent's schema lists it (the schema pointer is then checked to be no additionalProperties
// one), an index is the parent's item when the schema pointer is the parent's Items.Schema.
// Anything else (patternProperties, tuple items, additionalItems; structural schemas have
// none) is validated by the validator's own child, as without the memo. Children inside
// allOf, anyOf, oneOf and not are created by kube-openapi without the hooks
// (SchemaValidatorOptions.Options() passes none on), so they are never remembered apart
// from the node that holds them.
type schemaMemo struct {
	schema *spec.Schema
	root   *schemaNode
	// plain is the validator apiextensions-apiserver built, used for updates (ratcheting
	// needs the old object) and when noSchemaMemo is set.
	plain apiservervalidation.SchemaValidator

	mu    sync.RWMutex
	cache map[schemaKey]int // MatchCount of an answer without errors or warnings
}

// schemaNode is one node of the schema: the children the validator's hooks ask for.
type schemaNode struct {
	schema *spec.Schema
	props  map[string]*schemaNode
	items  *schemaNode
	addl   *schemaNode
}

type schemaKey struct {
	node *schemaNode
	sum  [sha256.Size]byte
}

// schemaMemoHits counts the answers taken from memory (tests check the memo is used).
var schemaMemoHits atomic.Int64

// noSchemaMemo runs the schema validator without schemaMemo (tests compare the two).
var noSchemaMemo = false

func newSchemaMemo(schema *spec.Schema, plain apiservervalidation.SchemaValidator) *schemaMemo {
	return &schemaMemo{schema: schema, root: newSchemaNode(schema), plain: plain, cache: map[schemaKey]int{}}
}

func newSchemaNode(s *spec.Schema) *schemaNode {
	if s == nil {
		return nil
	}
	n := &schemaNode{schema: s}
	if len(s.Properties) > 0 {
		n.props = make(map[string]*schemaNode, len(s.Properties))
		for k := range s.Properties {
			p := s.Properties[k]
			n.props[k] = newSchemaNode(&p)
		}
	}
	if s.Items != nil && s.Items.Schema != nil {
		n.items = newSchemaNode(s.Items.Schema)
	}
	if s.AdditionalProperties != nil && s.AdditionalProperties.Schema != nil {
		n.addl = newSchemaNode(s.AdditionalProperties.Schema)
	}
	return n
}

// Validate is the validator of a create, as apiextensions-apiserver runs it (both its
// plain and its ratcheting validator build validate.NewSchemaValidator(schema, nil, "",
// strfmt.Default) for a create), with the hooks installed. The root itself is not
// remembered (it holds metadata.name, which differs).
func (m *schemaMemo) Validate(value any, options ...apiservervalidation.ValidationOption) *validate.Result {
	if noSchemaMemo {
		return m.plain.Validate(value, options...)
	}
	var buf []byte
	return validate.NewSchemaValidator(m.schema, nil, "", strfmt.Default, m.hooks(m.root, &buf)).Validate(value)
}

// ValidateUpdate is the API server's own (the harness admits creates only).
func (m *schemaMemo) ValidateUpdate(value, old any, options ...apiservervalidation.ValidationOption) *validate.Result {
	return m.plain.ValidateUpdate(value, old, options...)
}

// hooks are the options that make a validator of node n create its children through the
// memo. buf is the scratch buffer of the value encoding, one per top-level call (a walk is
// sequential; admissions in parallel each have their own).
func (m *schemaMemo) hooks(n *schemaNode, buf *[]byte) validate.Option {
	return func(o *validate.SchemaValidatorOptions) {
		o.NewValidatorForField = func(field string, schema *spec.Schema, rootSchema any, path string,
			formats strfmt.Registry, opts ...validate.Option) validate.ValueValidator {
			var child *schemaNode
			if ap := n.schema.AdditionalProperties; ap != nil && ap.Schema == schema {
				child = n.addl
			} else if len(n.schema.PatternProperties) == 0 {
				// a property (the validator also asks for patternProperties by field name)
				child = n.props[field]
			}
			if child == nil {
				return validate.NewSchemaValidator(schema, rootSchema, path, formats, opts...)
			}
			return &memoValidator{m: m, node: child, schema: schema, root: rootSchema, path: path, formats: formats,
				buf: buf}
		}
		o.NewValidatorForIndex = func(index int, schema *spec.Schema, rootSchema any, path string,
			formats strfmt.Registry, opts ...validate.Option) validate.ValueValidator {
			if n.items == nil || n.schema.Items == nil || n.schema.Items.Schema != schema {
				return validate.NewSchemaValidator(schema, rootSchema, path, formats, opts...)
			}
			return &memoValidator{m: m, node: n.items, schema: schema, root: rootSchema, path: path, formats: formats,
				buf: buf}
		}
	}
}

// memoValidator is the validator of one child value: the arguments kube-openapi would have
// created validate.NewSchemaValidator with, and the child's node.
type memoValidator struct {
	m       *schemaMemo
	node    *schemaNode
	schema  *spec.Schema
	root    any
	path    string
	formats strfmt.Registry
	buf     *[]byte
}

func (v *memoValidator) Validate(data any) *validate.Result {
	m := v.m
	*v.buf = (*v.buf)[:0]
	var ok bool
	var key schemaKey
	if *v.buf, ok = appendCanonical(*v.buf, data); ok {
		key = schemaKey{node: v.node, sum: sha256.Sum256(*v.buf)}
		m.mu.RLock()
		count, hit := m.cache[key]
		m.mu.RUnlock()
		if hit {
			schemaMemoHits.Add(1)
			return &validate.Result{MatchCount: count}
		}
	}
	res := validate.NewSchemaValidator(v.schema, v.root, v.path, v.formats, m.hooks(v.node, v.buf)).Validate(data)
	if ok && len(res.Errors) == 0 && len(res.Warnings) == 0 {
		m.mu.Lock()
		if len(m.cache) >= memoMaxEntries {
			clear(m.cache)
		}
		m.cache[key] = res.MatchCount
		m.mu.Unlock()
	}
	return res
}

// SetPath and Applies make memoValidator a validate.ValueValidator; kube-openapi calls only
// Validate on the validators its hooks return.
func (v *memoValidator) SetPath(path string) { v.path = path }

func (v *memoValidator) Applies(source any, _ reflect.Kind) bool {
	_, ok := source.(*spec.Schema)
	return ok
}
