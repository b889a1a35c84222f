package translator_test

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/egharness/egharness/harness/catalog"
	"github.com/egharness/egharness/harness/scenario"
	"github.com/egharness/egharness/translator"
	"github.com/egharness/egharness/translator/profile"
)

// Translating the same objects must print the same bytes every time: map iteration order,
// goroutines or mutated inputs must never leak into the output.
func TestTranslateDeterministic(t *testing.T) {
	cat, err := catalog.Load()
	if err != nil {
		t.Fatal(err)
	}
	set, err := scenario.Loader{Catalog: cat, Root: "../scenarios"}.LoadPaths("../scenarios")
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range set.Errors {
		t.Errorf("scenario does not load: %v", e)
	}
	if len(set.Scenarios) == 0 {
		t.Fatal("no scenarios under ../scenarios")
	}
	runs := 0
	for _, s := range set.Scenarios {
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
