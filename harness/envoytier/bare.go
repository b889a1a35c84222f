package envoytier

import (
	"context"
	"fmt"
	"io"
	"os"
	"sync"
	"time"

	"github.com/egharness/egharness/harness/xdsserver"
	"github.com/egharness/egharness/translator/result"
)

// Bare is a real Envoy fed over ADS with whatever it is given, and nothing else: no echo
// stand-ins, no rewriting. The offline Gateway API conformance run uses it, with its own
// backends and addresses already on loopback.
type Bare struct {
	adsServer
	envoy   *process
	dir     string
	nodeID  string
	version string
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
	if err := b.startADS(xdsserver.Options{}); err != nil {
		return b, err
	}
	if b.envoy, err = startEnvoy(ctx, opts.Envoy, b.dir, b.xdsAddr, b.nodeID, opts.EnvoyLog); err != nil {
		return b, err
	}
	return b, b.waitStream(ctx, b.envoy, b.nodeID)
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
	types := ackTypes(x)
	wctx, cancel := context.WithTimeout(ctx, b.ack)
	defer cancel()
	var nack string
	err = b.srv.WaitFor(wctx, func(nodes []xdsserver.NodeStatus) bool {
		if nack = nackOf(nodes, b.nodeID, version); nack != "" {
			return true
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
	if warmed, _, _ := b.envoy.waitWarmed(wctx); !warmed {
		return fmt.Errorf("envoy ACKed but listeners or clusters still warm after %s", b.ack)
	}
	return nil
}

// Close stops Envoy and the server.
func (b *Bare) Close() {
	if b.envoy != nil {
		_ = b.envoy.stop()
	}
	b.closeADS()
	if b.dir != "" {
		_ = os.RemoveAll(b.dir)
	}
}
