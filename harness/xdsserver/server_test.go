package xdsserver_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	clusterv3 "github.com/envoyproxy/go-control-plane/envoy/config/cluster/v3"
	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	endpointv3 "github.com/envoyproxy/go-control-plane/envoy/config/endpoint/v3"
	listenerv3 "github.com/envoyproxy/go-control-plane/envoy/config/listener/v3"
	routev3 "github.com/envoyproxy/go-control-plane/envoy/config/route/v3"
	tlsv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/transport_sockets/tls/v3"
	discoverygrpc "github.com/envoyproxy/go-control-plane/envoy/service/discovery/v3"
	cachev3 "github.com/envoyproxy/go-control-plane/pkg/cache/v3"
	resourcev3 "github.com/envoyproxy/go-control-plane/pkg/resource/v3"
	"google.golang.org/genproto/googleapis/rpc/status"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/test/bufconn"
	"google.golang.org/protobuf/proto"

	"github.com/egharness/egharness/harness/scenario"
	"github.com/egharness/egharness/harness/scenario/scenariotest"
	"github.com/egharness/egharness/harness/xdsserver"
	"github.com/egharness/egharness/translator/admission"
	"github.com/egharness/egharness/translator/profile"
	"github.com/egharness/egharness/translator/resource"
)

const scenarioRoot = "../../scenarios"

func loader(t *testing.T) scenario.Loader {
	t.Helper()
	return scenariotest.Loader(t, scenarioRoot)
}

// writeObjects writes a scenario's objects (its include files, then its inline resources)
// to one file, the input of `serve -f`.
func writeObjects(t *testing.T, name string) string {
	t.Helper()
	set, err := loader(t).LoadPaths(scenarioRoot)
	if err != nil {
		t.Fatal(err)
	}
	sc := xdsserver.Find(set.Scenarios, name)
	if sc == nil {
		t.Fatalf("no scenario %s", name)
	}
	var buf bytes.Buffer
	for _, inc := range sc.Include {
		b, err := os.ReadFile(filepath.Join(filepath.Dir(sc.File), inc))
		if err != nil {
			t.Fatal(err)
		}
		buf.Write(b)
		buf.WriteString("\n---\n")
	}
	buf.WriteString(sc.Resources)
	path := filepath.Join(t.TempDir(), "objects.yaml")
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// adsClient is an ADS client speaking state of the world over a real gRPC stream, as
// Envoy does: one stream, every type on it, ACKs and NACKs by nonce.
type adsClient struct {
	t      *testing.T
	stream discoverygrpc.AggregatedDiscoveryService_StreamAggregatedResourcesClient
	node   *corev3.Node

	mu   sync.Mutex
	got  map[string][]*discoverygrpc.DiscoveryResponse
	cond chan struct{}
	err  error
}

func dial(t *testing.T, ctx context.Context, s *xdsserver.Server, nodeID string) *adsClient {
	t.Helper()
	lis := bufconn.Listen(1 << 20)
	g := grpc.NewServer()
	s.Register(g)
	go func() { _ = g.Serve(lis) }()
	t.Cleanup(g.Stop)
	conn, err := grpc.NewClient("passthrough:///bufnet",
		grpc.WithContextDialer(func(ctx context.Context, _ string) (net.Conn, error) { return lis.DialContext(ctx) }),
		grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = conn.Close() })
	stream, err := discoverygrpc.NewAggregatedDiscoveryServiceClient(conn).StreamAggregatedResources(ctx)
	if err != nil {
		t.Fatal(err)
	}
	c := &adsClient{t: t, stream: stream, node: &corev3.Node{Id: nodeID, Cluster: "test-cluster"},
		got: map[string][]*discoverygrpc.DiscoveryResponse{}, cond: make(chan struct{})}
	go c.recv()
	return c
}

func (c *adsClient) recv() {
	for {
		r, err := c.stream.Recv()
		c.mu.Lock()
		if err != nil {
			c.err = err
		} else {
			c.got[r.GetTypeUrl()] = append(c.got[r.GetTypeUrl()], r)
		}
		close(c.cond)
		c.cond = make(chan struct{})
		c.mu.Unlock()
		if err != nil {
			return
		}
	}
}

func (c *adsClient) send(req *discoverygrpc.DiscoveryRequest) {
	c.t.Helper()
	req.Node = c.node
	if err := c.stream.Send(req); err != nil {
		c.t.Fatalf("send: %v", err)
	}
}

// next waits for the next response of typeURL not yet taken.
func (c *adsClient) next(typeURL string, taken int) *discoverygrpc.DiscoveryResponse {
	c.t.Helper()
	deadline := time.After(10 * time.Second)
	for {
		c.mu.Lock()
		if len(c.got[typeURL]) > taken {
			r := c.got[typeURL][taken]
			c.mu.Unlock()
			return r
		}
		if c.err != nil {
			c.mu.Unlock()
			c.t.Fatalf("stream ended waiting for %s: %v", typeURL, c.err)
		}
		ch := c.cond
		c.mu.Unlock()
		select {
		case <-ch:
		case <-deadline:
			c.t.Fatalf("no %s response #%d within 10s", typeURL, taken+1)
		}
	}
}

// names decodes a response's resources and returns their names.
func names(t *testing.T, r *discoverygrpc.DiscoveryResponse) []string {
	t.Helper()
	var out []string
	for _, a := range r.GetResources() {
		var m proto.Message
		switch r.GetTypeUrl() {
		case resourcev3.ClusterType:
			m = &clusterv3.Cluster{}
		case resourcev3.EndpointType:
			m = &endpointv3.ClusterLoadAssignment{}
		case resourcev3.ListenerType:
			m = &listenerv3.Listener{}
		case resourcev3.RouteType:
			m = &routev3.RouteConfiguration{}
		case resourcev3.SecretType:
			m = &tlsv3.Secret{}
		}
		if err := a.UnmarshalTo(m); err != nil {
			t.Fatalf("%s: %v", r.GetTypeUrl(), err)
		}
		out = append(out, cachev3.GetResourceName(m))
	}
	sort.Strings(out)
	return out
}

// subscribe asks for every type as Envoy does after its first CDS and LDS answers: clusters
// and listeners by wildcard, the rest by the names the served xDS uses.
func subscribe(c *adsClient, want map[string][]string) {
	for _, typ := range xdsserver.TypeURLs {
		req := &discoverygrpc.DiscoveryRequest{TypeUrl: typ}
		if typ != resourcev3.ClusterType && typ != resourcev3.ListenerType {
			req.ResourceNames = want[typ]
		}
		c.send(req)
	}
}

func servedNames(st *xdsserver.State) map[string][]string {
	x := st.Loaded.Result.XDS
	out := map[string][]string{}
	for _, l := range x.Listeners {
		out[resourcev3.ListenerType] = append(out[resourcev3.ListenerType], l.GetName())
	}
	for _, r := range x.Routes {
		out[resourcev3.RouteType] = append(out[resourcev3.RouteType], r.GetName())
	}
	for _, cl := range x.Clusters {
		out[resourcev3.ClusterType] = append(out[resourcev3.ClusterType], cl.GetName())
	}
	for _, e := range x.Endpoints {
		out[resourcev3.EndpointType] = append(out[resourcev3.EndpointType], e.GetClusterName())
	}
	for _, s := range x.Secrets {
		out[resourcev3.SecretType] = append(out[resourcev3.SecretType], s.GetName())
	}
	for _, v := range out {
		sort.Strings(v)
	}
	return out
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestADSStream drives one real ADS stream through the whole life of a served file: every
// resource type arrives with the snapshot version, ACKs are recorded, an edit of the
// watched file sends a new version, a NACK is recorded with the refused version and its
// message, and a broken edit keeps the last good snapshot.
func TestADSStream(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	logs := &syncBuffer{}
	s := xdsserver.New(ctx, xdsserver.Options{Logger: slog.New(slog.NewTextHandler(logs, nil))})

	file := writeObjects(t, "https-listeners-share-port")
	p, _ := profile.Get("v1.9")
	src := xdsserver.FileSource{Path: file, Profile: p, Namespace: "default"}
	l, err := src.Load()
	if err != nil {
		t.Fatal(err)
	}
	v1, changed, err := s.Update(ctx, l)
	if err != nil || !changed {
		t.Fatalf("first update: %v %v", changed, err)
	}
	want := servedNames(s.Current())
	for _, typ := range xdsserver.TypeURLs {
		if len(want[typ]) == 0 {
			t.Fatalf("the test input serves no %s", typ)
		}
	}

	c := dial(t, ctx, s, "envoy-1")
	subscribe(c, want)
	for _, typ := range xdsserver.TypeURLs {
		r := c.next(typ, 0)
		if r.GetVersionInfo() != v1 {
			t.Errorf("%s: version %q, want %q", typ, r.GetVersionInfo(), v1)
		}
		if got := names(t, r); !slices.Equal(got, want[typ]) {
			t.Errorf("%s: got %v, want %v", typ, got, want[typ])
		}
		c.send(&discoverygrpc.DiscoveryRequest{TypeUrl: typ, VersionInfo: r.GetVersionInfo(), ResponseNonce: r.GetNonce(),
			ResourceNames: reqNames(typ, want)})
	}
	wait(t, s, func(n []xdsserver.NodeStatus) bool {
		return xdsserver.AckedAll(n, "envoy-1", v1, xdsserver.TypeURLs...)
	})

	// Edit the watched file: one more hostname on the route, so a new virtual host.
	go func() { _ = xdsserver.Watch(ctx, s, src, l.Files) }()
	time.Sleep(100 * time.Millisecond) // let the watcher start
	data, _ := os.ReadFile(file)
	edited := strings.Replace(string(data), "hostnames: [www.example.com, api.example.com, blog.example.com]",
		"hostnames: [www.example.com, api.example.com, blog.example.com, shop.example.com]", 1)
	if edited == string(data) {
		t.Fatal("the edit changed nothing")
	}
	if err := os.WriteFile(file, []byte(edited), 0o644); err != nil {
		t.Fatal(err)
	}
	r := c.next(resourcev3.RouteType, 1)
	v2 := r.GetVersionInfo()
	if v2 == v1 || v2 != s.Current().Version {
		t.Fatalf("after the edit RDS came with version %q (first %q, served %q)", v2, v1, s.Current().Version)
	}
	if !strings.Contains(protoText(t, r), "shop.example.com") {
		t.Errorf("the new route configuration lacks the new hostname")
	}

	// Refuse it: a NACK carries the last accepted version and error_detail.
	c.send(&discoverygrpc.DiscoveryRequest{TypeUrl: resourcev3.RouteType, VersionInfo: v1, ResponseNonce: r.GetNonce(),
		ResourceNames: want[resourcev3.RouteType],
		ErrorDetail:   &status.Status{Code: 3, Message: "route: invalid virtual host"}})
	wait(t, s, func(nodes []xdsserver.NodeStatus) bool {
		for _, n := range nodes {
			if nk := n.Nacked[resourcev3.RouteType]; n.ID == "envoy-1" && nk != nil {
				return nk.Version == v2 && nk.Error == "route: invalid virtual host"
			}
		}
		return false
	})
	var nack *xdsserver.Event
	for _, e := range s.Events() {
		if e.Kind == xdsserver.EventNACK {
			nack = &e
		}
	}
	if nack == nil || nack.Node != "envoy-1" || nack.Version != v2 || nack.TypeURL != resourcev3.RouteType {
		t.Errorf("NACK event: %+v", nack)
	}
	if !strings.Contains(logs.String(), "NACK") || !strings.Contains(logs.String(), "route: invalid virtual host") {
		t.Errorf("the NACK is not in the log:\n%s", logs.String())
	}
	// The management API shows it too.
	api := httptest.NewServer((&xdsserver.API{Server: s}).Handler())
	defer api.Close()
	var view struct {
		Version string                 `json:"version"`
		Nodes   []xdsserver.NodeStatus `json:"nodes"`
	}
	getJSON(t, api.URL+"/snapshots", &view)
	// The served secrets are named at /snapshots, their private keys are not shown.
	var raw struct {
		XDS struct {
			Secrets []json.RawMessage `json:"secrets"`
		} `json:"xds"`
	}
	getJSON(t, api.URL+"/snapshots", &raw)
	if len(raw.XDS.Secrets) == 0 {
		t.Error("/snapshots shows no secrets")
	}
	for _, sec := range raw.XDS.Secrets {
		var s struct {
			TLSCertificate struct {
				PrivateKey map[string]string `json:"privateKey"`
			} `json:"tlsCertificate"`
		}
		if err := json.Unmarshal(sec, &s); err != nil {
			t.Fatal(err)
		}
		if len(s.TLSCertificate.PrivateKey) != 1 || s.TLSCertificate.PrivateKey["inlineString"] != "[redacted]" {
			t.Errorf("a private key is shown: %v", s.TLSCertificate.PrivateKey)
		}
	}
	if tc := s.Current().Loaded.Result.XDS.Secrets[0].GetTlsCertificate(); len(tc.GetPrivateKey().GetInlineBytes()) == 0 &&
		tc.GetPrivateKey().GetInlineString() == "" {
		t.Error("redaction touched the served secret")
	}
	if view.Version != v2 || len(view.Nodes) != 1 || view.Nodes[0].Nacked[resourcev3.RouteType] == nil ||
		view.Nodes[0].Acked[resourcev3.ClusterType] != v1 {
		t.Errorf("/snapshots nodes: %+v (version %s)", view.Nodes, view.Version)
	}

	// A broken edit is reported and the last good snapshot stays.
	if err := os.WriteFile(file, []byte("kind: [unclosed"), 0o644); err != nil {
		t.Fatal(err)
	}
	waitEvent(t, s, xdsserver.EventReloadError)
	if s.Current().Version != v2 {
		t.Errorf("a failed reload changed the version to %s", s.Current().Version)
	}
	for _, e := range s.Events() {
		if e.Kind == xdsserver.EventReloadError && !strings.Contains(e.Error, file) {
			t.Errorf("reload error does not name the file: %s", e.Error)
		}
	}
}

func reqNames(typ string, want map[string][]string) []string {
	if typ == resourcev3.ClusterType || typ == resourcev3.ListenerType {
		return nil
	}
	return want[typ]
}

func protoText(t *testing.T, r *discoverygrpc.DiscoveryResponse) string {
	var b strings.Builder
	for _, a := range r.GetResources() {
		rc := &routev3.RouteConfiguration{}
		if err := a.UnmarshalTo(rc); err != nil {
			t.Fatal(err)
		}
		for _, vh := range rc.GetVirtualHosts() {
			b.WriteString(strings.Join(vh.GetDomains(), " ") + "\n")
		}
	}
	return b.String()
}

func wait(t *testing.T, s *xdsserver.Server, cond func([]xdsserver.NodeStatus) bool) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := s.WaitFor(ctx, cond); err != nil {
		t.Fatalf("waiting: %v; nodes %+v; events %+v", err, s.Nodes(), s.Events())
	}
}

func waitEvent(t *testing.T, s *xdsserver.Server, kind string) {
	t.Helper()
	wait(t, s, func([]xdsserver.NodeStatus) bool {
		for _, e := range s.Events() {
			if e.Kind == kind {
				return true
			}
		}
		return false
	})
}

func getJSON(t *testing.T, url string, v any) int {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode == http.StatusOK && v != nil {
		if err := json.Unmarshal(b, v); err != nil {
			t.Fatalf("%s: %v\n%s", url, err, b)
		}
	}
	return resp.StatusCode
}

// TestEveryScenarioServes: each scenario's translation under each of its profiles is a
// consistent snapshot an ADS client can be served.
func TestEveryScenarioServes(t *testing.T) {
	set, err := loader(t).LoadPaths(scenarioRoot)
	if err != nil {
		t.Fatal(err)
	}
	for _, sc := range set.Scenarios {
		for _, p := range sc.ProfilesOrDefault() {
			l, err := xdsserver.Translate(sc, p)
			if err != nil {
				t.Errorf("%s [%s]: %v", sc.Name, p, err)
				continue
			}
			if _, err := xdsserver.NewSnapshot("1", &l.Result.XDS); err != nil {
				t.Errorf("%s [%s]: %v", sc.Name, p, err)
			}
		}
	}
}

// `touch` reloads (it changes only the file's times), and a reload admits again only the
// objects an edit changed: the other verdicts come from the memo of the previous load, and
// the documents' JSON forms from the decode cache.
func TestWatchTouchAndMemo(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	s := xdsserver.New(ctx, xdsserver.Options{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	file := writeObjects(t, "https-listeners-share-port")
	p, _ := profile.Get("v1.9")
	memo := &admission.Memo{}
	src := xdsserver.FileSource{Path: file, Profile: p, Namespace: "default", Memo: memo, Decoded: &resource.JSONCache{}}
	l, err := src.Load()
	if err != nil {
		t.Fatal(err)
	}
	documents := src.Decoded.Len()
	hits, objects := memo.Stats()
	if objects == 0 || hits != 0 {
		t.Fatalf("first load: %d hits, %d misses", hits, objects)
	}
	if _, _, err := s.Update(ctx, l); err != nil {
		t.Fatal(err)
	}
	go func() { _ = xdsserver.Watch(ctx, s, src, l.Files) }()
	time.Sleep(100 * time.Millisecond) // let the watcher start
	later := time.Now().Add(time.Minute)
	if err := os.Chtimes(file, later, later); err != nil {
		t.Fatal(err)
	}
	waitEvent(t, s, xdsserver.EventUnchanged)
	if hits, misses := memo.Stats(); hits != objects || misses != 0 {
		t.Errorf("reload after touch: %d hits, %d misses, want %d hits", hits, misses, objects)
	}
	if documents < objects || src.Decoded.Len() != documents {
		t.Errorf("decode cache: %d documents after the first load (%d objects), %d after the reload",
			documents, objects, src.Decoded.Len())
	}
}
