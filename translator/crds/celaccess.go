package crds

import (
	"encoding/binary"
	"slices"

	"github.com/google/cel-go/common"
	"github.com/google/cel-go/common/ast"
	"github.com/google/cel-go/parser"
	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
	celvalidation "k8s.io/apiextensions-apiserver/pkg/apiserver/schema/cel"
)

// A node's own rules (its x-kubernetes-validations) read only parts of self: the filter of
// an HTTPRoute rule asks has(self.requestHeaderModifier) and compares self.type, never what
// the header modifier holds. So two values whose read parts are the same get the same
// errors at the same cost from those rules, even when the whole values differ (a header
// value naming the route, as in most real files). celMemo keys a node's own answer by the
// parts its rules read (access), found from the rules' syntax trees, and still walks the
// children, whose rules are answered on their own.
//
// The analysis is conservative: any use of a part of self it does not know (passed to a
// function, compared, an unknown macro, a map read by key, oldSelf) means the whole part is
// read; a rule it cannot parse means the whole value is.

// access is what rules read of one part of self.
type access struct {
	schema *structuralschema.Structural

	whole   bool               // the value itself (compared, printed, passed on)
	size    bool               // its size (for a string: its value)
	keys    bool               // a map's keys (iterated)
	fields  map[string]*access // properties read, each at least for its presence
	elems   *access            // a list's elements (a map's values), at any position
	ordered []string           // fields' names, sorted (set by finish)
}

// ownAccess returns what the rules of a validator node read of self, or nil when the node
// has no rules or the whole value is read (then the whole value keys the answer).
func ownAccess(v *celvalidation.Validator) *access {
	if v == nil || v.Schema == nil || len(v.Schema.XValidations) == 0 {
		return nil
	}
	root := &access{schema: v.Schema}
	an := analyzer{}
	for _, r := range v.Schema.XValidations {
		for _, text := range []string{r.Rule, r.MessageExpression} {
			if text == "" {
				continue
			}
			parsed, iss := celParser.Parse(common.NewTextSource(text))
			if iss != nil && len(iss.GetErrors()) > 0 {
				return nil
			}
			an.use(parsed.Expr(), map[string]*access{"self": root})
			if an.failed {
				return nil
			}
		}
	}
	if root.whole {
		return nil
	}
	root.finish()
	return root
}

// celParser parses with the standard macros (has, all, exists, exists_one, map, filter);
// other macros stay calls, whose arguments count as read whole.
var celParser = func() *parser.Parser {
	p, err := parser.NewParser(parser.Macros(parser.AllMacros...), parser.EnableOptionalSyntax(true))
	if err != nil {
		panic(err)
	}
	return p
}()

type analyzer struct{ failed bool }

// use marks everything evaluating e reads of self.
func (an *analyzer) use(e ast.Expr, env map[string]*access) {
	if r := an.ref(e, env); r != nil {
		r.whole = true
		return
	}
	switch e.Kind() {
	case ast.IdentKind:
		if e.AsIdent() == "oldSelf" {
			an.failed = true
		}
	case ast.SelectKind:
		s := e.AsSelect()
		if s.IsTestOnly() {
			if r := an.ref(s.Operand(), env); r != nil {
				if c := r.child(s.FieldName()); c != nil {
					return // presence: every field read is encoded with its presence
				}
				r.whole = true
				return
			}
		}
		an.use(s.Operand(), env)
	case ast.CallKind:
		c := e.AsCall()
		if c.FunctionName() == "size" {
			var arg ast.Expr
			switch {
			case c.IsMemberFunction() && len(c.Args()) == 0:
				arg = c.Target()
			case !c.IsMemberFunction() && len(c.Args()) == 1:
				arg = c.Args()[0]
			}
			if arg != nil {
				if r := an.ref(arg, env); r != nil {
					r.size = true
					return
				}
			}
		}
		if c.IsMemberFunction() {
			an.use(c.Target(), env)
		}
		for _, a := range c.Args() {
			an.use(a, env)
		}
	case ast.ComprehensionKind:
		an.comprehension(e.AsComprehension(), env)
	case ast.ListKind:
		for _, x := range e.AsList().Elements() {
			an.use(x, env)
		}
	case ast.MapKind:
		for _, x := range e.AsMap().Entries() {
			en := x.AsMapEntry()
			an.use(en.Key(), env)
			an.use(en.Value(), env)
		}
	case ast.StructKind:
		for _, x := range e.AsStruct().Fields() {
			an.use(x.AsStructField().Value(), env)
		}
	}
}

func (an *analyzer) comprehension(cm ast.ComprehensionExpr, env map[string]*access) {
	inner := make(map[string]*access, len(env)+2)
	for k, v := range env {
		inner[k] = v
	}
	// the loop's own variables shadow outer ones
	inner[cm.IterVar()] = nil
	inner[cm.AccuVar()] = nil
	if cm.HasIterVar2() {
		inner[cm.IterVar2()] = nil
	}
	switch r := an.ref(cm.IterRange(), env); {
	case r == nil:
		an.use(cm.IterRange(), env)
	case cm.HasIterVar2():
		r.whole = true
	case r.schema != nil && r.schema.Type == "array" && r.schema.Items != nil:
		inner[cm.IterVar()] = r.elem()
	case r.isMap():
		r.keys = true // the variable is a key: a string of no part of self
	default:
		r.whole = true
	}
	an.use(cm.AccuInit(), env)
	an.use(cm.LoopCondition(), inner)
	an.use(cm.LoopStep(), inner)
	an.use(cm.Result(), inner)
}

// ref returns the part of self e denotes (a variable, a field of a part, an element of a
// list part), or nil when e is not simply a part of self.
func (an *analyzer) ref(e ast.Expr, env map[string]*access) *access {
	switch e.Kind() {
	case ast.IdentKind:
		if e.AsIdent() == "oldSelf" {
			an.failed = true
		}
		return env[e.AsIdent()]
	case ast.SelectKind:
		s := e.AsSelect()
		if s.IsTestOnly() {
			return nil
		}
		if p := an.ref(s.Operand(), env); p != nil {
			if c := p.child(s.FieldName()); c != nil {
				return c
			}
			p.whole = true
		}
	case ast.CallKind:
		c := e.AsCall()
		if c.FunctionName() == "_[_]" && len(c.Args()) == 2 {
			if p := an.ref(c.Args()[0], env); p != nil {
				an.use(c.Args()[1], env)
				if p.schema != nil && p.schema.Type == "array" && p.schema.Items != nil {
					return p.elem()
				}
				p.whole = true
			}
		}
	}
	return nil
}

// child is the access of property name of an object part, or nil when the schema does not
// declare it as a property (a map, an unknown field, a preserved or int-or-string part).
func (a *access) child(name string) *access {
	if a.schema == nil || a.schema.XPreserveUnknownFields || a.schema.XIntOrString || a.schema.XEmbeddedResource {
		return nil
	}
	ps, ok := a.schema.Properties[name]
	if !ok {
		return nil
	}
	if a.fields == nil {
		a.fields = map[string]*access{}
	}
	c := a.fields[name]
	if c == nil {
		c = &access{schema: &ps}
		a.fields[name] = c
	}
	return c
}

func (a *access) elem() *access {
	if a.elems == nil {
		a.elems = &access{schema: a.schema.Items}
	}
	return a.elems
}

func (a *access) isMap() bool {
	return a.schema != nil && a.schema.Type == "object" && len(a.schema.Properties) == 0 &&
		a.schema.AdditionalProperties != nil && a.schema.AdditionalProperties.Structural != nil
}

// finish sorts the field names of the whole tree, for a stable encoding.
func (a *access) finish() {
	a.ordered = a.ordered[:0]
	for k, c := range a.fields {
		a.ordered = append(a.ordered, k)
		c.finish()
	}
	slices.Sort(a.ordered)
	if a.elems != nil {
		a.elems.finish()
	}
}

// appendRead appends what a reads of v, in a form that tells apart every two values the
// rules could tell apart: the whole value where it is read whole (appendCanonical), each
// field read with its presence, a list's length and its elements' read parts in order, a
// map's keys where they are iterated. False for values appendCanonical cannot encode.
func appendRead(b []byte, v any, a *access) ([]byte, bool) {
	if a.whole {
		return appendCanonical(b, v)
	}
	switch x := v.(type) {
	case map[string]any:
		b = append(b, 'm')
		if a.keys || a.size || a.elems != nil {
			b = binary.AppendUvarint(b, uint64(len(x)))
			for _, k := range sortedKeys(x, make([]string, 0, len(x))) {
				b = appendKey(b, k)
				if a.elems != nil {
					var ok bool
					if b, ok = appendRead(b, x[k], a.elems); !ok {
						return b, false
					}
				}
			}
		}
		for _, name := range a.ordered {
			fv, present := x[name]
			if !present {
				b = append(b, '-')
				continue
			}
			b = append(b, '+')
			var ok bool
			if b, ok = appendRead(b, fv, a.fields[name]); !ok {
				return b, false
			}
		}
		return b, true
	case []any:
		if len(a.fields) > 0 || a.keys {
			return appendCanonical(b, v)
		}
		b = append(b, 'a')
		b = binary.AppendUvarint(b, uint64(len(x)))
		if a.elems != nil {
			for _, e := range x {
				var ok bool
				if b, ok = appendRead(b, e, a.elems); !ok {
					return b, false
				}
			}
		}
		return b, true
	}
	if a.size || len(a.fields) > 0 || a.elems != nil || a.keys {
		return appendCanonical(b, v)
	}
	// only its presence is read: its type is enough
	switch v.(type) {
	case nil:
		return append(b, 'n'), true
	case bool:
		return append(b, 'b'), true
	case string:
		return append(b, 's'), true
	case int64:
		return append(b, 'i'), true
	case float64:
		return append(b, 'd'), true
	}
	return b, false
}
