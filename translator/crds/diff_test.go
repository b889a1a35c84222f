package crds_test

import (
	"strings"
	"testing"

	"github.com/egharness/egharness/translator/crds"
)

// The diff between EG v1.8.0's and v1.9.1's CRDs holds the rule changes the upgrade
// scenarios rely on, read from the releases themselves.
func TestDiffV180V191(t *testing.T) {
	from, err := crds.ForRelease("v1.8.0")
	if err != nil {
		t.Fatal(err)
	}
	to, err := crds.ForRelease("v1.9.1")
	if err != nil {
		t.Fatal(err)
	}
	changes, err := crds.Diff(from, to)
	if err != nil {
		t.Fatal(err)
	}
	var lines []string
	for _, c := range changes {
		lines = append(lines, c.String())
	}
	all := strings.Join(lines, "\n")
	for _, want := range []string{
		// UPG-02: Gateway API v1.6 serves and stores TCPRoute v1.
		"TCPRoute.gateway.networking.k8s.io v1: version added: served",
		"TCPRoute.gateway.networking.k8s.io: storage version v1alpha2 → v1",
		// EG #9186: the rate limit's request count loses its impossible int32 bound.
		"BackendTrafficPolicy.gateway.envoyproxy.io v1alpha1 spec.rateLimit.global.rules[*].limit.requests: " +
			"format int32 → int64",
		// EnvoyExtensionPolicy gains mergeType (MRG-01).
		"EnvoyExtensionPolicy.gateway.envoyproxy.io v1alpha1 spec.mergeType: field added: string",
		// MRG-01: mergeType only with xRoute targets.
		`BackendTrafficPolicy.gateway.envoyproxy.io v1alpha1 spec: rule added:`,
	} {
		if !strings.Contains(all, want) {
			t.Errorf("the diff lacks %q", want)
		}
	}
	if !strings.Contains(all, `"mergeType can only be used with xRoute targets"`) {
		t.Errorf("the diff lacks the MRG-01 CEL rule")
	}
	again, _ := crds.Diff(from, to)
	if len(again) != len(changes) {
		t.Errorf("two diffs differ in length: %d, %d", len(changes), len(again))
	}
	for i := range again {
		if again[i] != changes[i] {
			t.Fatalf("the diff is not deterministic at %d: %v / %v", i, changes[i], again[i])
		}
	}
	if none, _ := crds.Diff(to, to); len(none) != 0 {
		t.Errorf("a release differs from itself: %v", none[0])
	}
}

// Each CRD's group and kind are read from its first lines, without parsing the schema; the
// fast reading agrees with a full parse for every CRD EG ships.
func TestIdentityFastPath(t *testing.T) {
	for _, release := range []string{"v1.8.0", "v1.9.1"} {
		set, err := crds.ForRelease(release)
		if err != nil {
			t.Fatal(err)
		}
		kinds := set.Kinds()
		if len(kinds) < 20 {
			t.Fatalf("%s: %d kinds", release, len(kinds))
		}
		for _, gk := range kinds {
			crd, err := set.CRD(gk)
			if err != nil {
				t.Fatal(err)
			}
			if crd.Spec.Group != gk.Group || crd.Spec.Names.Kind != gk.Kind {
				t.Errorf("%s: indexed as %s, the CRD says %s %s", release, gk, crd.Spec.Group, crd.Spec.Names.Kind)
			}
		}
	}
}
