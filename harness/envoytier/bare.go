package envoytier

import (
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"slices"
	"strings"
	"sync"
	"time"

	resourcev3 "github.com/envoyproxy/go-control-plane/pkg/resource/v3"
	"google.golang.org/grpc"

	"github.com/egharness/egharness/harness/xdsserver"
	"github.com/egharness/egharness/translator/result"
)

// Bare is a real Envoy fed over ADS with whatever it is given, and nothing else: no echo
// stand-ins, no rewriting. The offline Gateway API conformance run uses it, with its own
// backends and addresses already on loopback.
type Bare struct {
	srv     *xdsserver.Server
	grpc    *grpc.Server
	envoy   *process
	dir     string
	nodeID  string
	version string
	stop    context.CancelFunc
	ack     time.Duration
	mu      sync.Mutex // one Serve at a time
}

// BareOptions configure StartBare.
type BareOptions struct {
	Envoy    string
	EnvoyLog io.Writer
	// AckTimeout bounds the wait for an ACK (default 10s).
	AckTimeout time.Duration
}

// StartBare runs Envoy and the xDS server it reads from.
func StartBare(ctx context.Context, opts BareOptions) (b *Bare, err error) {
	if opts.AckTimeout == 0 {
		opts.AckTimeout = 10 * time.Second
	}
	version, err := Version(ctx, opts.Envoy)
	if err != nil {
		return nil, err
	}
	b = &Bare{version: version, nodeID: fmt.Sprintf("egharness-bare-%d", os.Getpid()), ack: opts.AckTimeout}
	defer func() {
		if err != nil {
			b.Close()
			b = nil
		}
	}()
	if b.dir, err = os.MkdirTemp("", "egharness-envoy-"); err != nil {
		return b, err
	}
	sctx, cancel := context.WithCancel(context.Background())
	b.stop = cancel
	b.srv = xdsserver.New(sctx, xdsserver.Options{})
	b.grpc = grpc.NewServer()
	b.srv.Register(b.grpc)
	xl, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return b, fmt.Errorf("xDS listener: %w", err)
	}
	go func() { _ = b.grpc.Serve(xl) }()
	if b.envoy, err = startEnvoy(ctx, opts.Envoy, b.dir, xl.Addr().String(), b.nodeID, opts.EnvoyLog); err != nil {
		return b, err
	}
	wctx, wcancel := context.WithTimeout(ctx, 30*time.Second)
	defer wcancel()
	if err := b.srv.WaitFor(wctx, func(nodes []xdsserver.NodeStatus) bool {
		for _, n := range nodes {
			if n.ID == b.nodeID && n.Streams > 0 {
				return true
			}
		}
		return b.envoy.alive() != nil
	}); err != nil {
		return b, fmt.Errorf("envoy opened no ADS stream within 30s: %w\n%s", err, b.envoy.log.String())
	}
	return b, b.envoy.alive()
}

// Version is the Envoy release.
func (b *Bare) Version() string { return b.version }

// Log is the tail of Envoy's log.
func (b *Bare) Log() string { return b.envoy.log.String() }

// Serve hands Envoy x and waits until it ACKs every type and nothing warms; a NACK is
// the error.
func (b *Bare) Serve(ctx context.Context, x *result.XDS) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	version, changed, err := b.srv.Update(ctx, &xdsserver.Loaded{Source: "conformance", Result: &result.Result{XDS: *x}})
	if err != nil {
		return err
	}
	if !changed {
		return nil
	}
	types := []string{resourcev3.ClusterType, resourcev3.ListenerType}
	if len(x.Routes) > 0 {
		types = append(types, resourcev3.RouteType)
	}
	if len(x.Endpoints) > 0 {
		types = append(types, resourcev3.EndpointType)
	}
	wctx, cancel := context.WithTimeout(ctx, b.ack)
	defer cancel()
	var nack string
	err = b.srv.WaitFor(wctx, func(nodes []xdsserver.NodeStatus) bool {
		for _, n := range nodes {
			if n.ID != b.nodeID {
				continue
			}
			for _, typ := range slices.Sorted(mapKeys(n.Nacked)) {
				if nk := n.Nacked[typ]; nk.Version == version {
					nack = fmt.Sprintf("%s: %s", typ[strings.LastIndex(typ, ".")+1:], nk.Error)
					return true
				}
			}
		}
		return xdsserver.AckedAll(nodes, b.nodeID, version, types...) || b.envoy.alive() != nil
	})
	if nack != "" {
		return fmt.Errorf("envoy refused the translation (NACK) %s", nack)
	}
	if aerr := b.envoy.alive(); aerr != nil {
		return fmt.Errorf("envoy exited: %v\n%s", aerr, b.envoy.log.String())
	}
	if err != nil {
		return fmt.Errorf("envoy did not ACK within %s: %w", b.ack, err)
	}
	for {
		g, err := b.envoy.gauges(wctx, "listener_manager.total_listeners_warming", "cluster_manager.warming_clusters")
		if err == nil && g["listener_manager.total_listeners_warming"] == 0 && g["cluster_manager.warming_clusters"] == 0 {
			return nil
		}
		select {
		case <-wctx.Done():
			return fmt.Errorf("envoy ACKed but listeners or clusters still warm after %s", b.ack)
		case <-time.After(10 * time.Millisecond):
		}
	}
}

// Close stops Envoy and the server.
func (b *Bare) Close() {
	if b.envoy != nil {
		_ = b.envoy.stop()
	}
	if b.grpc != nil {
		b.grpc.Stop()
	}
	if b.stop != nil {
		b.stop()
	}
	if b.dir != "" {
		_ = os.RemoveAll(b.dir)
	}
}
