package patch

import (
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"

	egv1a1 "github.com/envoyproxy/gateway/api/v1alpha1"
	jsonpatch "github.com/evanphx/json-patch/v5"
	"github.com/ohler55/ojg/jp"
	"github.com/ohler55/ojg/oj"
)

// applyOptions are EG's: an `add` creates the objects missing on its path, so adding a field
// inside an absent message is not a miss (the result may still be an invalid resource).
var applyOptions = func() *jsonpatch.ApplyOptions {
	o := jsonpatch.NewApplyOptions()
	o.EnsurePathExistsOnAdd = true
	return o
}()

// applyOperation applies one RFC 6902 operation to doc. With a jsonPath the operation runs
// at every location it selects (with path appended), in the order the JSONPath library
// finds them. On failure it returns the miss reason of the first error and every error in
// EG's wording; the caller then keeps the resource as it was.
func applyOperation(doc []byte, op egv1a1.JSONPatchOperation) ([]byte, string, []string) {
	var pointers []string
	if op.JSONPath != nil {
		suffix := ""
		if op.Path != nil {
			suffix = *op.Path
		}
		var err error
		pointers, err = pointersOf(doc, *op.JSONPath, suffix)
		if err != nil {
			return nil, ReasonInvalidOperation,
				[]string{fmt.Sprintf("unable to convert jsonPath: '%s' into jsonPointers, err: %s", *op.JSONPath, err)}
		}
		if len(pointers) == 0 {
			return nil, ReasonNoPath, []string{fmt.Sprintf("no jsonPointers were found while evaluating the jsonPath: '%s'. "+
				"Ensure the elements you are trying to select with the jsonPath exist in the document. "+
				"If you need to add a non-existing property, use the 'path' attribute", *op.JSONPath)}
		}
	} else {
		pointers = []string{*op.Path}
	}
	reason := ""
	var errs []string
	for _, ptr := range pointers {
		o := jsonpatch.Operation{"op": rawString(string(op.Op)), "path": rawString(ptr)}
		if op.From != nil {
			o["from"] = rawString(*op.From)
		}
		if op.Value != nil {
			v := json.RawMessage("null")
			if len(op.Value.Raw) > 0 {
				v = append(json.RawMessage(nil), op.Value.Raw...)
			}
			o["value"] = &v
		}
		next, err := jsonpatch.Patch{o}.ApplyWithOptions(doc, applyOptions)
		if err != nil {
			if reason == "" {
				reason = reasonOf(err)
			}
			errs = append(errs, fmt.Sprintf("unable to apply patch: op=%s path=%s err: %s", op.Op, ptr, err))
			continue
		}
		doc = next
	}
	return doc, reason, errs
}

func rawString(s string) *json.RawMessage {
	b, _ := json.Marshal(s) // a string always marshals
	r := json.RawMessage(b)
	return &r
}

// pointersOf evaluates a JSONPath on doc and returns the RFC 6901 pointers of what it
// selects, each followed by suffix. A JSONPath of the root alone selects nothing a patch
// could address, so it is an error, as in EG.
func pointersOf(doc []byte, path, suffix string) (ptrs []string, err error) {
	defer func() {
		// The JSONPath library is fed user input; a panic there is this operation's error.
		if r := recover(); r != nil {
			ptrs, err = nil, fmt.Errorf("the JSONPath cannot be evaluated: %v", r)
		}
	}()
	data, err := oj.Parse(doc)
	if err != nil {
		return nil, fmt.Errorf("Error during parsing json: %w", err)
	}
	x, err := jp.ParseString(path)
	if err != nil {
		return nil, fmt.Errorf("Error during parsing jpath: %w", err)
	}
	if len(x) == 1 {
		if _, ok := x[0].(jp.Root); ok {
			return nil, errors.New("Using only Root ('$') in json path expression is not allowed!")
		}
	}
	ptrs = []string{}
	for _, loc := range x.Locate(data, 0) {
		p, err := pointerOf(loc)
		if err != nil {
			return nil, fmt.Errorf("Error during converting path to pointer: %w", err)
		}
		ptrs = append(ptrs, join(p, suffix))
	}
	return ptrs, nil
}

// pointerOf turns a located (normalized) JSONPath into a JSON pointer.
func pointerOf(x jp.Expr) (string, error) {
	var b strings.Builder
	for _, f := range x {
		switch v := f.(type) {
		case jp.Root:
		case jp.Nth:
			b.WriteByte('/')
			b.WriteString(strconv.Itoa(int(v)))
		case jp.Child:
			b.WriteByte('/')
			b.WriteString(strings.NewReplacer("~", "~0", "/", "~1").Replace(string(v)))
		default:
			return "", fmt.Errorf("There is no conversion implemented for %T", f)
		}
	}
	return b.String(), nil
}

// join appends a path to a pointer with exactly one slash between them.
func join(ptr, suffix string) string {
	if suffix == "" {
		return ptr
	}
	return strings.TrimSuffix(ptr, "/") + "/" + strings.TrimPrefix(suffix, "/")
}
