package translator_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"testing"

	"github.com/egharness/egharness/harness/golden"
	"github.com/egharness/egharness/harness/impl"
	"github.com/egharness/egharness/harness/runner"
	"github.com/egharness/egharness/translator"
	"github.com/egharness/egharness/translator/profile"
)

// Translating the same objects must print the same bytes every time: map iteration order,
// goroutines or mutated inputs must never leak into the output.
func TestTranslateDeterministic(t *testing.T) {
	runs := 0
	for _, s := range allScenarios(t) {
		for _, name := range s.ProfilesOrDefault() {
			p, err := profile.Get(name)
			if err != nil {
				t.Fatalf("%s: %v", s.Name, err)
			}
			in := translator.Input{Objects: s.Objects, Config: s.Settings, Profile: p}
			var first []byte
			for i := 0; i < 20; i++ {
				res, err := translator.Translate(in)
				if err != nil {
					t.Fatalf("%s [%s] run %d: %v", s.Name, name, i, err)
				}
				b, err := json.Marshal(res)
				if err != nil {
					t.Fatalf("%s [%s] run %d: marshal: %v", s.Name, name, i, err)
				}
				if i == 0 {
					first = b
					if !bytes.Contains(b, []byte(`"xds":{"listeners":`)) {
						t.Errorf("%s [%s]: output lacks the xds section: %.200s", s.Name, name, b)
					}
					continue
				}
				if !bytes.Equal(first, b) {
					t.Errorf("%s [%s]: run %d differs from run 0 at byte %d", s.Name, name, i, firstDiff(first, b))
					break
				}
			}
			runs++
		}
	}
	t.Logf("%d scenario/profile pairs, 20 translations each", runs)
}

func firstDiff(a, b []byte) int {
	for i := 0; i < len(a) && i < len(b); i++ {
		if a[i] != b[i] {
			return i
		}
	}
	return min(len(a), len(b))
}

// The runner's parallelism must not leak into the output either: every scenario and
// profile, run by two workers twice (and by one), renders byte-identical goldens.
func TestRunParallelDeterministic(t *testing.T) {
	opts := runner.Options{Impl: impl.Reference{}}
	jobs := runner.Select(allScenarios(t), opts)
	if len(jobs) == 0 {
		t.Fatal("no jobs")
	}
	render := func(parallel int) []string {
		opts.Parallel = parallel
		var out []string
		for _, o := range runner.Run(context.Background(), jobs, opts) {
			if o.Err != nil {
				t.Fatalf("%s [%s]: %v", o.Scenario.Name, o.Profile, o.Err)
			}
			files, err := golden.Render(o.Result)
			if err != nil {
				t.Fatalf("%s [%s]: render: %v", o.Scenario.Name, o.Profile, err)
			}
			names := make([]string, 0, len(files))
			for n := range files {
				names = append(names, n)
			}
			sort.Strings(names)
			var b bytes.Buffer
			for _, n := range names {
				fmt.Fprintf(&b, "== %s/%s [%s] %s\n", o.Scenario.Area, o.Scenario.Name, o.Profile, n)
				b.Write(files[n])
			}
			out = append(out, b.String())
		}
		return out
	}
	first := render(2)
	for run, parallel := range []int{2, 1} {
		again := render(parallel)
		for i := range jobs {
			if again[i] != first[i] {
				j := jobs[i]
				t.Errorf("%s [%s]: run %d (parallel %d) renders differently at byte %d", j.Scenario.Name, j.Profile, run+2,
					parallel, firstDiff([]byte(first[i]), []byte(again[i])))
			}
		}
	}
	t.Logf("%d scenario/profile pairs, three runs", len(jobs))
}
