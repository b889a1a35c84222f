package envoytier_test

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/egharness/egharness/harness/catalog"
	"github.com/egharness/egharness/harness/envoytier"
	"github.com/egharness/egharness/harness/scenario"
)

const scenarioRoot = "../../scenarios"

func scenarios(t *testing.T) []*scenario.Scenario {
	t.Helper()
	cat, err := catalog.Load()
	if err != nil {
		t.Fatal(err)
	}
	set, err := scenario.Loader{Catalog: cat, Root: scenarioRoot}.LoadPaths(scenarioRoot)
	if err != nil {
		t.Fatal(err)
	}
	return set.Scenarios
}

// envoyOrSkip finds an Envoy, or skips in one line ($EGHARNESS_REQUIRE_ENVOY=1 fails).
func envoyOrSkip(t *testing.T) string {
	t.Helper()
	wd, _ := os.Getwd()
	p, err := envoytier.Find("", wd)
	if err != nil {
		if os.Getenv(envoytier.RequireEnvVar) == "1" {
			t.Fatalf("%s=1 and %v", envoytier.RequireEnvVar, err)
		}
		t.Skip("real Envoy tier skipped: ", err)
	}
	return p
}

func TestScratchAll(t *testing.T) {
	if os.Getenv("SCRATCH") == "" {
		t.Skip("scratch")
	}
	bin := envoyOrSkip(t)
	ctx := context.Background()
	tier, err := envoytier.Start(ctx, envoytier.Options{Envoy: bin})
	if err != nil {
		t.Fatal(err)
	}
	defer tier.Close()
	start := time.Now()
	var outs []*envoytier.Outcome
	focus := os.Getenv("SCRATCH_FOCUS")
	for _, sc := range scenarios(t) {
		if focus != "" && !strings.Contains(","+focus+",", ","+sc.Name+",") {
			continue
		}
		for _, p := range sc.ProfilesOrDefault() {
			o := tier.Run(ctx, sc, p, nil)
			outs = append(outs, o)
			t.Log(o.Describe(true))
		}
	}
	t.Log(envoytier.Summarize(tier.Version(), outs).String(), time.Since(start))
}

func TestScratchLog(t *testing.T) {
	if os.Getenv("SCRATCH_LOG") == "" {
		t.Skip("scratch")
	}
	bin := envoyOrSkip(t)
	ctx := context.Background()
	tier, err := envoytier.Start(ctx, envoytier.Options{Envoy: bin})
	if err != nil {
		t.Fatal(err)
	}
	defer tier.Close()
	for _, sc := range scenarios(t) {
		if sc.Name == os.Getenv("SCRATCH_LOG") {
			t.Log(tier.Run(ctx, sc, sc.ProfilesOrDefault()[0], nil).Describe(true))
		}
	}
	time.Sleep(1500 * time.Millisecond)
	t.Log(tier.Log())
}
