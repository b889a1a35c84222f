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

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/egharness/egharness/internal/parallel"
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
func Review(objs []resource.Object, p profile.Profile) ([]result.Admission, []resource.Object, []string, error) {
	set, err := crds.ForRelease(p.CRDRelease())
	if err != nil {
		return nil, nil, nil, fmt.Errorf("profile %s: %w", p.Name, err)
	}
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
			v, err := set.Admit(o.Raw)
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
