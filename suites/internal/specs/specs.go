// Package specs holds what the ginkgo suites' spec trees share.
package specs

import (
	. "github.com/onsi/ginkgo/v2"

	"github.com/egharness/egharness/harness/catalog"
	"github.com/egharness/egharness/harness/scenario"
)

// Scenarios loads the behavior catalog and the scenarios under root while a container
// builds its tree. When either cannot be read it adds the spec that fails saying so (at
// the caller's line) and returns a nil set.
func Scenarios(root string) (*catalog.Catalog, *scenario.Set) {
	cat, err := catalog.Load()
	if err != nil {
		It("loads the behavior catalog", Offset(1), func() { Fail(err.Error()) })
		return nil, nil
	}
	set, err := scenario.Loader{Catalog: cat, Root: root}.LoadPaths(root)
	if err != nil {
		It("finds the scenarios", Offset(1), func() { Fail(err.Error()) })
		return nil, nil
	}
	return cat, set
}
