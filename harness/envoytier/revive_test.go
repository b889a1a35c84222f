package envoytier

import (
	"context"
	"strings"
	"syscall"
	"testing"
	"time"

	clusterv3 "github.com/envoyproxy/go-control-plane/envoy/config/cluster/v3"

	"github.com/egharness/egharness/harness/scenario/scenariotest"
	"github.com/egharness/egharness/harness/xdsserver"
	"github.com/egharness/egharness/translator/result"
)

// An Envoy that dies between scenarios is started again: the run goes on.
func TestReviveAfterEnvoyExits(t *testing.T) {
	bin := FindForTest(t)
	ctx := context.Background()
	tier, err := Start(ctx, Options{Envoy: bin})
	if err != nil {
		t.Fatal(err)
	}
	defer tier.Close()
	set := scenariotest.Load(t, "../../scenarios", "../../scenarios/routing")
	sc := xdsserver.Find(set.Scenarios, "request-redirect")
	if o := tier.Run(ctx, sc, "v1.9", nil); !o.Passed() {
		t.Fatal(o.Describe(true))
	}
	if err := tier.envoy.child.Cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	<-tier.envoy.child.Exited
	if o := tier.Run(ctx, sc, "v1.9", nil); !o.Passed() || !o.Acked {
		t.Fatalf("after Envoy exited: %s", o.Describe(true))
	}
	if tier.Restarts() != 1 {
		t.Errorf("restarts %d", tier.Restarts())
	}
}

// An Envoy that exits while the tier waits for its ACK ends the wait at once, not at the
// ACK timeout (its stream closes without the xDS server seeing a change).
func TestWaitEndsWhenEnvoyExits(t *testing.T) {
	bin := FindForTest(t)
	ctx := context.Background()
	tier, err := Start(ctx, Options{Envoy: bin, AckTimeout: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	defer tier.Close()
	// A stopped Envoy cannot ACK; it is killed while the tier waits.
	if err := tier.envoy.child.Cmd.Process.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	x := &result.XDS{Clusters: []*clusterv3.Cluster{{Name: "c",
		ClusterDiscoveryType: &clusterv3.Cluster_Type{Type: clusterv3.Cluster_STATIC}}}}
	v, _, err := tier.srv.Update(ctx, &xdsserver.Loaded{Source: "test", Result: &result.Result{XDS: *x}})
	if err != nil {
		t.Fatal(err)
	}
	go func() {
		time.Sleep(200 * time.Millisecond)
		_ = tier.envoy.child.Cmd.Process.Kill()
	}()
	start := time.Now()
	err = tier.wait(ctx, &Outcome{Version: v}, x, false)
	if err == nil || !strings.Contains(err.Error(), "envoy exited") {
		t.Fatalf("wait: %v", err)
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Errorf("the wait took %s after Envoy exited", d)
	}
}
