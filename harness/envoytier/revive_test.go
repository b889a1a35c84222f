package envoytier

import (
	"context"
	"os"
	"testing"

	"github.com/egharness/egharness/harness/catalog"
	"github.com/egharness/egharness/harness/scenario"
	"github.com/egharness/egharness/harness/xdsserver"
)

// An Envoy that dies between scenarios is started again: the run goes on.
func TestReviveAfterEnvoyExits(t *testing.T) {
	wd, _ := os.Getwd()
	bin, err := Find("", wd)
	if err != nil {
		if os.Getenv(RequireEnvVar) == "1" {
			t.Fatal(err)
		}
		t.Skipf("real Envoy tier skipped: %v", err)
	}
	ctx := context.Background()
	tier, err := Start(ctx, Options{Envoy: bin})
	if err != nil {
		t.Fatal(err)
	}
	defer tier.Close()
	cat, err := catalog.Load()
	if err != nil {
		t.Fatal(err)
	}
	set, err := scenario.Loader{Catalog: cat, Root: "../../scenarios"}.LoadPaths("../../scenarios/routing")
	if err != nil {
		t.Fatal(err)
	}
	sc := xdsserver.Find(set.Scenarios, "request-redirect")
	if o := tier.Run(ctx, sc, "v1.9", nil); !o.Passed() {
		t.Fatal(o.Describe(true))
	}
	if err := tier.envoy.cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	<-tier.envoy.exit
	if o := tier.Run(ctx, sc, "v1.9", nil); !o.Passed() || !o.Acked {
		t.Fatalf("after Envoy exited: %s", o.Describe(true))
	}
	if tier.Restarts() != 1 {
		t.Errorf("restarts %d", tier.Restarts())
	}
}
