package live_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"golang.org/x/net/http2"
	"golang.org/x/net/http2/h2c"
	"google.golang.org/grpc/codes"

	"github.com/egharness/egharness/harness/check"
	"github.com/egharness/egharness/harness/live"
	"github.com/egharness/egharness/harness/routecheck"
	"github.com/egharness/egharness/harness/scenario"
	"github.com/egharness/egharness/harness/scenario/scenariotest"
	"github.com/egharness/egharness/harness/xdsserver"
	"github.com/egharness/egharness/internal/testutil"
	"github.com/egharness/egharness/translator/profile"
	"github.com/egharness/egharness/translator/result"
)

const scenarioRoot = "../../scenarios"

func scenarios(t *testing.T) []*scenario.Scenario {
	t.Helper()
	return scenariotest.Load(t, scenarioRoot).Scenarios
}

// fakeEnvoy answers real HTTP, HTTP/2 and TLS connections the way the offline route checker
// says Envoy would, with echo-basic's reply when a backend is reached (from the echo
// stand-in pod of that backend, or from pod wrongEcho when set). It lets the replay client
// and the comparison run end to end without a cluster; in kind a real Envoy takes its place.
type fakeEnvoy struct {
	table    *routecheck.Table
	res      *result.Result
	port     uint32
	gateway  string            // the Gateway whose proxy this is, when Gateways share a port
	echoName map[string]string // backend key → echo name
	wrong    bool
}

func (f *fakeEnvoy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	req := scenario.Request{Port: f.port, Gateway: f.gateway, Host: r.Host, Path: r.URL.RequestURI(), Method: r.Method,
		Headers: map[string]string{}}
	for k, v := range r.Header {
		req.Headers[strings.ToLower(k)] = strings.Join(v, ",")
	}
	if r.TLS != nil {
		req.SNI = r.TLS.ServerName
	}
	random := rand.Uint64()
	req.Random = &random
	a, err := check.Send(f.table, &f.res.XDS, req)
	if err != nil {
		panic(http.ErrAbortHandler) // Envoy resets what it cannot take
	}
	grpc := strings.HasPrefix(r.Header.Get("Content-Type"), "application/grpc")
	if a.Cluster != "" && a.Status == 200 {
		b := live.Localities(f.res.IR)[a.Backend]
		name := f.echoName[live.BackendKey(b)]
		if f.wrong {
			name = "echo-99"
		}
		reply := live.EchoReply{Pod: name + "-5d8f9c7b6-x2x9k", Namespace: live.Namespace, Method: r.Method,
			Host: a.RequestHeaders[":authority"], Path: a.RequestHeaders[":path"], Headers: map[string][]string{}}
		for k, v := range a.RequestHeaders {
			if !strings.HasPrefix(k, ":") {
				reply.Headers[http.CanonicalHeaderKey(k)] = []string{v}
			}
		}
		_ = json.NewEncoder(w).Encode(reply)
		return
	}
	if grpc { // Envoy's local replies to gRPC are trailers-only with a grpc-status
		w.Header().Set("grpc-status", strconv.Itoa(int(grpcCode(check.GRPCStatus(a.Status)))))
		w.WriteHeader(200)
		return
	}
	if a.Location != "" {
		w.Header().Set("Location", a.Location)
	}
	w.WriteHeader(a.Status)
	_, _ = w.Write([]byte(a.Body))
}

func grpcCode(name string) codes.Code {
	for c := codes.OK; c <= codes.Unauthenticated; c++ {
		if live.CodeName(c) == name {
			return c
		}
	}
	return codes.Unknown
}

// replayAll sends every traffic expectation of sc to fake Envoys (one per port) and returns
// the comparison's differences and how many requests were compared.
func replayAll(t *testing.T, sc *scenario.Scenario, wrong bool) (diffs []string, compared int) {
	t.Helper()
	l, err := xdsserver.Translate(sc, "")
	if err != nil {
		t.Fatal(err)
	}
	res := l.Result
	table, err := routecheck.New(res.XDS.Listeners, res.XDS.Routes)
	if err != nil {
		t.Fatal(err)
	}
	echoes := map[string]string{}
	echoName := map[string]string{}
	for _, e := range live.EchoBackends(live.Backends(res.IR)) {
		echoes[e.Name] = e.Backend
		echoName[e.Backend] = e.Name
	}
	// One fake Envoy per port, and per Gateway when a request names one (Gateways that
	// share a port have proxies of their own).
	type key struct {
		port    uint32
		gateway string
	}
	addrs := map[key]string{}
	addr := func(port uint32, gateway string, tlsPort bool) string {
		if a, ok := addrs[key{port, gateway}]; ok {
			return a
		}
		h := &fakeEnvoy{table: table, res: res, port: port, gateway: gateway, echoName: echoName, wrong: wrong}
		var srv *httptest.Server
		if tlsPort {
			srv = httptest.NewUnstartedServer(h)
			srv.EnableHTTP2 = true
			srv.StartTLS()
		} else {
			srv = httptest.NewServer(h2c.NewHandler(h, &http2.Server{}))
		}
		t.Cleanup(srv.Close)
		addrs[key{port, gateway}] = strings.TrimPrefix(strings.TrimPrefix(srv.URL, "http://"), "https://")
		return addrs[key{port, gateway}]
	}
	for i, te := range sc.ExpectFor(l.Profile).Traffic {
		port := live.EnvoyPort(&res.XDS, te.Request.Port)
		exp := live.Expect(table, res, te.Request)
		gw := te.Request.Gateway
		addr(port, gw, exp.TLS || te.Request.SNI != "")
		if exp.Skip != "" {
			continue
		}
		client := live.Client{Addr: func(p uint32) string { return addrs[key{p, gw}] }}
		obs := client.Do(context.Background(), te.Request, port, exp.TLS)
		if live.IsNotReplayable(obs) {
			continue
		}
		compared++
		for _, d := range live.Compare(exp, te.Request, te.Expect, obs, echoes) {
			diffs = append(diffs, fmt.Sprintf("%s traffic[%d]: %s", sc.Name, i, d))
		}
	}
	return diffs, compared
}

// TestReplayEveryScenario replays every scenario's traffic as real requests (HTTP/1.1,
// gRPC over h2c and h2, TLS with SNI, raw TCP) to fake Envoys and compares the answers with
// the offline checker's: the request building, the reading of echo replies and gRPC
// statuses, and the comparison must agree with themselves on every scenario.
func TestReplayEveryScenario(t *testing.T) {
	total := 0
	for _, sc := range scenarios(t) {
		if len(sc.Expect.Traffic) == 0 {
			continue
		}
		diffs, n := replayAll(t, sc, false)
		total += n
		for _, d := range diffs {
			t.Error(d)
		}
	}
	t.Logf("%d requests compared", total)
	if total < 50 {
		t.Errorf("only %d requests compared", total)
	}
}

// A backend answering from the wrong stand-in is reported.
func TestReplayWrongBackend(t *testing.T) {
	var sc *scenario.Scenario
	for _, s := range scenarios(t) {
		if s.Name == "header-modifiers" {
			sc = s
		}
	}
	if sc == nil {
		t.Fatal("no header-modifiers scenario")
	}
	diffs, n := replayAll(t, sc, true)
	if n == 0 || len(diffs) == 0 || !strings.Contains(strings.Join(diffs, "\n"), `reached backend ""`) {
		t.Errorf("%d compared, diffs %v", n, diffs)
	}
}

func TestCompare(t *testing.T) {
	routed := live.Expectation{Answer: check.Answer{Answer: routecheck.Answer{Cluster: "c", Status: 200},
		RequestHeaders: map[string]string{"x-env": "prod", ":path": "/v2"}}, Backends: []string{"default/a"}}
	echoes := map[string]string{"echo-0": "default/a", "echo-1": "default/b"}
	want := scenario.TrafficResult{RequestHeaders: map[string]string{"X-Env": "prod", ":path": "/v2", "x-gone": ""}}
	ok := live.Observation{Status: 200,
		Echo: &live.EchoReply{Pod: "echo-0-abc-def", Path: "/v2", Headers: map[string][]string{"X-Env": {"prod"}}}}
	if d := live.Compare(routed, scenario.Request{}, want, ok, echoes); len(d) != 0 {
		t.Errorf("clean: %v", d)
	}
	bad := live.Observation{Status: 200,
		Echo: &live.EchoReply{Pod: "echo-1-abc-def", Path: "/v1", Headers: map[string][]string{"X-Gone": {"1"}}}}
	d := live.Compare(routed, scenario.Request{}, want, bad, echoes)
	if len(d) != 4 { // backend, x-env absent, :path, x-gone present
		t.Errorf("differences %v", d)
	}
	local := live.Expectation{Answer: check.Answer{Answer: routecheck.Answer{Status: 302, Location: "https://a/"}}}
	if d := live.Compare(local, scenario.Request{}, scenario.TrafficResult{},
		live.Observation{Status: 301, Location: "http://a/"}, echoes); len(d) != 2 {
		t.Errorf("redirect differences %v", d)
	}
	if d := live.Compare(local, scenario.Request{}, scenario.TrafficResult{}, ok, echoes); len(d) != 1 {
		t.Errorf("a backend answering a local reply: %v", d)
	}
	refused := live.Expectation{Err: net.ErrClosed}
	if d := live.Compare(refused, scenario.Request{}, scenario.TrafficResult{}, live.Observation{Status: 404},
		echoes); len(d) != 1 {
		t.Errorf("an answer where none is due: %v", d)
	}
	grpcLocal := live.Expectation{Answer: check.Answer{Answer: routecheck.Answer{Status: 404}}}
	if d := live.Compare(grpcLocal, scenario.Request{GRPC: true}, scenario.TrafficResult{},
		live.Observation{Status: 200, GRPCStatus: "UNIMPLEMENTED"}, echoes); len(d) != 0 {
		t.Errorf("gRPC 404: %v", d)
	}
	if live.EchoName("echo-12-5d8f9c7b6-x2x9k") != "echo-12" ||
		live.CodeName(codes.PermissionDenied) != "PERMISSION_DENIED" || live.CodeName(codes.OK) != "OK" ||
		live.CodeName(codes.DeadlineExceeded) != "DEADLINE_EXCEEDED" {
		t.Error("names")
	}
}

// TLS passthrough is not replayed: the stand-ins cannot answer a TLS handshake.
func TestPassthroughNotReplayed(t *testing.T) {
	const objects = testutil.GatewayClass + `---
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: eg, namespace: default}
spec:
  gatewayClassName: eg
  listeners:
  - {name: tls, protocol: TLS, port: 8443, tls: {mode: Passthrough}}
---
apiVersion: v1
kind: Service
metadata: {name: db, namespace: default}
spec: {clusterIP: 10.96.0.20, ports: [{port: 5432}]}
---
apiVersion: gateway.networking.k8s.io/v1
kind: TLSRoute
metadata: {name: db, namespace: default}
spec:
  parentRefs: [{name: eg}]
  hostnames: [db.example.com]
  rules:
  - backendRefs: [{name: db, port: 5432}]
`
	path := filepath.Join(t.TempDir(), "objects.yaml")
	if err := os.WriteFile(path, []byte(objects), 0o644); err != nil {
		t.Fatal(err)
	}
	p, _ := profile.Get("v1.9")
	l, err := xdsserver.FileSource{Path: path, Profile: p, Namespace: "default"}.Load()
	if err != nil {
		t.Fatal(err)
	}
	table, err := routecheck.New(l.Result.XDS.Listeners, l.Result.XDS.Routes)
	if err != nil {
		t.Fatal(err)
	}
	exp := live.Expect(table, l.Result, scenario.Request{Protocol: "TCP", Port: 8443, SNI: "db.example.com"})
	if exp.Err != nil || exp.Answer.Cluster == "" || !strings.Contains(exp.Skip, "TLS passthrough") {
		t.Errorf("%+v", exp)
	}
}
