// Package admission is the first stage of the reference translator: what the Kubernetes API
// server would refuse on create, with its message, and the objects it admits as it stores
// them. EG has no admission webhook, so the CRDs of the profile's release (translator/crds)
// are the whole of it: every OpenAPI constraint and CEL rule, strict field validation,
// defaulting and ObjectMeta rules. A refused object never reaches translation.
package admission

import (
	"errors"
	"fmt"
	"runtime/debug"
	"strings"
	"sync"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/egharness/egharness/internal/parallel"
	"github.com/egharness/egharness/internal/reload"
	"github.com/egharness/egharness/translator/crds"
	"github.com/egharness/egharness/translator/profile"
	"github.com/egharness/egharness/translator/resource"
	"github.com/egharness/egharness/translator/result"
)

// Review decides every object; the allowed ones are returned for translation. Objects of
// the CRD-defined groups are decided by the real CRDs of the profile's release, as the API
// server would (crds.Set.Admit), and translated as the API server stores them (defaults
// filled in, in the storage version); the checks of this package add what no CRD can
// express. An error means the release's CRDs cannot be had, not that an object is bad.
// memo, when not nil, answers objects the previous review with it saw unchanged.
func Review(objs []resource.Object, p profile.Profile, memo *Memo) ([]result.Admission, []resource.Object, []string,
	error) {
	set, err := crds.ForRelease(p.CRDRelease())
	if err != nil {
		return nil, nil, nil, fmt.Errorf("profile %s: %w", p.Name, err)
	}
	memo.begin(p.CRDRelease())
	defer memo.end()
	type outcome struct {
		verdict  result.Admission
		obj      resource.Object
		admitted bool
		warning  string
		err      error
		panicked string
	}
	outs := make([]outcome, len(objs))
	parallel.Each(len(objs), func(i int) {
		o := objs[i]
		out := &outs[i]
		defer func() {
			// Each runs fn on goroutines of its own, where a panic would end the process:
			// it is kept and raised again on the caller's goroutine, whose recover makes it
			// this translation's error.
			if r := recover(); r != nil {
				out.panicked = fmt.Sprintf("admission of %s (%s %s): %v\n%s", o.Where(), o.APIVersion, o.Kind, r, debug.Stack())
			}
		}()
		out.verdict = result.Admission{Object: o.Ref()}
		if governed(set, o) {
			v, err := memo.admit(set, o.Raw)
			if err != nil {
				out.err = fmt.Errorf("%s: %s: %w", o.Where(), o.Ref(), err)
				return
			}
			if !v.Allowed {
				out.verdict.Message = v.Message
				return
			}
			stored, err := asStored(o, v.Object)
			if err != nil {
				// The API server takes it but it does not fit the Go type the translator
				// reads: admitted, and named rather than translated wrongly.
				out.verdict.Allowed = true
				out.warning = fmt.Sprintf("%s %s: admitted, but not translated: %v", o.Where(), o.Ref(), err)
				return
			}
			stored.Added = addedValues(set.AddedFields(o.Kind), v.Object)
			o = stored
		} else if o.DecodeErr != nil {
			out.verdict.Message = fmt.Sprintf("%s %q cannot be decoded: %v", o.Kind, o.Obj.GetName(), o.DecodeErr)
			return
		}
		out.verdict.Allowed, out.obj, out.admitted = true, o, true
	})
	verdicts := make([]result.Admission, 0, len(objs))
	admitted := make([]resource.Object, 0, len(objs))
	var warnings []string
	var errs []error
	for _, out := range outs {
		if out.panicked != "" {
			panic(out.panicked)
		}
		if out.err != nil {
			errs = append(errs, out.err)
			continue
		}
		verdicts = append(verdicts, out.verdict)
		if out.admitted {
			admitted = append(admitted, out.obj)
		}
		if out.warning != "" {
			warnings = append(warnings, out.warning)
		}
	}
	return verdicts, admitted, warnings, errors.Join(errs...)
}

// ownKinds are kinds of a CRD-defined group that no CRD of EG or Gateway API defines and
// the translator reads anyway, with the checks of this package: BackendLBPolicy, which seed
// 002 describes and neither Gateway API v1.6 nor EG v1.9 has (translator/apis/backendlb).
var ownKinds = map[string]bool{"BackendLBPolicy": true}

// governed reports whether the CRDs decide on the object.
func governed(set *crds.Set, o resource.Object) bool {
	if o.Raw == nil || ownKinds[o.Kind] {
		return false
	}
	group := o.APIVersion
	if i := strings.IndexByte(group, '/'); i >= 0 {
		group = group[:i]
	}
	return set.Governs(group)
}

// addedValues picks the values of the added fields the stored object sets.
func addedValues(paths []string, stored map[string]any) map[string]any {
	var out map[string]any
	for _, p := range paths {
		v, found, err := unstructured.NestedFieldNoCopy(stored, strings.Split(p, ".")...)
		if !found || err != nil {
			continue
		}
		if out == nil {
			out = map[string]any{}
		}
		out[p] = v
	}
	return out
}

// asStored decodes the object the API server stores into its Go type, keeping what the
// harness itself set on the object (its namespace default, for one).
func asStored(o resource.Object, stored map[string]any) (resource.Object, error) {
	u := &unstructured.Unstructured{Object: stored}
	typed, err := resource.NewTyped(u.GetAPIVersion(), u.GetKind())
	if err != nil {
		return o, err
	}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(stored, typed); err != nil {
		return o, err
	}
	if typed.GetNamespace() == "" {
		typed.SetNamespace(o.Obj.GetNamespace())
	}
	o.Obj, o.APIVersion, o.DecodeErr = typed, u.GetAPIVersion(), nil
	return o, nil
}

// Memo remembers the API server's verdicts of one review for the next: `serve --watch`
// translates a file again after each edit, and an edit changes few of its objects, while
// admission is most of the cost of a large file. An object is looked up by its JSON, as
// written, and the release of the CRDs; only the last review's verdicts are kept, so memory
// follows the file rather than its history. Safe for one review at a time.
type Memo struct {
	verdicts     reload.Cache[crds.Verdict]
	mu           sync.Mutex // guards the fields below
	release      string
	hits, misses int
}

// Stats counts the objects of the last review answered from memory (hits) and by the
// CRDs (misses).
func (m *Memo) Stats() (hits, misses int) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.hits, m.misses
}

func (m *Memo) begin(release string) {
	if m == nil {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.release != release {
		m.verdicts.Reset()
	}
	m.release, m.hits, m.misses = release, 0, 0
}

func (m *Memo) end() {
	if m == nil {
		return
	}
	m.verdicts.Turn()
}

// admit is set.Admit(raw), from memory when the previous review saw the same JSON. The
// stored object of a remembered verdict is shared: callers only read it.
func (m *Memo) admit(set *crds.Set, raw []byte) (crds.Verdict, error) {
	if m == nil {
		return set.Admit(raw)
	}
	key := string(raw)
	if v, ok := m.verdicts.Get(key); ok {
		m.count(&m.hits)
		return v, nil
	}
	v, err := set.Admit(raw)
	if err != nil {
		return v, err
	}
	m.verdicts.Put(key, v)
	m.count(&m.misses)
	return v, nil
}

func (m *Memo) count(n *int) {
	m.mu.Lock()
	*n++
	m.mu.Unlock()
}
