package xdsserver

import (
	"encoding/json"
	"net/http"
	"sort"
	"time"

	clusterv3 "github.com/envoyproxy/go-control-plane/envoy/config/cluster/v3"
	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	tlsv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/transport_sockets/tls/v3"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"

	"github.com/egharness/egharness/harness/scenario"
	"github.com/egharness/egharness/translator/ir"
	"github.com/egharness/egharness/translator/result"
)

// API is the management HTTP API (port 19080 by default):
//
//	GET /healthz    200 "ok" once something is served, 503 before
//	GET /snapshots  the served version, the IR, each backend cluster's resolved policy
//	                fields, the xDS (protojson) and every node's ACKs and NACKs
//	GET /events     ACKs, NACKs and reloads, oldest first
//	GET /scenarios  the scenarios that can be served, and which one is
type API struct {
	Server *Server
	// Scenarios lists the scenarios (nil: /scenarios answers an empty list).
	Scenarios func() ([]*scenario.Scenario, error)
}

// Handler routes the API's paths.
func (a *API) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /healthz", a.healthz)
	mux.HandleFunc("GET /snapshots", a.snapshots)
	mux.HandleFunc("GET /events", a.events)
	mux.HandleFunc("GET /scenarios", a.scenarios)
	return mux
}

func (a *API) healthz(w http.ResponseWriter, _ *http.Request) {
	if a.Server.Current() == nil {
		http.Error(w, "no snapshot served yet", http.StatusServiceUnavailable)
		return
	}
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	_, _ = w.Write([]byte("ok\n"))
}

// SnapshotView is the /snapshots answer.
type SnapshotView struct {
	Version  string    `json:"version"`
	Source   string    `json:"source"`
	Profile  string    `json:"profile"`
	LoadedAt time.Time `json:"loadedAt"`
	// ServedTo says which nodes get this snapshot: every node (see NodeGroup).
	ServedTo string `json:"servedTo"`
	// IR is the reference translator's intermediate model of the served translation.
	IR *ir.XDS `json:"ir"`
	// BackendClusters are the IR's destinations, one per xDS cluster, with their resolved
	// load balancing, session persistence and circuit breaker settings where they exist.
	BackendClusters []BackendCluster `json:"backendClusters"`
	// XDS is the served resources as protojson, the same for every node; private keys
	// are replaced by "[redacted]" (the API has no authentication).
	XDS      result.XDS            `json:"xds"`
	Statuses []result.ObjectStatus `json:"statuses"`
	Warnings []string              `json:"warnings"`
	Nodes    []NodeStatus          `json:"nodes"`
}

// View builds the /snapshots answer for what is served now (nil before the first Update).
func (s *Server) View() (*SnapshotView, error) {
	st := s.Current()
	if st == nil {
		return nil, nil
	}
	res := st.Loaded.Result
	clusters, err := BackendClusters(res)
	if err != nil {
		return nil, err
	}
	return &SnapshotView{
		Version: st.Version, Source: st.Loaded.Source, Profile: st.Loaded.Profile, LoadedAt: st.LoadedAt,
		ServedTo: "every node (node group " + NodeGroup + ")",
		IR:       res.IR, BackendClusters: clusters, XDS: redacted(res.XDS),
		Statuses: res.Statuses, Warnings: res.Warnings, Nodes: s.Nodes(),
	}, nil
}

func (a *API) snapshots(w http.ResponseWriter, _ *http.Request) {
	v, err := a.Server.View()
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	if v == nil {
		http.Error(w, "no snapshot served yet", http.StatusServiceUnavailable)
		return
	}
	writeJSON(w, v)
}

func (a *API) events(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, map[string]any{"events": a.Server.Events()})
}

// ScenarioInfo is one entry of /scenarios.
type ScenarioInfo struct {
	Name     string   `json:"name"`
	Area     string   `json:"area"`
	File     string   `json:"file"`
	Covers   []string `json:"covers"`
	Profiles []string `json:"profiles"`
	// Traffic is the number of traffic expectations (what the kind suite replays).
	Traffic int  `json:"traffic"`
	Serving bool `json:"serving,omitempty"`
}

func (a *API) scenarios(w http.ResponseWriter, _ *http.Request) {
	out := []ScenarioInfo{}
	if a.Scenarios != nil {
		set, err := a.Scenarios()
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		serving := ""
		if st := a.Server.Current(); st != nil {
			serving = st.Loaded.Source
		}
		for _, sc := range set {
			n := len(sc.Expect.Traffic)
			out = append(out, ScenarioInfo{
				Name: sc.Name, Area: sc.Area, File: sc.File, Covers: sc.Covers, Profiles: sc.ProfilesOrDefault(),
				Traffic: n, Serving: serving == "scenario "+sc.Name+" ("+sc.File+")",
			})
		}
		sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	}
	writeJSON(w, map[string]any{"scenarios": out})
}

func writeJSON(w http.ResponseWriter, v any) {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write(append(b, '\n'))
}

// BackendCluster is one destination of the IR as the xDS cluster it becomes.
type BackendCluster struct {
	Name string `json:"name"`
	// Routes are the IR routes (or TCP/UDP routes) that send traffic to it.
	Routes   []string      `json:"routes"`
	Backends []*ir.Backend `json:"backends"`
	// The resolved backend policy fields (BLP-08), present only when the IR holds them.
	LoadBalancing      json.RawMessage `json:"loadBalancing,omitempty"`
	SessionPersistence json.RawMessage `json:"session_persistence,omitempty"`
	CircuitBreaker     json.RawMessage `json:"circuitBreaker,omitempty"`
	// XDS is what Envoy is told: the cluster's discovery type, lb_policy,
	// load_balancing_policy, circuit_breakers and common_lb_config (protojson).
	XDS json.RawMessage `json:"xds,omitempty"`
}

// policyKeys maps the JSON names an IR destination or backend may give its resolved
// backend policy fields to the names /snapshots shows (seed 002's). The IR is read through
// its JSON form so whatever fields the policy stages add show up without this package
// naming their Go types.
var policyKeys = map[string]string{
	"loadBalancing":       "loadBalancing",
	"loadBalancer":        "loadBalancing",
	"session_persistence": "session_persistence",
	"sessionPersistence":  "session_persistence",
	"circuitBreaker":      "circuitBreaker",
	"circuitBreakers":     "circuitBreaker",
}

// BackendClusters lists the IR's destinations by cluster name, in name order.
func BackendClusters(res *result.Result) ([]BackendCluster, error) {
	byName := map[string]*BackendCluster{}
	var order []string
	add := func(route string, d *ir.Destination) error {
		bc := byName[d.Name]
		if bc == nil {
			bc = &BackendCluster{Name: d.Name, Routes: []string{}, Backends: d.Settings}
			byName[d.Name] = bc
			order = append(order, d.Name)
			if err := bc.policyFields(d); err != nil {
				return err
			}
		}
		bc.Routes = append(bc.Routes, route)
		return nil
	}
	for route, d := range res.IR.Destinations() {
		if err := add(route, d); err != nil {
			return nil, err
		}
	}
	sort.Strings(order)
	out := make([]BackendCluster, 0, len(order))
	for _, name := range order {
		bc := byName[name]
		sort.Strings(bc.Routes)
		bc.Routes = compact(bc.Routes)
		if c := findCluster(res.XDS.Clusters, name); c != nil {
			raw, err := clusterPolicyJSON(c)
			if err != nil {
				return nil, err
			}
			bc.XDS = raw
		}
		out = append(out, *bc)
	}
	return out, nil
}

// policyFields copies the resolved policy fields of the destination, or of its backends
// when they are set per backend (a policy that targets one Service of several).
func (bc *BackendCluster) policyFields(d *ir.Destination) error {
	values := []any{d}
	for _, b := range d.Settings {
		values = append(values, b)
	}
	var err error
	bc.LoadBalancing, bc.SessionPersistence, bc.CircuitBreaker, err = ResolvedPolicy(values...)
	return err
}

// ResolvedPolicy finds the load balancing, session persistence and circuit breaker fields
// in the JSON form of values (IR destinations and backends), first value first, at the top
// level or one object down (a policy stage may group them, e.g. under "lb"); nil for a
// field none of them sets. Keys are visited in sorted order, so the answer never depends on
// map order.
func ResolvedPolicy(values ...any) (lb, sp, cb json.RawMessage, err error) {
	var visit func(m map[string]json.RawMessage, depth int)
	visit = func(m map[string]json.RawMessage, depth int) {
		keys := make([]string, 0, len(m))
		for k := range m {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			raw := m[k]
			if string(raw) == "null" {
				continue
			}
			switch policyKeys[k] {
			case "loadBalancing":
				if lb == nil {
					lb = raw
				}
			case "session_persistence":
				if sp == nil {
					sp = raw
				}
			case "circuitBreaker":
				if cb == nil {
					cb = raw
				}
			default:
				var inner map[string]json.RawMessage
				if depth == 0 && json.Unmarshal(raw, &inner) == nil {
					visit(inner, depth+1)
				}
			}
		}
	}
	for _, v := range values {
		b, err := json.Marshal(v)
		if err != nil {
			return nil, nil, nil, err
		}
		var m map[string]json.RawMessage
		if err := json.Unmarshal(b, &m); err != nil {
			continue // not an object: nothing to find
		}
		visit(m, 0)
	}
	return lb, sp, cb, nil
}

func compact(s []string) []string {
	out := s[:0]
	for i, v := range s {
		if i == 0 || v != s[i-1] {
			out = append(out, v)
		}
	}
	return out
}

func findCluster(cs []*clusterv3.Cluster, name string) *clusterv3.Cluster {
	for _, c := range cs {
		if c.GetName() == name {
			return c
		}
	}
	return nil
}

// clusterPolicyJSON is the part of a cluster that says how Envoy balances and limits it.
func clusterPolicyJSON(c *clusterv3.Cluster) (json.RawMessage, error) {
	part := &clusterv3.Cluster{
		Name:                 c.GetName(),
		ClusterDiscoveryType: c.GetClusterDiscoveryType(),
		LbPolicy:             c.GetLbPolicy(),
		LoadBalancingPolicy:  c.GetLoadBalancingPolicy(),
		CircuitBreakers:      c.GetCircuitBreakers(),
		CommonLbConfig:       c.GetCommonLbConfig(),
		LbConfig:             c.GetLbConfig(),
	}
	b, err := protojson.MarshalOptions{EmitUnpopulated: false}.Marshal(part)
	if err != nil {
		return nil, err
	}
	return json.RawMessage(b), nil
}

// redacted is x with every secret's private key replaced: the management API shows which
// certificates are served, never their keys.
func redacted(x result.XDS) result.XDS {
	out := x
	out.Secrets = make([]*tlsv3.Secret, len(x.Secrets))
	for i, sec := range x.Secrets {
		c := proto.Clone(sec).(*tlsv3.Secret)
		if tc := c.GetTlsCertificate(); tc != nil && tc.GetPrivateKey() != nil {
			tc.PrivateKey = &corev3.DataSource{Specifier: &corev3.DataSource_InlineString{InlineString: "[redacted]"}}
		}
		out.Secrets[i] = c
	}
	return out
}
