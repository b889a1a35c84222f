package xdsserver_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/egharness/egharness/harness/scenario"
	"github.com/egharness/egharness/harness/xdsserver"
)

func TestManagementAPI(t *testing.T) {
	ctx := context.Background()
	s := xdsserver.New(ctx, xdsserver.Options{})
	ld := loader(t)
	api := httptest.NewServer((&xdsserver.API{Server: s, Scenarios: func() ([]*scenario.Scenario, error) {
		set, err := ld.LoadPaths(scenarioRoot)
		if err != nil {
			return nil, err
		}
		return set.Scenarios, nil
	}}).Handler())
	defer api.Close()

	if code := getJSON(t, api.URL+"/healthz", nil); code != http.StatusServiceUnavailable {
		t.Errorf("/healthz before anything is served: %d", code)
	}
	if code := getJSON(t, api.URL+"/snapshots", nil); code != http.StatusServiceUnavailable {
		t.Errorf("/snapshots before anything is served: %d", code)
	}

	src := xdsserver.ScenarioSource{Loader: ld, Dir: scenarioRoot, Name: "request-mirror"}
	l, err := src.Load()
	if err != nil {
		t.Fatal(err)
	}
	version, _, err := s.Update(ctx, l)
	if err != nil {
		t.Fatal(err)
	}
	if code := getJSON(t, api.URL+"/healthz", nil); code != http.StatusOK {
		t.Errorf("/healthz: %d", code)
	}

	var view struct {
		Version  string `json:"version"`
		Source   string `json:"source"`
		Profile  string `json:"profile"`
		ServedTo string `json:"servedTo"`
		IR       struct {
			HTTP []struct {
				Name   string `json:"name"`
				Routes []struct {
					Name string `json:"name"`
				} `json:"routes"`
			} `json:"http"`
		} `json:"ir"`
		BackendClusters []struct {
			Name     string          `json:"name"`
			Routes   []string        `json:"routes"`
			Backends []any           `json:"backends"`
			XDS      json.RawMessage `json:"xds"`
		} `json:"backendClusters"`
		XDS struct {
			Listeners []map[string]any `json:"listeners"`
			Clusters  []map[string]any `json:"clusters"`
		} `json:"xds"`
	}
	if code := getJSON(t, api.URL+"/snapshots", &view); code != http.StatusOK {
		t.Fatalf("/snapshots: %d", code)
	}
	if view.Version != version || view.Profile != "v1.9" || !strings.Contains(view.Source, "request-mirror") ||
		view.ServedTo == "" {
		t.Errorf("/snapshots header: %+v", view)
	}
	if len(view.IR.HTTP) == 0 || len(view.IR.HTTP[0].Routes) == 0 {
		t.Errorf("/snapshots has no IR routes: %+v", view.IR)
	}
	// Every IR destination is a backend cluster, and is an xDS cluster (a mirror's too).
	res := s.Current().Loaded.Result
	if len(view.BackendClusters) == 0 || len(view.BackendClusters) != len(res.XDS.Clusters) {
		t.Errorf("backendClusters %d, xDS clusters %d", len(view.BackendClusters), len(res.XDS.Clusters))
	}
	for _, bc := range view.BackendClusters {
		if len(bc.Routes) == 0 || len(bc.Backends) == 0 || !strings.Contains(compact(t, bc.XDS), `"name":"`+bc.Name+`"`) {
			t.Errorf("backend cluster %s: routes %v, %d backends, xds %s", bc.Name, bc.Routes, len(bc.Backends), bc.XDS)
		}
	}
	if len(view.XDS.Listeners) == 0 ||
		view.XDS.Listeners[0]["@type"] != "type.googleapis.com/envoy.config.listener.v3.Listener" {
		t.Errorf("xds listeners are not protojson with @type: %v", view.XDS.Listeners)
	}

	var sl struct {
		Scenarios []xdsserver.ScenarioInfo `json:"scenarios"`
	}
	getJSON(t, api.URL+"/scenarios", &sl)
	serving := 0
	for _, si := range sl.Scenarios {
		if si.Serving {
			serving++
			if si.Name != "request-mirror" || si.Traffic == 0 || len(si.Covers) == 0 {
				t.Errorf("served scenario entry: %+v", si)
			}
		}
	}
	if len(sl.Scenarios) < 10 || serving != 1 {
		t.Errorf("/scenarios: %d scenarios, %d served", len(sl.Scenarios), serving)
	}

	var ev struct {
		Events []xdsserver.Event `json:"events"`
	}
	getJSON(t, api.URL+"/events", &ev)
	if len(ev.Events) != 1 || ev.Events[0].Kind != xdsserver.EventReload || ev.Events[0].Version != version {
		t.Errorf("/events: %+v", ev.Events)
	}

	// Loading the same scenario again changes nothing, so the version stays.
	l2, _ := src.Load()
	if v2, changed, err := s.Update(ctx, l2); err != nil || changed || v2 != version {
		t.Errorf("same xDS again: version %s changed %v err %v", v2, changed, err)
	}
	// A name that does not exist is an error that says so.
	if _, err := (xdsserver.ScenarioSource{Loader: ld, Dir: scenarioRoot, Name: "no-such"}).Load(); err == nil ||
		!strings.Contains(err.Error(), `"no-such"`) {
		t.Errorf("unknown scenario: %v", err)
	}
}

// The resolved backend policy fields are read from whatever the IR's JSON holds, under
// the names seed 002 and EG use; absent fields stay absent.
func TestResolvedPolicy(t *testing.T) {
	type backend struct {
		Name               string         `json:"name"`
		LoadBalancer       map[string]any `json:"loadBalancer,omitempty"`
		SessionPersistence map[string]any `json:"sessionPersistence,omitempty"`
		CircuitBreaker     map[string]any `json:"circuitBreaker,omitempty"`
	}
	lb, sp, cb, err := xdsserver.ResolvedPolicy(
		backend{Name: "a"},
		backend{Name: "b", LoadBalancer: map[string]any{"type": "ConsistentHash"},
			SessionPersistence: map[string]any{"sessionName": "s"}},
		backend{Name: "c", LoadBalancer: map[string]any{"type": "Random"}},
	)
	if err != nil {
		t.Fatal(err)
	}
	if string(lb) != `{"type":"ConsistentHash"}` || string(sp) != `{"sessionName":"s"}` || cb != nil {
		t.Errorf("lb %s sp %s cb %s", lb, sp, cb)
	}

	// Grouped one level down, as a policy stage may write them; deeper is not searched.
	type grouped struct {
		Name string         `json:"name"`
		LB   map[string]any `json:"lb,omitempty"`
		Deep map[string]any `json:"deep,omitempty"`
	}
	lb, sp, cb, err = xdsserver.ResolvedPolicy(
		grouped{Name: "a", Deep: map[string]any{"x": map[string]any{"loadBalancing": map[string]any{"type": "Random"}}}},
		grouped{Name: "b",
			LB: map[string]any{"policy": "default/p", "circuitBreaker": map[string]any{"maxInflightRequests": 200},
				"session_persistence": map[string]any{"cookieName": "c"}}},
	)
	if err != nil || lb != nil || string(cb) != `{"maxInflightRequests":200}` || string(sp) != `{"cookieName":"c"}` {
		t.Errorf("grouped: lb %s sp %s cb %s err %v", lb, sp, cb, err)
	}
}

func compact(t *testing.T, raw json.RawMessage) string {
	var b bytes.Buffer
	if err := json.Compact(&b, raw); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// A scenario whose file stops loading is reported with that file's error, not as a name
// that does not exist.
func TestScenarioSourceBrokenFile(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "scenarios")
	if err := os.MkdirAll(filepath.Join(dir, "routing"), 0o755); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join(scenarioRoot, "routing", "request-mirror.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(dir, "routing", "request-mirror.yaml")
	if err := os.WriteFile(file, data, 0o644); err != nil {
		t.Fatal(err)
	}
	ld := loader(t)
	ld.Root = dir
	src := xdsserver.ScenarioSource{Loader: ld, Dir: dir, Name: "request-mirror"}
	l, err := src.Load()
	if err != nil {
		t.Fatal(err)
	}
	if len(l.Files) != 1 || l.Files[0] != file {
		t.Errorf("files %v", l.Files)
	}
	if err := os.WriteFile(file, append(data, []byte("\nunknownField: 1\n")...), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err = src.Load()
	if err == nil || !strings.Contains(err.Error(), file) || !strings.Contains(err.Error(), "unknownField") {
		t.Errorf("broken scenario: %v", err)
	}
}
