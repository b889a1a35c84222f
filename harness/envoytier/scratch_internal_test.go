package envoytier

import (
	"context"
	"os"
	"testing"

	"github.com/egharness/egharness/harness/catalog"
	"github.com/egharness/egharness/harness/scenario"
)

func TestScratchStats(t *testing.T) {
	name := os.Getenv("SCRATCH_STATS")
	if name == "" {
		t.Skip("scratch")
	}
	ctx := context.Background()
	wd, _ := os.Getwd()
	bin, _ := Find("", wd)
	tier, err := Start(ctx, Options{Envoy: bin})
	if err != nil {
		t.Fatal(err)
	}
	defer tier.Close()
	cat, _ := catalog.Load()
	set, _ := scenario.Loader{Catalog: cat, Root: "../../scenarios"}.LoadPaths("../../scenarios")
	for _, sc := range set.Scenarios {
		if sc.Name == name {
			t.Log(tier.Run(ctx, sc, sc.ProfilesOrDefault()[0], nil).Describe(true))
		}
	}
	s, _ := tier.envoy.adminGet(ctx, "/stats?usedonly&filter="+os.Getenv("SCRATCH_FILTER"))
	t.Log(s)
}
