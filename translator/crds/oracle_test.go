package crds_test

import (
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"

	envoygateway "github.com/envoyproxy/gateway"
	kvalidate "sigs.k8s.io/kubectl-validate/pkg/cmd"
	"sigs.k8s.io/kubectl-validate/pkg/openapiclient"
	"sigs.k8s.io/kubectl-validate/pkg/validator"
	"sigs.k8s.io/yaml"

	"github.com/egharness/egharness/harness/scenario/scenariotest"
	"github.com/egharness/egharness/translator/resource"
)

// The verdicts of crds.Set against an independent oracle: kubectl-validate, which egctl
// runs before it translates, with the same EG v1.9.1 CRDs. Every object of a CRD-defined
// group in every scenario is decided by both; they must agree on allowed or refused, and
// an "is invalid" refusal must be word for word the same (kubectl-validate words refusals
// of unknown fields its own way, where crds.Set writes the API server's).
func TestVerdictsAgreeWithKubectlValidate(t *testing.T) {
	set := builtSet(t)
	oracle, err := validator.New(
		openapiclient.NewLocalCRDFiles(fstest.MapFS{"crds.yaml": {Data: envoygateway.GatewayCRDs}}))
	if err != nil {
		t.Fatal(err)
	}
	scenarios := scenariotest.Load(t, filepath.Join("..", "..", "scenarios"))
	checked, refused := 0, 0
	for _, sc := range scenarios.Scenarios {
		for _, o := range sc.Objects {
			if o.Raw == nil || o.Kind == "BackendLBPolicy" {
				continue
			}
			ours, err := set.Admit(o.Raw)
			if err != nil {
				t.Fatalf("%s %s: %v", o.Where(), o.Ref(), err)
			}
			theirs := kubectlValidate(oracle, o)
			checked++
			if !ours.Allowed {
				refused++
			}
			switch {
			case ours.Allowed != (theirs == ""):
				t.Errorf("%s %s: egharness allowed=%v (%s), kubectl-validate %q", o.Where(), o.Ref(), ours.Allowed, ours.Message,
					theirs)
			case strings.Contains(ours.Message, " is invalid: ") && ours.Message != theirs:
				t.Errorf("%s %s: message\n  egharness       %s\n  kubectl-validate %s", o.Where(), o.Ref(), ours.Message, theirs)
			}
		}
	}
	if checked < 300 || refused < 40 {
		t.Errorf("only %d objects (%d refused) compared: the scenarios were not read", checked, refused)
	}
	t.Logf("%d objects compared with kubectl-validate, %d refused", checked, refused)
}

// kubectlValidate is kubectl-validate's verdict on the object as written: "" when valid.
func kubectlValidate(v *validator.Validator, o resource.Object) string {
	doc, err := yaml.JSONToYAML(o.Raw)
	if err != nil {
		return err.Error()
	}
	if err := kvalidate.ValidateDocument(doc, v); err != nil {
		return err.Error()
	}
	return ""
}
