package crds_test

import (
	"testing"

	"github.com/egharness/egharness/translator/crds"
)

// builtSet is the CRD set of the release this harness is built against (crds.Built), which
// most tests here admit objects with; a set that does not load fails the test.
func builtSet(tb testing.TB) *crds.Set {
	tb.Helper()
	set, err := crds.ForRelease(crds.Built)
	if err != nil {
		tb.Fatal(err)
	}
	return set
}
