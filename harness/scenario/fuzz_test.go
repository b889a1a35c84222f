package scenario_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/egharness/egharness/harness/impl"
	"github.com/egharness/egharness/harness/runner"
	"github.com/egharness/egharness/harness/scenario"
	"github.com/egharness/egharness/internal/fuzzseed"
	"github.com/egharness/egharness/translator/resource"
)

// FuzzLoadScenario feeds the loader broken and hostile scenario files (seeded with every
// scenario, resource file and invalid case). Whatever the bytes: no panic, no hang, a
// refused file gets messages that each name it, and a loaded scenario is whole; a loaded
// scenario then runs through the reference translator and every check without a panic.
func FuzzLoadScenario(f *testing.F) {
	files, paths, err := fuzzseed.Files(scenariosRoot)
	if err != nil {
		f.Fatal(err)
	}
	for _, p := range paths {
		f.Add(files[p])
	}
	l := loader(f, scenariosRoot)
	l.Limits = resource.Limits{MaxFileSize: 1 << 20, MaxObjects: 100, MaxDepth: 40, MaxAliasExpansion: 64 << 10}
	// The scenario sits in scenarios/tls so that include: [certs.resources.yaml] resolves.
	path := filepath.Join(scenariosRoot, "tls", "fuzz.yaml")
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := l.Load(path, data)
		if err != nil {
			se, ok := err.(*scenario.Error)
			if !ok || se.File != path || len(se.Msgs) == 0 {
				t.Fatalf("error %v (%T) is not a *scenario.Error with messages about %s", err, err, path)
			}
			for _, m := range se.Msgs {
				if !strings.HasPrefix(m, path+":") && !strings.HasPrefix(m, filepath.Dir(path)) {
					t.Errorf("message does not name the file: %q", m)
				}
			}
			return
		}
		if s.Name == "" || len(s.Covers) == 0 || len(s.Objects) == 0 || s.File != path || s.Area != "tls" {
			t.Fatalf("incomplete scenario: name %q covers %v objects %d file %q area %q", s.Name, s.Covers, len(s.Objects),
				s.File, s.Area)
		}
		refs := map[resource.Ref]bool{}
		for _, o := range s.Objects {
			if o.Obj == nil || refs[o.Ref()] {
				t.Fatalf("object %+v missing or twice", o.Ref())
			}
			refs[o.Ref()] = true
		}
		for _, p := range []string{"", "name", "expect.statuses[3].conditions[0]", "expectByProfile.v1.8.xds[0]",
			"resources"} {
			_ = s.Line(p)
		}
		for _, job := range runner.Select([]*scenario.Scenario{s}, runner.Options{}) {
			o := runner.RunOne(context.Background(), job, runner.Options{Impl: impl.Reference{}})
			if o.Err != nil && strings.Contains(o.Err.Error(), "panic") {
				t.Fatalf("%s [%s]: %v", s.Name, job.Profile, o.Err)
			}
			for _, fl := range o.Failures {
				_ = fl.String()
			}
		}
	})
}
