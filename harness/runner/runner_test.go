package runner_test

import (
	"context"
	"strings"
	"testing"

	"github.com/egharness/egharness/harness/impl"
	"github.com/egharness/egharness/harness/runner"
	"github.com/egharness/egharness/harness/scenario"
	"github.com/egharness/egharness/translator/resource"
	"github.com/egharness/egharness/translator/result"
)

// panicky is an implementation that panics on one scenario.
type panicky struct{ on string }

func (panicky) Name() string { return "panicky" }
func (p panicky) Translate(_ context.Context, req impl.Request) (*result.Result, error) {
	if req.Scenario == p.on {
		var m map[string]int
		m["boom"]++ // a nil map write: a real runtime panic
	}
	return &result.Result{}, nil
}

func jobs(names ...string) []runner.Job {
	var out []runner.Job
	for _, n := range names {
		out = append(out, runner.Job{Scenario: &scenario.Scenario{Name: n, Covers: []string{"RT-01"}}, Profile: "v1.9"})
	}
	return out
}

// A scenario whose translation panics fails alone, with the stack; the others run.
func TestPanicIsThatScenariosFailure(t *testing.T) {
	outcomes := runner.Run(context.Background(), jobs("a", "b", "c", "d"),
		runner.Options{Impl: panicky{on: "b"}, Parallel: 2})
	if len(outcomes) != 4 {
		t.Fatalf("%d outcomes, want 4", len(outcomes))
	}
	for i, o := range outcomes {
		if o == nil {
			t.Fatalf("outcome %d missing", i)
		}
		if o.Scenario.Name != "b" {
			if !o.Passed() {
				t.Errorf("%s: %v %v, want a pass", o.Scenario.Name, o.Err, o.Failures)
			}
			continue
		}
		if o.Passed() || o.Err == nil {
			t.Fatalf("b passed, want its panic as its error")
		}
		msg := o.Err.Error()
		for _, want := range []string{"panic while translating or checking [v1.9]: assignment to entry in nil map",
			"goroutine ", "runner_test.go", "panicky.Translate"} {
			if !strings.Contains(msg, want) {
				t.Errorf("error lacks %q:\n%s", want, msg)
			}
		}
	}
}

// The same through the reference translator: objects no decoder would produce (an object
// without its Go value) panic inside the translator, which returns the panic with its
// stack as the scenario's error.
func TestReferencePanicIsThatScenariosFailure(t *testing.T) {
	js := jobs("good", "hostile")
	js[1].Scenario.Objects = []resource.Object{{Kind: "HTTPRoute", APIVersion: "gateway.networking.k8s.io/v1",
		File: "x.yaml", Line: 1}}
	outcomes := runner.Run(context.Background(), js, runner.Options{Impl: impl.Reference{}, Parallel: 2})
	if !outcomes[0].Passed() {
		t.Errorf("good: %v %v", outcomes[0].Err, outcomes[0].Failures)
	}
	o := outcomes[1]
	if o.Err == nil {
		t.Fatalf("hostile input translated: %+v", o.Result)
	}
	msg := o.Err.Error()
	for _, want := range []string{"translator panic: ", "goroutine ", "translator.Translate"} {
		if !strings.Contains(msg, want) {
			t.Errorf("error lacks %q:\n%s", want, msg)
		}
	}
}
