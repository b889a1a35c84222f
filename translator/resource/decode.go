package resource

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	goruntime "runtime"
	"strings"
	"time"

	egv1a1 "github.com/envoyproxy/gateway/api/v1alpha1"
	"go.yaml.in/yaml/v3"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	kjson "sigs.k8s.io/json"

	"github.com/egharness/egharness/internal/parallel"
	"github.com/egharness/egharness/internal/yamlpos"
)

// Options tune Decode.
type Options struct {
	// SkipUnknownKinds turns unknown kinds into notes instead of errors (cluster dumps).
	SkipUnknownKinds bool
	// LineOffset is added to line numbers (the text starts at this line + 1 of File).
	LineOffset int
	// DefaultNamespace is given to namespaced objects that name none ("default" when empty,
	// as kubectl apply does; egctl x translate uses "envoy-gateway-system").
	DefaultNamespace string
	// StrictTypes also reads objects of the CRD-defined groups strictly against their Go
	// types (EG v1.9.1's and Gateway API v1.6.1's): an unknown field, a field of the wrong
	// type or an unknown kind is recorded in the object's DecodeErr with its line, even
	// where the object decodes leniently. The scenario loader makes it an error unless the
	// scenario expects the API server to refuse that object: otherwise it is a typo.
	StrictTypes bool
	// Limits bound the file: size, objects, nesting depth, alias expansion (zero fields
	// take the defaults).
	Limits
	// JSONCache, when set, keeps documents' JSON forms for the next Decode of the same
	// file (jsoncache.go).
	JSONCache *JSONCache
}

// maxErrors is how many problems Decode reports before it stops reading: a file of a
// million broken documents gets a readable answer.
const maxErrors = 100

// Decoded is what Decode returns.
type Decoded struct {
	Objects []Object
	// EnvoyGateway is the EnvoyGateway configuration document, when the input holds one.
	// It has no object metadata, so it is kept apart from Objects.
	EnvoyGateway *egv1a1.EnvoyGateway
	Notes        []string // skipped documents, when SkipUnknownKinds is set
}

// Decode reads multi-document YAML. Every bad document is reported (joined), each error
// naming file, line and object; good documents are still returned.
func Decode(file string, data []byte, opts Options) (Decoded, error) {
	var out Decoded
	lim := opts.Limits.Resolved()
	if lim.MaxFileSize >= 0 && int64(len(data)) > lim.MaxFileSize {
		return out, fileSizeError(file, lim.MaxFileSize)
	}
	data = unixBreaks(bytes.TrimPrefix(data, bomUTF8))
	var errs []error
	seen := map[Ref]int{}
	var aliasBytes int64
	count := 0
	add := func(line int, text, js []byte, tm typeMeta, pre *prefetched) {
		if tm.isEnvoyGateway() {
			cfg, err := decodeEnvoyGateway(file, line, text, js)
			switch {
			case err != nil:
				errs = append(errs, err)
			case out.EnvoyGateway != nil:
				errs = append(errs, fmt.Errorf("%s:%d: EnvoyGateway: a second EnvoyGateway configuration document", file, line))
			default:
				out.EnvoyGateway = cfg
			}
			return
		}
		var obj Object
		var skipped string
		var err error
		if pre != nil && pre.decoded {
			obj, skipped, err = pre.obj, pre.skipped, pre.decodeErr
		} else {
			obj, skipped, err = decodeOne(file, line, text, js, tm, opts)
		}
		if err != nil {
			errs = append(errs, err)
			return
		}
		if skipped != "" {
			out.Notes = append(out.Notes, skipped)
			return
		}
		ref := obj.Ref()
		if first, dup := seen[ref]; dup {
			errs = append(errs, fmt.Errorf("%s:%d: %s: duplicate object (first defined at line %d)", file, line, ref, first))
			return
		}
		seen[ref] = line
		out.Objects = append(out.Objects, obj)
	}
	docs := splitStream(data)
	defer opts.JSONCache.turn()
	pre := prefetch(file, docs, opts, lim)
	for i, doc := range docs {
		line := doc.line + opts.LineOffset
		if isBlank(doc.text) {
			continue
		}
		if count++; lim.MaxObjects >= 0 && count > lim.MaxObjects {
			errs = append(errs, objectsError(file, line, lim.MaxObjects))
			break
		}
		if len(errs) >= maxErrors {
			errs = append(errs, fmt.Errorf("%s:%d: stopped reading after %d errors", file, line, maxErrors))
			break
		}
		var js []byte
		var tm typeMeta
		var err error
		if pre[i] != nil {
			js, tm, err = pre[i].js, pre[i].tm, pre[i].err
		} else {
			js, tm, err = identify(file, line, doc.text, lim, &aliasBytes, opts.JSONCache)
		}
		if err != nil {
			errs = append(errs, err)
			var le *LimitError
			if errors.As(err, &le) && le.Limit == "alias expansion" {
				break // the budget is spent: later documents would all fail alike
			}
			continue
		}
		if isList(tm) {
			count-- // the List itself is not an object; its items are
			items, err := listItems(file, line, doc.text, js)
			if err != nil {
				errs = append(errs, err)
				continue
			}
			for _, it := range items {
				if count++; lim.MaxObjects >= 0 && count > lim.MaxObjects {
					errs = append(errs, objectsError(file, it.line, lim.MaxObjects))
					break
				}
				var itm typeMeta
				if err := json.Unmarshal(it.js, &itm); err != nil {
					errs = append(errs,
						fmt.Errorf("%s:%d: %s item %d: not a Kubernetes object: %v", file, it.line, tm.Kind, it.index, jsonProblem(err)))
					continue
				}
				add(it.line, it.text, it.js, itm, nil)
			}
			continue
		}
		add(line, doc.text, js, tm, pre[i])
	}
	return out, errors.Join(errs...)
}

// isList reports a `kind: List` document (what `kubectl get -o yaml` prints for several
// objects) or a typed list such as HTTPRouteList: cluster dumps are made of them.
func isList(tm typeMeta) bool {
	return tm.Kind == "List" && tm.APIVersion == "v1" || strings.HasSuffix(tm.Kind, "List") && tm.hasItems
}

// listItem is one object of a List document: its line in the file, its YAML text (for
// error lines) and its JSON.
type listItem struct {
	index int
	line  int
	text  []byte
	js    []byte
}

// listItems splits a List document into its items.
func listItems(file string, line int, text, js []byte) ([]listItem, error) {
	var list struct {
		Kind  string            `json:"kind"`
		Items []json.RawMessage `json:"items"`
	}
	if err := json.Unmarshal(js, &list); err != nil {
		return nil, fmt.Errorf("%s:%d: %s: items must be a list of objects: %v", file, line, list.Kind, jsonProblem(err))
	}
	root, err := yamlpos.Parse(text)
	if err != nil {
		return nil, syntaxErr(file, line, err)
	}
	var nodes []*yaml.Node
	for i := 0; i+1 < len(root.Content); i += 2 {
		if root.Content[i].Value == "items" && root.Content[i+1].Kind == yaml.SequenceNode {
			nodes = root.Content[i+1].Content
		}
	}
	out := make([]listItem, 0, len(list.Items))
	for i, item := range list.Items {
		it := listItem{index: i, line: line, js: item, text: item}
		if i < len(nodes) {
			it.line = line + nodes[i].Line - 1
			if y, err := yaml.Marshal(nodes[i]); err == nil {
				it.text = y
			}
		}
		out = append(out, it)
	}
	return out, nil
}

// prefetched is the part of a document's decoding that depends on nothing but the document:
// its JSON form, identity and typed decode. Decode computes it for many documents at once
// and then assembles the results in file order, so the output is the same as one by one.
type prefetched struct {
	js  []byte
	tm  typeMeta
	err error

	decoded   bool // obj, skipped and decodeErr are set
	obj       Object
	skipped   string
	decodeErr error
}

// prefetchMin is the number of documents from which decoding runs on every core.
const prefetchMin = 64

// prefetch decodes the documents of a large file on every core. Documents that may hold
// aliases are left to the sequential pass (their expansion counts against a budget shared
// with the documents before them), as are those past the object limit.
func prefetch(file string, docs []document, opts Options, lim Limits) []*prefetched {
	out := make([]*prefetched, len(docs))
	workers := goruntime.GOMAXPROCS(0)
	if len(docs) < prefetchMin || workers < 2 {
		return out
	}
	var todo []int
	for i, d := range docs {
		if lim.MaxObjects >= 0 && len(todo) > lim.MaxObjects {
			break
		}
		if !isBlank(d.text) && !yamlpos.MayHaveAliases(d.text) {
			todo = append(todo, i)
		}
	}
	parallel.Each(len(todo), func(k int) {
		i := todo[k]
		line := docs[i].line + opts.LineOffset
		var none int64
		p := &prefetched{}
		p.js, p.tm, p.err = identify(file, line, docs[i].text, lim, &none, opts.JSONCache)
		if p.err == nil && !isList(p.tm) && !p.tm.isEnvoyGateway() {
			p.decoded = true
			p.obj, p.skipped, p.decodeErr = decodeOne(file, line, docs[i].text, p.js, p.tm, opts)
		}
		out[i] = p
	})
	return out
}

// typeMeta is what identifies a document before its strict decode.
type typeMeta struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Metadata   struct {
		Name      string `json:"name"`
		Namespace string `json:"namespace"`
	} `json:"metadata"`
	hasItems bool // the document has an `items` field (a typed list such as HTTPRouteList)
}

// UnmarshalJSON reads the identifying fields and notes whether `items` is there, without
// keeping a copy of the items.
func (tm *typeMeta) UnmarshalJSON(b []byte) error {
	type plain typeMeta
	var v struct {
		plain
		Items present `json:"items"`
	}
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	*tm = typeMeta(v.plain)
	tm.hasItems = bool(v.Items)
	return nil
}

// isEnvoyGateway reports EG's configuration document, which is read apart from the objects.
func (tm typeMeta) isEnvoyGateway() bool {
	return tm.Kind == egv1a1.KindEnvoyGateway && tm.APIVersion == egv1a1.GroupVersion.String()
}

// present records that a JSON field was there, whatever its value.
type present bool

func (p *present) UnmarshalJSON([]byte) error { *p = true; return nil }

// identify converts a document to JSON (its only YAML parse on the happy path) and reads
// its apiVersion, kind and name. Aliases are measured before the conversion expands them
// (aliasBytes is what earlier documents of the file used), nesting after it.
func identify(file string, line int, text []byte, lim Limits, aliasBytes *int64, cache *JSONCache) ([]byte, typeMeta,
	error) {
	var tm typeMeta
	cacheable := cache != nil && !yamlpos.MayHaveAliases(text)
	if cacheable {
		if e, ok := cache.get(text); ok {
			return e.js, e.tm, nil
		}
	}
	if lim.MaxAliasExpansion >= 0 {
		added, err := yamlpos.CheckAliases(text, lim.MaxAliasExpansion-*aliasBytes)
		*aliasBytes += added
		if err != nil {
			var le *yamlpos.LimitError
			if errors.As(err, &le) {
				return nil, tm, limitErr(file, line-1, lim, err)
			}
			return nil, tm, syntaxErr(file, line, err)
		}
	}
	js, err := yamlpos.ToJSON(text)
	if err != nil {
		return nil, tm, syntaxErr(file, line, err)
	}
	if lim.MaxDepth >= 0 && yamlpos.JSONDepth(js) > lim.MaxDepth {
		l := yamlpos.DepthLine(text, lim.MaxDepth)
		if l == 0 {
			l = 1
		}
		return nil, tm, depthError(file, l+line-1, lim.MaxDepth)
	}
	if err := json.Unmarshal(js, &tm); err != nil {
		hint := ""
		if bytes.HasPrefix(bytes.TrimSpace(text), []byte("[")) { // a JSON array, not a YAML sequence
			hint = ` (objects in a JSON array, as jq -s writes them, are read once wrapped as a List: {"apiVersion": "v1", ` +
				`"kind": "List", "items": [...]})`
		}
		return nil, tm,
			fmt.Errorf("%s:%d: not a Kubernetes object (a mapping with apiVersion, kind and metadata): %v%s", file, line,
				jsonProblem(err), hint)
	}
	if cacheable {
		cache.put(text, js, tm)
	}
	return js, tm, nil
}

// syntaxErr words a YAML syntax error of the document starting at line of file.
func syntaxErr(file string, line int, err error) error {
	var e *yamlpos.Error
	if errors.As(err, &e) {
		l, msg := e.Line, e.Msg
		if l == 0 {
			l, msg = 1, msg+" (in the document starting on this line)"
		}
		return fmt.Errorf("%s:%d: %s", file, l+line-1, msg)
	}
	return fmt.Errorf("%s:%d: %v", file, line, err)
}

// jsonProblem words a loose decode failure without Go type names where it can.
func jsonProblem(err error) string {
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		if te.Field == "" {
			return "the document is " + article(te.Value) + ", not a mapping"
		}
		return te.Field + " is " + article(te.Value)
	}
	return err.Error()
}

// article puts "a" or "an" before a JSON kind ("an array", "a string").
func article(kind string) string {
	if kind != "" && strings.ContainsRune("aeiou", rune(kind[0])) {
		return "an " + kind
	}
	return "a " + kind
}

func decodeOne(file string, line int, text, js []byte, tm typeMeta, opts Options) (Object, string, error) {
	what := strings.TrimSpace(fmt.Sprintf("%s %s", tm.Kind, nsName(tm.Metadata.Namespace, tm.Metadata.Name)))
	switch {
	case tm.Kind == "" || tm.APIVersion == "":
		return Object{}, "", fmt.Errorf("%s:%d: %s: apiVersion and kind are required", file, line, orUnnamed(what))
	case tm.Metadata.Name == "" && CRDGroup(gvGroup(tm.APIVersion)):
		return Object{}, "", fmt.Errorf("%s:%d: %s: metadata.name is required", file, line, tm.Kind)
	case CRDGroup(gvGroup(tm.APIVersion)):
		// The API server decides on these (admission, against the CRDs of the profile's
		// release): unknown fields, wrong types and unserved kinds or versions are its
		// refusals, not reading errors.
		return decodeGoverned(file, line, text, js, tm, opts), "", nil
	case !KnownKind(tm.APIVersion, tm.Kind):
		if opts.SkipUnknownKinds {
			return Object{},
				fmt.Sprintf("%s:%d: skipped %s (%s): not a kind egharness translates", file, line, what, tm.APIVersion), nil
		}
		return Object{}, "",
			fmt.Errorf("%s:%d: %s: unknown kind %q in %q (known: %s)", file, line, what, tm.Kind, tm.APIVersion,
				strings.Join(knownKinds(), ", "))
	case tm.Metadata.Name == "":
		return Object{}, "", fmt.Errorf("%s:%d: %s: metadata.name is required", file, line, tm.Kind)
	}
	gv, _ := schema.ParseGroupVersion(tm.APIVersion)
	ro, err := scheme().New(gv.WithKind(tm.Kind))
	if err != nil {
		return Object{}, "", fmt.Errorf("%s:%d: %s: %v", file, line, what, err)
	}
	ko, ok := ro.(KObject)
	if !ok {
		return Object{}, "", fmt.Errorf("%s:%d: %s: not an object with metadata", file, line, what)
	}
	if err := yamlpos.DecodeJSONStrict(js, text, ko, line-1); err != nil {
		return Object{}, "", prefixEach(file, line, what, err)
	}
	if !ClusterScoped(tm.Kind) && ko.GetNamespace() == "" {
		ns := opts.DefaultNamespace
		if ns == "" {
			ns = "default"
		}
		ko.SetNamespace(ns)
	}
	if ClusterScoped(tm.Kind) && ko.GetNamespace() != "" {
		return Object{}, "", fmt.Errorf("%s:%d: %s: %s is cluster-scoped and takes no namespace", file, line, what, tm.Kind)
	}
	return Object{Obj: ko, APIVersion: tm.APIVersion, Kind: tm.Kind, File: file, Line: line}, "", nil
}

// decodeGoverned decodes an object of a CRD-defined group leniently: unknown fields are
// left out of Obj (Raw keeps them for admission), and a document that does not fit its Go
// type, or whose kind has none, becomes an identity-only object carrying DecodeErr.
func decodeGoverned(file string, line int, text, js []byte, tm typeMeta, opts Options) Object {
	o := Object{APIVersion: tm.APIVersion, Kind: tm.Kind, File: file, Line: line, Raw: js}
	what := strings.TrimSpace(fmt.Sprintf("%s %s", tm.Kind, nsName(tm.Metadata.Namespace, tm.Metadata.Name)))
	ko, err := NewTyped(tm.APIVersion, tm.Kind)
	switch {
	case err != nil:
		o.DecodeErr = fmt.Errorf("%s:%d: %s: unknown kind %q in %q (known: %s)", file, line, what, tm.Kind, tm.APIVersion,
			strings.Join(knownKinds(), ", "))
		ko = nil
	case opts.StrictTypes:
		// Strictly, with the line of each problem; unknown fields are problems too.
		if serr := yamlpos.DecodeJSONStrict(js, text, ko, line-1); serr != nil {
			o.DecodeErr = prefixEach(file, line, what, serr)
			// What fits is kept when only unknown fields are wrong.
			ko, _ = NewTyped(tm.APIVersion, tm.Kind)
			if kjson.UnmarshalCaseSensitivePreserveInts(js, ko) != nil {
				ko = nil
			}
		}
	default:
		if err := kjson.UnmarshalCaseSensitivePreserveInts(js, ko); err != nil {
			// The strict decode again, for the line of each problem.
			fresh, _ := NewTyped(tm.APIVersion, tm.Kind)
			if serr := yamlpos.DecodeJSONStrict(js, text, fresh, line-1); serr != nil {
				err = serr
			}
			o.DecodeErr = prefixEach(file, line, what, err)
			ko = nil
		}
	}
	if ko == nil {
		u := &unstructured.Unstructured{}
		u.SetAPIVersion(tm.APIVersion)
		u.SetKind(tm.Kind)
		u.SetName(tm.Metadata.Name)
		u.SetNamespace(tm.Metadata.Namespace)
		ko = u
	}
	if ClusterScoped(tm.Kind) {
		// The API server clears the namespace of a cluster-scoped object; strictly it is
		// a mistake.
		if ns := ko.GetNamespace(); ns != "" && opts.StrictTypes && o.DecodeErr == nil {
			o.DecodeErr = fmt.Errorf("%s:%d: %s: %s is cluster-scoped and takes no namespace", file, line, what, tm.Kind)
		}
		ko.SetNamespace("")
	} else if ko.GetNamespace() == "" {
		ns := opts.DefaultNamespace
		if ns == "" {
			ns = "default"
		}
		ko.SetNamespace(ns)
	}
	o.Obj = ko
	return o
}

func nsName(ns, name string) string {
	switch {
	case name == "":
		return ""
	case ns == "":
		return name
	}
	return ns + "/" + name
}

func orUnnamed(s string) string {
	if s == "" {
		return "document"
	}
	return s
}

// prefixEach puts "file:line: what: " before each joined error: the problem's own line,
// or the document's when the problem has none.
func prefixEach(file string, line int, what string, err error) error {
	var parts []error
	var list interface{ Unwrap() []error }
	if errors.As(err, &list) {
		parts = list.Unwrap()
	} else {
		parts = []error{err}
	}
	out := make([]error, 0, len(parts))
	for _, p := range parts {
		var e *yamlpos.Error
		if errors.As(p, &e) {
			l := e.Line
			if l <= 0 {
				l = line
			}
			out = append(out, fmt.Errorf("%s:%d: %s: %s", file, l, what, e.Msg))
			continue
		}
		out = append(out, fmt.Errorf("%s:%d: %s: %v", file, line, what, p))
	}
	return errors.Join(out...)
}

// AssignTimestamps gives every object without a creationTimestamp a deterministic one:
// base plus one second per position in objs. Precedence rules compare creation times, so
// "file order is age order" is the documented default for scenarios.
func AssignTimestamps(objs []Object, base time.Time) {
	for i, o := range objs {
		if ts := o.Obj.GetCreationTimestamp(); ts.IsZero() {
			o.Obj.SetCreationTimestamp(metav1.NewTime(base.Add(time.Duration(i) * time.Second)))
		}
	}
}

// DefaultEpoch is the base of assigned creation timestamps.
var DefaultEpoch = time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)

// decodeEnvoyGateway decodes an EnvoyGateway configuration document.
func decodeEnvoyGateway(file string, line int, text, js []byte) (*egv1a1.EnvoyGateway, error) {
	var cfg egv1a1.EnvoyGateway
	if err := yamlpos.DecodeJSONStrict(js, text, &cfg, line-1); err != nil {
		return nil, prefixEach(file, line, "EnvoyGateway", err)
	}
	return &cfg, nil
}
