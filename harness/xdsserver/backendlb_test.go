package xdsserver_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/egharness/egharness/harness/xdsserver"
)

// TestSnapshotsShowResolvedBackendLB: the BackendLBPolicy of seed 002's example appears in
// /snapshots on its backend cluster as loadBalancing, session_persistence and circuitBreaker
// (BLP-08), and a cluster without a policy shows none of them.
func TestSnapshotsShowResolvedBackendLB(t *testing.T) {
	ctx := context.Background()
	s := xdsserver.New(ctx, xdsserver.Options{})
	api := httptest.NewServer((&xdsserver.API{Server: s}).Handler())
	defer api.Close()
	for _, tc := range []struct {
		scenario, cluster string
		want              map[string]string
	}{
		{"seed-example", "httproute/nantian-demo/orders/rule/0", map[string]string{
			"loadBalancing":       `{"type":"ConsistentHash","hashKey":"Header","hashHeader":"x-tenant-id"}`,
			"session_persistence": `{"cookieName":"orders-session","absoluteTimeout":"30m","idleTimeout":"10m"}`,
			"circuitBreaker":      `{"maxInflightRequests":200}`,
		}},
		{"request-mirror", "", nil},
	} {
		src := xdsserver.ScenarioSource{Loader: loader(t), Dir: scenarioRoot, Name: tc.scenario}
		l, err := src.Load()
		if err != nil {
			t.Fatal(err)
		}
		if _, _, err := s.Update(ctx, l); err != nil {
			t.Fatal(err)
		}
		var view struct {
			BackendClusters []map[string]json.RawMessage `json:"backendClusters"`
		}
		if code := getJSON(t, api.URL+"/snapshots", &view); code != http.StatusOK {
			t.Fatalf("/snapshots: %d", code)
		}
		found := false
		for _, bc := range view.BackendClusters {
			var name string
			_ = json.Unmarshal(bc["name"], &name)
			if tc.want == nil {
				for _, k := range []string{"loadBalancing", "session_persistence", "circuitBreaker"} {
					if _, ok := bc[k]; ok {
						t.Errorf("%s: cluster %s shows %s without a policy", tc.scenario, name, k)
					}
				}
				continue
			}
			if name != tc.cluster {
				continue
			}
			found = true
			for k, w := range tc.want {
				if got := compact(t, bc[k]); got != w {
					t.Errorf("%s %s: %s = %s, want %s", tc.scenario, name, k, got, w)
				}
			}
		}
		if tc.want != nil && !found {
			t.Errorf("%s: no backend cluster %s", tc.scenario, tc.cluster)
		}
	}
}
