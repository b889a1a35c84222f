package translator_test

import (
	"bytes"
	"encoding/json"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/egharness/egharness/harness/golden"
	"github.com/egharness/egharness/harness/impl"
	"github.com/egharness/egharness/harness/routecheck"
	"github.com/egharness/egharness/translator"
	"github.com/egharness/egharness/translator/config"
	"github.com/egharness/egharness/translator/profile"
	"github.com/egharness/egharness/translator/resource"
)

// FuzzTranslate runs the whole translator on mutated object sets: each scenario's objects
// as YAML (the fuzzer mutates the text) and a list of structural edits (drop, copy,
// rename, move to another namespace, re-age, reorder objects). Whatever decodes must
// translate without an error or a panic, print the same bytes twice, render goldens, and
// give the route checker a snapshot it accepts.
func FuzzTranslate(f *testing.F) {
	names := profile.Names()
	for _, s := range allScenarios(f) {
		in, err := impl.Input(impl.Request{Objects: s.Objects, Config: s.Settings})
		if err != nil {
			f.Fatal(err)
		}
		for _, p := range s.ProfilesOrDefault() {
			for i, n := range names {
				if n == p {
					f.Add(in, []byte{}, uint8(i))
					f.Add(in, []byte{0, 1, 5, 0}, uint8(i))
					f.Add(in, []byte{1, 2, 2, 3, 3, 4, 4, 1}, uint8(i))
				}
			}
		}
	}
	f.Fuzz(func(t *testing.T, data, edits []byte, prof uint8) {
		p, err := profile.Get(names[int(prof)%len(names)])
		if err != nil {
			t.Fatal(err)
		}
		lim := resource.Limits{MaxFileSize: 1 << 20, MaxObjects: 200, MaxDepth: 40, MaxAliasExpansion: 64 << 10}
		dec, _ := resource.Decode("fuzz.yaml", data, resource.Options{SkipUnknownKinds: true, Limits: lim})
		// Documents that do not decode are dropped; the rest are translated.
		objs := edit(dec.Objects, edits)
		cfg, err := config.Combine(config.Config{}, config.FromEnvoyGateway(dec.EnvoyGateway))
		if err != nil {
			return
		}
		in := translator.Input{Objects: objs, Config: cfg, Profile: p}
		start := time.Now()
		res, err := translator.Translate(in)
		if err != nil {
			t.Fatalf("translate: %v", err)
		}
		if d := time.Since(start); d > 10*time.Second {
			t.Errorf("translating %d objects took %s", len(objs), d)
		}
		first, err := json.Marshal(res)
		if err != nil {
			t.Fatalf("marshal: %v", err)
		}
		res2, err := translator.Translate(in)
		if err != nil {
			t.Fatalf("second translate: %v", err)
		}
		second, _ := json.Marshal(res2)
		if !bytes.Equal(first, second) {
			t.Fatalf("the same input printed different bytes at byte %d", firstDiff(first, second))
		}
		if len(res.Admission) != len(objs) {
			t.Errorf("%d admission verdicts for %d objects", len(res.Admission), len(objs))
		}
		if _, err := golden.Render(res); err != nil {
			t.Fatalf("render: %v", err)
		}
		tbl, err := routecheck.New(res.XDS.Listeners, res.XDS.Routes)
		if err != nil {
			t.Fatalf("the route checker refuses the translator's own snapshot: %v", err)
		}
		for _, port := range []uint32{80, 443, 8080, 10080, 10443} {
			_, _ = tbl.Check(routecheck.Request{Port: port, Host: "app.example.com", Path: "/"})
		}
	})
}

// edit applies structural edits, two bytes each (operation, argument), keeping refs unique.
func edit(objs []resource.Object, edits []byte) []resource.Object {
	objs = append([]resource.Object(nil), objs...)
	refs := func() map[resource.Ref]bool {
		m := map[resource.Ref]bool{}
		for _, o := range objs {
			m[o.Ref()] = true
		}
		return m
	}
	copyOf := func(o resource.Object) resource.Object {
		o.Obj = o.Obj.DeepCopyObject().(resource.KObject)
		return o
	}
	for i := 0; i+1 < len(edits) && len(objs) > 0; i += 2 {
		op, arg := edits[i]%6, int(edits[i+1])
		k := arg % len(objs)
		other := objs[(arg/len(objs))%len(objs)]
		switch op {
		case 0: // drop one
			objs = append(objs[:k], objs[k+1:]...)
		case 1: // copy one under a new name
			c := copyOf(objs[k])
			c.Obj.SetName(c.Obj.GetName() + "-copy")
			if !refs()[c.Ref()] {
				objs = append(objs, c)
			}
		case 2: // move one to another object's namespace
			if resource.ClusterScoped(objs[k].Kind) || resource.ClusterScoped(other.Kind) {
				continue
			}
			c := copyOf(objs[k])
			c.Obj.SetNamespace(other.Obj.GetNamespace())
			if !refs()[c.Ref()] {
				objs[k] = c
			}
		case 3: // give one another object's name
			c := copyOf(objs[k])
			c.Obj.SetName(other.Obj.GetName())
			if !refs()[c.Ref()] {
				objs[k] = c
			}
		case 4: // make one the same age as another, or older than all
			c := copyOf(objs[k])
			ts := other.Obj.GetCreationTimestamp()
			if arg%2 == 0 {
				ts = metav1.NewTime(time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC))
			}
			c.Obj.SetCreationTimestamp(ts)
			objs[k] = c
		case 5: // reverse the order
			for a, b := 0, len(objs)-1; a < b; a, b = a+1, b-1 {
				objs[a], objs[b] = objs[b], objs[a]
			}
		}
	}
	return objs
}
