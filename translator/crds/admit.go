package crds

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"k8s.io/apiextensions-apiserver/pkg/apihelpers"
	apiextensionsinternal "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
	celvalidation "k8s.io/apiextensions-apiserver/pkg/apiserver/schema/cel"
	structuraldefaulting "k8s.io/apiextensions-apiserver/pkg/apiserver/schema/defaulting"
	schemaobjectmeta "k8s.io/apiextensions-apiserver/pkg/apiserver/schema/objectmeta"
	structuralpruning "k8s.io/apiextensions-apiserver/pkg/apiserver/schema/pruning"
	apiservervalidation "k8s.io/apiextensions-apiserver/pkg/apiserver/validation"
	"k8s.io/apiextensions-apiserver/pkg/crdserverscheme"
	"k8s.io/apiextensions-apiserver/pkg/registry/customresource"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utiljson "k8s.io/apimachinery/pkg/util/json"
	"k8s.io/apimachinery/pkg/util/validation/field"
	celconfig "k8s.io/apiserver/pkg/apis/cel"
	genericapirequest "k8s.io/apiserver/pkg/endpoints/request"
	"k8s.io/apiserver/pkg/registry/rest"
)

// Verdict is what the API server answers to a create of one object.
type Verdict struct {
	Allowed bool
	// Message is the API server's refusal, word for word.
	Message string
	// Object is the admitted object as the API server stores it: unknown fields pruned,
	// defaults filled in, apiVersion the storage version.
	Object map[string]any
}

// versionValidator is everything one served version of a CRD needs to admit an object,
// built once: the structural schema (pruning, defaulting, CEL) and the custom resource
// strategy (schema validation, ObjectMeta rules, CEL rules, list-type invariants).
type versionValidator struct {
	gvk        schema.GroupVersionKind
	structural *structuralschema.Structural
	strategy   rest.RESTCreateStrategy
	namespaced bool
}

// version returns the validator of one version of the entry's CRD (nil when the CRD does
// not serve it).
func (e *entry) version(name string) (*versionValidator, error) {
	crd, err := e.parsed()
	if err != nil {
		return nil, err
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if v, ok := e.versions[name]; ok {
		return v, nil
	}
	if e.versions == nil {
		e.versions = map[string]*versionValidator{}
	}
	v, err := buildVersion(crd, name)
	if err != nil {
		return nil, fmt.Errorf("CustomResourceDefinition %s version %s: %w", crd.Name, name, err)
	}
	e.versions[name] = v // nil for a version that is not served
	return v, nil
}

func buildVersion(crd *apiextensionsv1.CustomResourceDefinition, name string) (*versionValidator, error) {
	var served *apiextensionsv1.CustomResourceDefinitionVersion
	for i := range crd.Spec.Versions {
		if crd.Spec.Versions[i].Name == name && crd.Spec.Versions[i].Served {
			served = &crd.Spec.Versions[i]
		}
	}
	if served == nil {
		return nil, nil
	}
	val, err := apihelpers.GetSchemaForVersion(crd, name)
	if err != nil {
		return nil, err
	}
	if val == nil {
		return nil, fmt.Errorf("no schema")
	}
	internal := &apiextensionsinternal.CustomResourceValidation{}
	if err := apiextensionsv1.Convert_v1_CustomResourceValidation_To_apiextensions_CustomResourceValidation(val, internal,
		nil); err != nil {
		return nil, err
	}
	ss, err := structuralschema.NewStructural(internal.OpenAPIV3Schema)
	if err != nil {
		return nil, fmt.Errorf("not a structural schema: %w", err)
	}
	// As the API server does: defaults are pruned of unknown fields before they are applied.
	ss = ss.DeepCopy()
	if err := structuraldefaulting.PruneDefaults(ss); err != nil {
		return nil, err
	}
	plainValidator, openapiSchema, err := apiservervalidation.NewSchemaValidator(internal.OpenAPIV3Schema)
	if err != nil {
		return nil, err
	}
	// The same validator with the answers of repeated parts remembered (schemamemo.go).
	schemaValidator := newSchemaMemo(openapiSchema, plainValidator)
	var status *apiextensionsinternal.CustomResourceSubresourceStatus
	var statusValidator apiservervalidation.SchemaValidator
	sub, err := apihelpers.GetSubresourcesForVersion(crd, name)
	if err != nil {
		return nil, err
	}
	if sub != nil && sub.Status != nil {
		status = &apiextensionsinternal.CustomResourceSubresourceStatus{}
		if props, ok := internal.OpenAPIV3Schema.Properties["status"]; ok {
			if statusValidator, _, err = apiservervalidation.NewSchemaValidator(&props); err != nil {
				return nil, err
			}
		}
	}
	gvk := schema.GroupVersionKind{Group: crd.Spec.Group, Version: name, Kind: crd.Spec.Names.Kind}
	namespaced := crd.Spec.Scope == apiextensionsv1.NamespaceScoped
	// The strategy gets the schema without its CEL rules, and sortedCEL runs them: the
	// CEL validator reports the rules of an object's fields in map order, so the same
	// refusal would list its errors in another order from run to run.
	withoutCEL := withoutXValidations(ss)
	inner := customresource.NewStrategy(crdserverscheme.NewUnstructuredObjectTyper(), namespaced, gvk,
		schemaValidator, statusValidator, withoutCEL, status, nil, served.SelectableFields)
	cel := celvalidation.NewValidator(ss, true, celconfig.PerCallLimit)
	strategy := sortedCEL{RESTCreateStrategy: inner, cel: cel, memo: newCELMemo(cel), schema: ss}
	return &versionValidator{gvk: gvk, structural: ss, strategy: strategy, namespaced: namespaced}, nil
}

// sortedCEL is the custom resource strategy with its CEL rules run as the API server runs
// them (after the schema, and not at all when the schema found an error that makes them
// meaningless, with the same note) and their errors sorted by field path and message.
type sortedCEL struct {
	rest.RESTCreateStrategy
	cel    *celvalidation.Validator // nil when the schema has no CEL rule
	memo   *celMemo                 // the same rules, with the answers of repeated parts remembered
	schema *structuralschema.Structural
}

func (s sortedCEL) Validate(ctx context.Context, obj runtime.Object) field.ErrorList {
	// The schema's own errors come in map order too (duplicate list-map keys, required
	// fields, lengths of sibling fields): sorted the same way, so a refusal reads the same
	// every run (the corpus had one refusal in three orders).
	errs := sortByField(s.RESTCreateStrategy.Validate(ctx, obj))
	u, ok := obj.(*unstructured.Unstructured)
	if s.cel == nil || !ok {
		return errs
	}
	for _, e := range errs {
		switch e.Type {
		case field.ErrorTypeNotSupported, field.ErrorTypeRequired, field.ErrorTypeTooLong, field.ErrorTypeTooMany,
			field.ErrorTypeTypeInvalid:
			// The API server's words for the rules it then skips.
			return append(errs,
				field.Invalid(nil, nil,
					"some validation rules were not checked because the object was invalid; correct the existing "+
						"errors to complete validation"))
		}
	}
	var celErrs field.ErrorList
	if s.memo != nil && !noCELMemo {
		celErrs = s.memo.Validate(ctx, u.Object, celconfig.RuntimeCELCostBudget)
	} else {
		celErrs, _ = s.cel.Validate(ctx, nil, s.schema, u.Object, nil, celconfig.RuntimeCELCostBudget)
	}
	return append(errs, sortByField(celErrs)...)
}

// sortByField orders field errors by field path, then message.
func sortByField(errs field.ErrorList) field.ErrorList {
	sort.SliceStable(errs, func(i, j int) bool {
		if errs[i].Field != errs[j].Field {
			return errs[i].Field < errs[j].Field
		}
		return errs[i].Error() < errs[j].Error()
	})
	return errs
}

// withoutXValidations is a copy of the schema without any x-kubernetes-validations.
func withoutXValidations(ss *structuralschema.Structural) *structuralschema.Structural {
	out := ss.DeepCopy()
	var strip func(s *structuralschema.Structural)
	strip = func(s *structuralschema.Structural) {
		if s == nil {
			return
		}
		s.XValidations = nil
		for k, p := range s.Properties {
			strip(&p)
			s.Properties[k] = p
		}
		strip(s.Items)
		if s.AdditionalProperties != nil {
			strip(s.AdditionalProperties.Structural)
		}
		if s.ValueValidation != nil {
			for i := range s.ValueValidation.AllOf {
				s.ValueValidation.AllOf[i].ValidationExtensions.XValidations = nil
			}
			for i := range s.ValueValidation.AnyOf {
				s.ValueValidation.AnyOf[i].ValidationExtensions.XValidations = nil
			}
			for i := range s.ValueValidation.OneOf {
				s.ValueValidation.OneOf[i].ValidationExtensions.XValidations = nil
			}
		}
	}
	strip(out)
	return out
}

// storageVersion is the version the CRD stores objects in.
func (e *entry) storageVersion() (string, error) {
	crd, err := e.parsed()
	if err != nil {
		return "", err
	}
	return apihelpers.GetCRDStorageVersion(crd)
}

// Admit answers a create of the object whose JSON is js. An error is a problem with the
// CRDs themselves (unreadable, not structural), never with the object.
func (s *Set) Admit(js []byte) (Verdict, error) {
	var obj map[string]any
	if err := utiljson.Unmarshal(js, &obj); err != nil {
		return Verdict{Message: fmt.Sprintf("the object is not valid JSON: %v", err)}, nil
	}
	u := &unstructured.Unstructured{Object: obj}
	gv, err := schema.ParseGroupVersion(u.GetAPIVersion())
	if err != nil {
		return Verdict{Message: err.Error()}, nil
	}
	gvk := gv.WithKind(u.GetKind())
	e := s.byKind[gvk.GroupKind()]
	if e == nil {
		return Verdict{Message: noMatch(gvk)}, nil
	}
	v, err := e.version(gvk.Version)
	if err != nil {
		return Verdict{}, err
	}
	if v == nil {
		return Verdict{Message: noMatch(gvk)}, nil
	}

	// Decoding: strict field validation refuses unknown fields (kubectl's default), then
	// the schema's defaults are filled in.
	unknown, err := coerce(u, v.structural)
	if err != nil {
		return Verdict{Message: cannotHandle(gvk, err.Error())}, nil
	}
	if len(unknown) > 0 {
		parts := make([]string, len(unknown))
		for i, p := range unknown {
			parts[i] = fmt.Sprintf("unknown field %q", p)
		}
		return Verdict{Message: cannotHandle(gvk, "strict decoding error: "+strings.Join(parts, ", "))}, nil
	}
	structuraldefaulting.Default(u.Object, v.structural)

	// Validation runs on a copy: creating fills in system fields (uid, creationTimestamp)
	// and resets status, which the translation must not see.
	probe := u.DeepCopy()
	if v.namespaced && probe.GetNamespace() == "" {
		probe.SetNamespace("default")
	}
	rest.FillObjectMetaSystemFields(probe)
	ns := ""
	if v.namespaced {
		ns = probe.GetNamespace()
	}
	if err := rest.BeforeCreate(v.strategy, genericapirequest.WithNamespace(context.Background(), ns), probe); err != nil {
		return Verdict{Message: err.Error()}, nil
	}

	// Storage: conversion strategy None changes only apiVersion; the stored object is
	// pruned and defaulted against the storage version's schema.
	storage, err := e.storageVersion()
	if err != nil {
		return Verdict{}, err
	}
	if storage != gvk.Version {
		sv, err := e.version(storage)
		if err != nil {
			return Verdict{}, err
		}
		u.SetAPIVersion(schema.GroupVersion{Group: gvk.Group, Version: storage}.String())
		if sv != nil {
			if _, err := coerce(u, sv.structural); err != nil {
				return Verdict{Message: cannotHandle(gvk, err.Error())}, nil
			}
			structuraldefaulting.Default(u.Object, sv.structural)
		}
	}
	return Verdict{Allowed: true, Object: u.Object}, nil
}

// coerce is the API server's decoding of a custom resource: ObjectMeta read and checked
// for its types, unknown fields pruned (and their paths returned), nulls without defaults
// dropped, embedded ObjectMeta coerced.
func coerce(u *unstructured.Unstructured, ss *structuralschema.Structural) ([]string, error) {
	kind, apiVersion := u.GetKind(), u.GetAPIVersion()
	om, found, unknown, err := schemaobjectmeta.GetObjectMetaWithOptions(u.Object,
		schemaobjectmeta.ObjectMetaOptions{ReturnUnknownFieldPaths: true})
	if err != nil {
		return nil, err
	}
	unknown = append(unknown,
		structuralpruning.PruneWithOptions(u.Object, ss, true,
			structuralschema.UnknownFieldPathOptions{TrackUnknownFieldPaths: true})...)
	structuraldefaulting.PruneNonNullableNullsWithoutDefaults(u.Object, ss)
	// CoerceWithOptions returns a *field.Error: compared as such, a nil one is no error.
	ferr, paths := schemaobjectmeta.CoerceWithOptions(nil, u.Object, ss, false,
		schemaobjectmeta.CoerceOptions{ReturnUnknownFieldPaths: true})
	if ferr != nil {
		return nil, ferr
	}
	unknown = append(unknown, paths...)
	u.SetKind(kind)
	u.SetAPIVersion(apiVersion)
	if found {
		if err := schemaobjectmeta.SetObjectMeta(u.Object, om); err != nil {
			return nil, err
		}
	}
	return unknown, nil
}

// noMatch is the refusal of a kind or version the CRDs do not serve.
func noMatch(gvk schema.GroupVersionKind) string {
	return (&meta.NoKindMatchError{GroupKind: gvk.GroupKind(), SearchedVersions: []string{gvk.Version}}).Error()
}

// cannotHandle is how the API server words a request body it cannot decode.
func cannotHandle(gvk schema.GroupVersionKind, detail string) string {
	return fmt.Sprintf("%s in version %q cannot be handled as a %s: %s", gvk.Kind, gvk.Version, gvk.Kind, detail)
}
