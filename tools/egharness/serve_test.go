package main

import (
	"bytes"
	"context"
	"encoding/json"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	discoverygrpc "github.com/envoyproxy/go-control-plane/envoy/service/discovery/v3"
	resourcev3 "github.com/envoyproxy/go-control-plane/pkg/resource/v3"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
)

type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// TestServeScenario runs `serve --scenario` on loopback ports: /snapshots answers for the
// scenario, and a real ADS stream over TCP receives its clusters under the same version,
// whose ACK is logged.
func TestServeScenario(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	logs := &lockedBuffer{}
	addrs := make(chan [2]net.Addr, 1)
	done := make(chan error, 1)
	go func() {
		done <- runServe(ctx, serveOptions{scenarioName: "request-mirror", scenarioDir: "../../scenarios",
			xdsAddr: "127.0.0.1:0", adminAddr: "127.0.0.1:0"}, logs,
			func(x, a net.Addr) { addrs <- [2]net.Addr{x, a} })
	}()
	var xdsAddr, adminAddr net.Addr
	select {
	case a := <-addrs:
		xdsAddr, adminAddr = a[0], a[1]
	case err := <-done:
		t.Fatalf("serve ended: %v\n%s", err, logs.String())
	case <-time.After(20 * time.Second):
		t.Fatal("serve did not start")
	}

	resp, err := http.Get("http://" + adminAddr.String() + "/snapshots")
	if err != nil {
		t.Fatal(err)
	}
	var view struct {
		Version string `json:"version"`
		Source  string `json:"source"`
		XDS     struct {
			Clusters []struct {
				Name string `json:"name"`
			} `json:"clusters"`
		} `json:"xds"`
	}
	err = json.NewDecoder(resp.Body).Decode(&view)
	resp.Body.Close()
	if err != nil || resp.StatusCode != 200 || view.Version == "" || !strings.Contains(view.Source, "request-mirror") ||
		len(view.XDS.Clusters) == 0 {
		t.Fatalf("/snapshots: %d %v %+v", resp.StatusCode, err, view)
	}

	conn, err := grpc.NewClient(xdsAddr.String(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	sctx, scancel := context.WithTimeout(ctx, 10*time.Second)
	defer scancel()
	stream, err := discoverygrpc.NewAggregatedDiscoveryServiceClient(conn).StreamAggregatedResources(sctx)
	if err != nil {
		t.Fatal(err)
	}
	node := &corev3.Node{Id: "serve-test"}
	if err := stream.Send(&discoverygrpc.DiscoveryRequest{Node: node, TypeUrl: resourcev3.ClusterType}); err != nil {
		t.Fatal(err)
	}
	r, err := stream.Recv()
	if err != nil {
		t.Fatal(err)
	}
	if r.GetVersionInfo() != view.Version || len(r.GetResources()) != len(view.XDS.Clusters) {
		t.Errorf("CDS: version %q with %d clusters; /snapshots says %q with %d", r.GetVersionInfo(), len(r.GetResources()),
			view.Version, len(view.XDS.Clusters))
	}
	if err := stream.Send(
		&discoverygrpc.DiscoveryRequest{Node: node, TypeUrl: resourcev3.ClusterType, VersionInfo: r.GetVersionInfo(),
			ResponseNonce: r.GetNonce()}); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for !strings.Contains(logs.String(), "msg=ACK") && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if line := grepLine(logs.String(), "msg=ACK"); !strings.Contains(line, "node=serve-test") ||
		!strings.Contains(line, "version="+view.Version) || !strings.Contains(line, "type=Cluster") {
		t.Errorf("ACK log line %q\n%s", line, logs.String())
	}

	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("serve returned %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Error("serve did not stop")
	}
	if !strings.Contains(logs.String(), "msg=\"shutting down\"") {
		t.Errorf("no shutdown line:\n%s", logs.String())
	}
}

// serve listens on this machine only unless told otherwise.
func TestServeLoopbackByDefault(t *testing.T) {
	f := newServeCmd().Flags()
	for _, name := range []string{"xds-addr", "admin-addr"} {
		if v := f.Lookup(name).DefValue; !strings.HasPrefix(v, "127.0.0.1:") {
			t.Errorf("--%s defaults to %q, want 127.0.0.1:PORT", name, v)
		}
	}
}

func grepLine(s, sub string) string {
	for _, l := range strings.Split(s, "\n") {
		if strings.Contains(l, sub) {
			return l
		}
	}
	return ""
}

func TestServeBadInput(t *testing.T) {
	code, _, msg := execute(t, "", "serve")
	if code != exitBad || !strings.Contains(msg, "-f FILE or --scenario NAME") {
		t.Errorf("no source: %d %q", code, msg)
	}
	code, _, msg = execute(t, "", "serve", "--scenario", "no-such-scenario", "--scenarios", "../../scenarios",
		"--admin-addr", "127.0.0.1:0", "--xds-addr", "127.0.0.1:0")
	if code != exitBad || !strings.Contains(msg, `no scenario named "no-such-scenario"`) {
		t.Errorf("unknown scenario: %d %q", code, msg)
	}
	code, _, msg = execute(t, "", "serve", "-f", "../../scenarios/invalid/malformed-yaml.resources.yaml", "--admin-addr",
		"127.0.0.1:0", "--xds-addr", "127.0.0.1:0")
	if code != exitBad || !strings.Contains(msg, "malformed-yaml.resources.yaml") {
		t.Errorf("bad file: %d %q", code, msg)
	}
}

// The management API listens on port 19080 unless told otherwise (BLP-08: seed 002 names
// the port), and the xDS server on 18000, both on loopback only by default.
func TestServeDefaultPorts(t *testing.T) {
	f := newServeCmd().Flags()
	for flag, want := range map[string]string{"admin-addr": "127.0.0.1:19080", "xds-addr": "127.0.0.1:18000"} {
		if got := f.Lookup(flag).DefValue; got != want {
			t.Errorf("--%s default = %q, want %q", flag, got, want)
		}
	}
}
