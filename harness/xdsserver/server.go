package xdsserver

import (
	"context"
	"fmt"
	"log/slog"
	"sort"
	"strings"
	"sync"
	"time"

	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	clusterservice "github.com/envoyproxy/go-control-plane/envoy/service/cluster/v3"
	discoverygrpc "github.com/envoyproxy/go-control-plane/envoy/service/discovery/v3"
	endpointservice "github.com/envoyproxy/go-control-plane/envoy/service/endpoint/v3"
	listenerservice "github.com/envoyproxy/go-control-plane/envoy/service/listener/v3"
	routeservice "github.com/envoyproxy/go-control-plane/envoy/service/route/v3"
	secretservice "github.com/envoyproxy/go-control-plane/envoy/service/secret/v3"
	cachev3 "github.com/envoyproxy/go-control-plane/pkg/cache/v3"
	"github.com/envoyproxy/go-control-plane/pkg/log"
	serverv3 "github.com/envoyproxy/go-control-plane/pkg/server/v3"
	"google.golang.org/grpc"
)

// NodeGroup is the one key of the snapshot cache. Every node, whatever its ID, is served
// the same snapshot: a harness serves one translation at a time (a scenario's Gateways all
// together, as EG's mergeGateways does), and an Envoy started with any --service-node
// works. ACKs and NACKs are still recorded per node ID.
const NodeGroup = "egharness"

type allNodes struct{}

func (allNodes) ID(*corev3.Node) string { return NodeGroup }

// Event kinds.
const (
	EventRequest     = "REQUEST" // a stream's first request for a type
	EventACK         = "ACK"
	EventNACK        = "NACK"
	EventReload      = "RELOAD"
	EventReloadError = "RELOAD_ERROR"
	EventUnchanged   = "UNCHANGED" // a reload that produced the same xDS
)

// Event is one thing the server saw, in the order it saw them.
type Event struct {
	Time    time.Time `json:"time"`
	Kind    string    `json:"kind"`
	Node    string    `json:"node,omitempty"`
	Stream  int64     `json:"stream,omitempty"`
	TypeURL string    `json:"typeUrl,omitempty"`
	// Version is the version ACKed, NACKed (the one the node refused) or loaded.
	Version string `json:"version,omitempty"`
	Nonce   string `json:"nonce,omitempty"`
	// Error is a NACK's error_detail message, or why a reload failed.
	Error  string `json:"error,omitempty"`
	Source string `json:"source,omitempty"`
}

// NodeStatus is what one node has acknowledged and refused, per resource type.
type NodeStatus struct {
	ID       string            `json:"id"`
	Cluster  string            `json:"cluster,omitempty"`
	Streams  int               `json:"openStreams"`
	Acked    map[string]string `json:"acked"` // type URL → version
	Nacked   map[string]*Nack  `json:"nacked,omitempty"`
	LastSeen time.Time         `json:"lastSeen"`
}

// Nack is a node's last refusal of a type.
type Nack struct {
	Version string    `json:"version"`
	Error   string    `json:"error"`
	Time    time.Time `json:"time"`
}

// State is what the server serves now.
type State struct {
	Version  string
	Hash     string
	Loaded   *Loaded
	LoadedAt time.Time
	Snapshot *cachev3.Snapshot
}

// Options tune a Server.
type Options struct {
	// Logger receives ACKs, NACKs and reloads (nothing when nil).
	Logger *slog.Logger
	// MaxEvents bounds the event record (default 1000); older events are dropped.
	MaxEvents int
}

// Server is an ADS server over a snapshot cache with a record of what nodes did.
type Server struct {
	cache cachev3.SnapshotCache
	xds   serverv3.Server
	log   *slog.Logger
	max   int

	mu         sync.Mutex
	state      *State
	generation int
	events     []Event
	nodes      map[string]*NodeStatus
	streams    map[int64]string            // stream → node ID
	sent       map[int64]map[string]string // stream → nonce → version sent with it
	changed    chan struct{}               // closed and replaced on every event
}

// New makes a server with nothing to serve yet (clients wait until the first Update).
func New(ctx context.Context, opts Options) *Server {
	s := &Server{
		log:     opts.Logger,
		max:     opts.MaxEvents,
		nodes:   map[string]*NodeStatus{},
		streams: map[int64]string{},
		sent:    map[int64]map[string]string{},
		changed: make(chan struct{}),
	}
	if s.log == nil {
		s.log = slog.New(slog.DiscardHandler)
	}
	if s.max <= 0 {
		s.max = 1000
	}
	s.cache = cachev3.NewSnapshotCache(true, allNodes{}, cacheLogger(s.log))
	s.xds = serverv3.NewServer(ctx, s.cache, serverv3.CallbackFuncs{
		StreamOpenFunc:     s.onStreamOpen,
		StreamClosedFunc:   s.onStreamClosed,
		StreamRequestFunc:  s.onStreamRequest,
		StreamResponseFunc: s.onStreamResponse,
	})
	return s
}

// cacheLogger sends go-control-plane's own messages to the debug level (warnings stay
// warnings).
func cacheLogger(l *slog.Logger) log.Logger {
	return log.LoggerFuncs{
		DebugFunc: func(f string, a ...any) { l.Debug(fmt.Sprintf(f, a...)) },
		InfoFunc:  func(f string, a ...any) { l.Debug(fmt.Sprintf(f, a...)) },
		WarnFunc:  func(f string, a ...any) { l.Warn(fmt.Sprintf(f, a...)) },
		ErrorFunc: func(f string, a ...any) { l.Error(fmt.Sprintf(f, a...)) },
	}
}

// Register adds the aggregated discovery service (and the per-type services, for clients
// that do not use ADS) to a gRPC server.
func (s *Server) Register(g *grpc.Server) {
	discoverygrpc.RegisterAggregatedDiscoveryServiceServer(g, s.xds)
	clusterservice.RegisterClusterDiscoveryServiceServer(g, s.xds)
	endpointservice.RegisterEndpointDiscoveryServiceServer(g, s.xds)
	listenerservice.RegisterListenerDiscoveryServiceServer(g, s.xds)
	routeservice.RegisterRouteDiscoveryServiceServer(g, s.xds)
	secretservice.RegisterSecretDiscoveryServiceServer(g, s.xds)
}

// Update serves l under a new version, unless its xDS is the same as what is served now.
// A translation that cannot be served (an inconsistent snapshot) is refused and the
// previous one stays.
func (s *Server) Update(ctx context.Context, l *Loaded) (version string, changed bool, err error) {
	hash, err := ContentHash(&l.Result.XDS)
	if err != nil {
		s.ReloadFailed(l.Source, err)
		return "", false, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.state != nil && s.state.Hash == hash {
		// Same xDS: keep the version (Envoy would be sent nothing new anyway), but show the
		// fresh IR and warnings.
		s.state.Loaded, s.state.LoadedAt = l, time.Now()
		s.recordLocked(Event{Kind: EventUnchanged, Version: s.state.Version, Source: l.Source})
		return s.state.Version, false, nil
	}
	version = fmt.Sprintf("%d-%s", s.generation+1, hash)
	snap, err := NewSnapshot(version, &l.Result.XDS)
	if err == nil {
		err = s.cache.SetSnapshot(ctx, NodeGroup, snap)
	}
	if err != nil {
		err = fmt.Errorf("%s: %w", l.Source, err)
		s.recordLocked(Event{Kind: EventReloadError, Error: err.Error(), Source: l.Source})
		return "", false, err
	}
	s.generation++
	s.state = &State{Version: version, Hash: hash, Loaded: l, LoadedAt: time.Now(), Snapshot: snap}
	s.recordLocked(Event{Kind: EventReload, Version: version, Source: l.Source})
	return version, true, nil
}

// ReloadFailed records a load that did not produce anything to serve.
func (s *Server) ReloadFailed(source string, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.recordLocked(Event{Kind: EventReloadError, Error: err.Error(), Source: source})
}

// Current is what is served now (nil before the first Update).
func (s *Server) Current() *State {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.state == nil {
		return nil
	}
	st := *s.state
	return &st
}

// Events returns the recorded events, oldest first.
func (s *Server) Events() []Event {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Event(nil), s.events...)
}

// Nodes returns every node seen, sorted by ID.
func (s *Server) Nodes() []NodeStatus {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]NodeStatus, 0, len(s.nodes))
	for _, n := range s.nodes {
		c := *n
		c.Acked = maps(n.Acked)
		c.Nacked = map[string]*Nack{}
		for k, v := range n.Nacked {
			nv := *v
			c.Nacked[k] = &nv
		}
		out = append(out, c)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out
}

func maps(m map[string]string) map[string]string {
	out := make(map[string]string, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

// WaitFor blocks until cond holds over the nodes' status, or ctx ends. cond is checked
// after every event.
func (s *Server) WaitFor(ctx context.Context, cond func(nodes []NodeStatus) bool) error {
	for {
		s.mu.Lock()
		ch := s.changed
		s.mu.Unlock()
		if cond(s.Nodes()) {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-ch:
		}
	}
}

// AckedAll reports whether node has ACKed version for every type in types.
func AckedAll(nodes []NodeStatus, node, version string, types ...string) bool {
	for _, n := range nodes {
		if n.ID != node {
			continue
		}
		for _, t := range types {
			if n.Acked[t] != version {
				return false
			}
		}
		return true
	}
	return false
}

func (s *Server) recordLocked(e Event) {
	if e.Time.IsZero() {
		e.Time = time.Now()
	}
	s.events = append(s.events, e)
	if len(s.events) > s.max {
		s.events = append([]Event(nil), s.events[len(s.events)-s.max:]...)
	}
	attrs := []any{"version", e.Version}
	if e.Node != "" {
		attrs = append(attrs, "node", e.Node, "type", shortType(e.TypeURL), "stream", e.Stream)
	}
	if e.Source != "" {
		attrs = append(attrs, "source", e.Source)
	}
	switch e.Kind {
	case EventNACK, EventReloadError:
		s.log.Warn(e.Kind, append(attrs, "error", e.Error)...)
	case EventRequest:
		s.log.Debug(e.Kind, attrs...)
	default:
		s.log.Info(e.Kind, attrs...)
	}
	close(s.changed)
	s.changed = make(chan struct{})
}

// shortType is the message name of a type URL (Cluster, Listener...).
func shortType(typeURL string) string {
	return typeURL[strings.LastIndex(typeURL, ".")+1:]
}

func (s *Server) onStreamOpen(_ context.Context, id int64, _ string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.sent[id] = map[string]string{}
	return nil
}

func (s *Server) onStreamClosed(id int64, _ *corev3.Node) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if n := s.nodes[s.streams[id]]; n != nil && n.Streams > 0 {
		n.Streams--
	}
	delete(s.streams, id)
	delete(s.sent, id)
	close(s.changed)
	s.changed = make(chan struct{})
}

// onStreamRequest sorts a request out: the first of a type, an ACK (a response nonce, no
// error) or a NACK (a response nonce with error_detail). A NACK's version_info is the last
// version the node accepted; the refused one is the version sent with the nonce.
func (s *Server) onStreamRequest(id int64, req *discoverygrpc.DiscoveryRequest) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	nodeID := s.streams[id]
	if req.GetNode() != nil && nodeID == "" {
		nodeID = req.GetNode().GetId()
		s.streams[id] = nodeID
		n := s.nodes[nodeID]
		if n == nil {
			n = &NodeStatus{ID: nodeID, Acked: map[string]string{}, Nacked: map[string]*Nack{}}
			s.nodes[nodeID] = n
		}
		n.Cluster = req.GetNode().GetCluster()
		n.Streams++
	}
	n := s.nodes[nodeID]
	if n == nil { // a client that never said who it is
		nodeID = fmt.Sprintf("<stream %d>", id)
		n = &NodeStatus{ID: nodeID, Acked: map[string]string{}, Nacked: map[string]*Nack{}, Streams: 1}
		s.nodes[nodeID], s.streams[id] = n, nodeID
	}
	now := time.Now()
	n.LastSeen = now
	e := Event{Time: now, Node: nodeID, Stream: id, TypeURL: req.GetTypeUrl(), Nonce: req.GetResponseNonce(),
		Version: req.GetVersionInfo()}
	switch {
	case req.GetResponseNonce() == "":
		e.Kind = EventRequest
	case req.GetErrorDetail() != nil:
		e.Kind = EventNACK
		if v, ok := s.sent[id][req.GetResponseNonce()]; ok {
			e.Version = v
		}
		e.Error = req.GetErrorDetail().GetMessage()
		n.Nacked[req.GetTypeUrl()] = &Nack{Version: e.Version, Error: e.Error, Time: now}
	default:
		e.Kind = EventACK
		n.Acked[req.GetTypeUrl()] = req.GetVersionInfo()
		delete(n.Nacked, req.GetTypeUrl())
	}
	s.recordLocked(e)
	return nil
}

func (s *Server) onStreamResponse(_ context.Context, id int64, _ *discoverygrpc.DiscoveryRequest,
	resp *discoverygrpc.DiscoveryResponse) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if m := s.sent[id]; m != nil {
		m[resp.GetNonce()] = resp.GetVersionInfo()
	}
}
