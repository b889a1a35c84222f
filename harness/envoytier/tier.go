// Package envoytier is the real-Envoy tier: each scenario's translation is served over ADS
// (harness/xdsserver, in this process) to a real Envoy on loopback, with every backend moved
// onto a local echo server, and every traffic expectation is sent through it as a real
// request. The answer is compared with the scenario's expectation and with the offline route
// checker's answer, so an error the translator and the route checker share (they are
// written by the same hands) shows up against an oracle neither wrote.
//
// One Envoy serves a whole run: each scenario replaces the snapshot, listeners move to a
// fresh loopback address (so the previous scenario's sockets never hold a port the next
// binds) and are closed at once (--drain-strategy immediate, --drain-time-s 0).
package envoytier

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"strconv"
	"time"

	"github.com/egharness/egharness/harness/geoip"
	"github.com/egharness/egharness/harness/xdsserver"
)

// Options configure a Tier.
type Options struct {
	// Envoy is the binary (see Find).
	Envoy string
	// EnvoyLog, when set, receives Envoy's own log (and access logs); when nil and
	// $EGHARNESS_ENVOY_LOG names a file, that file does (created or truncated).
	EnvoyLog io.Writer
	// Logger receives the xDS server's ACKs and NACKs (nothing when nil).
	Logger *slog.Logger
	// AckTimeout bounds the wait for Envoy to ACK a scenario (default 30s).
	AckTimeout time.Duration
	// RequestTimeout bounds one real request (default 5s).
	RequestTimeout time.Duration
}

// Tier is a running Envoy fed by an in-process xDS server, and the echo servers behind it.
type Tier struct {
	opts    Options
	version string
	nodeID  string
	dir     string

	adsServer
	envoy *process
	lo    *loopback
	echo  *echoPool
	ca    *authority
	jwt   *issuer
	svc   *services
	idp   *provider
	// standIn is the certificate served for secrets of external SDS servers.
	standIn pemPair
	// geoDBs are the stand-in MaxMind databases (harness/geoip) geoip filters open.
	geoDBs map[geoip.Kind]string
	sink   net.Listener
	// restarts counts Envoys started again after one exited or hung.
	restarts int
	// logFile is $EGHARNESS_ENVOY_LOG's file, closed by Close.
	logFile *os.File
}

// Start runs the xDS server on a free loopback port, Envoy with a bootstrap pointing at it,
// and a sink for upstream addresses that have no stand-in. Close stops them all.
func Start(ctx context.Context, opts Options) (t *Tier, err error) {
	if opts.AckTimeout == 0 {
		opts.AckTimeout = 30 * time.Second
	}
	if opts.RequestTimeout == 0 {
		opts.RequestTimeout = 5 * time.Second
	}
	version, err := Version(ctx, opts.Envoy)
	if err != nil {
		return nil, err
	}
	t = &Tier{opts: opts, version: version, nodeID: fmt.Sprintf("egharness-envoy-tier-%d", os.Getpid())}
	defer func() {
		if err != nil {
			_ = t.Close()
			t = nil
		}
	}()
	if opts.EnvoyLog == nil && os.Getenv(LogEnvVar) != "" {
		f, err := os.Create(os.Getenv(LogEnvVar))
		if err != nil {
			return t, fmt.Errorf("$%s: %w", LogEnvVar, err)
		}
		t.logFile = f
		t.opts.EnvoyLog = f
	}
	if t.dir, err = os.MkdirTemp("", "egharness-envoy-"); err != nil {
		return t, err
	}
	if t.lo, err = newLoopback(); err != nil {
		return t, err
	}
	if t.ca, err = newAuthority(); err != nil {
		return t, err
	}
	if err := t.ca.files(t.dir, "envoy-ratelimit.envoy-gateway-system.svc.cluster.local", "envoy-gateway"); err != nil {
		return t, err
	}
	if t.standIn, err = t.ca.pair("external-sds.egharness.local"); err != nil {
		return t, err
	}
	if t.geoDBs, err = geoip.WriteDatabases(t.dir); err != nil {
		return t, err
	}
	t.echo = newEchoPool(t.lo, t.ca)
	if t.jwt, err = newIssuer(t.lo, t.ca); err != nil {
		return t, err
	}
	if t.svc, err = newServices(t.lo, t.ca); err != nil {
		return t, err
	}
	if t.idp, err = newProvider(t.lo, t.ca); err != nil {
		return t, err
	}
	if t.sink, err = net.Listen("tcp", net.JoinHostPort(t.lo.addr(), "0")); err != nil {
		return t, fmt.Errorf("sink: %w", err)
	}
	go func(l net.Listener) {
		// Accept and close: an upstream without a stand-in is refused the way a dead
		// backend is (Envoy answers 503), and nothing leaves the machine.
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			_ = c.Close()
		}
	}(t.sink)

	if err := t.startADS(xdsserver.Options{Logger: opts.Logger}); err != nil {
		return t, err
	}
	return t, t.startEnvoy(ctx)
}

// startEnvoy starts Envoy and waits until it has opened its ADS stream.
func (t *Tier) startEnvoy(ctx context.Context) error {
	var err error
	if t.envoy, err = startEnvoy(ctx, t.opts.Envoy, t.dir, t.xdsAddr, t.nodeID, t.opts.EnvoyLog); err != nil {
		return err
	}
	return t.waitStream(ctx, t.envoy, t.nodeID)
}

// revive starts a new Envoy when the last one exited or hangs (a crash in one scenario
// must not end the run); it says why it had to.
func (t *Tier) revive(ctx context.Context, why error) error {
	_ = t.envoy.stop()
	t.restarts++
	if err := t.startEnvoy(ctx); err != nil {
		return fmt.Errorf("%v; restarting Envoy failed: %w", why, err)
	}
	return nil
}

// Restarts is how many times Envoy had to be started again during the run.
func (t *Tier) Restarts() int { return t.restarts }

// Version is the Envoy release (1.39.3).
func (t *Tier) Version() string { return t.version }

// Log is the tail of Envoy's log.
func (t *Tier) Log() string { return t.envoy.log.String() }

// Close stops Envoy, the xDS server and the echo servers, and removes the work folder.
func (t *Tier) Close() error {
	var errs []error
	if t.envoy != nil {
		errs = append(errs, t.envoy.stop())
	}
	t.closeADS()
	if t.echo != nil {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		errs = append(errs, t.echo.close(ctx))
		cancel()
	}
	if t.svc != nil {
		t.svc.close()
	}
	if t.idp != nil {
		t.idp.close()
	}
	if t.jwt != nil {
		_ = t.jwt.srv.Close()
	}
	if t.sink != nil {
		_ = t.sink.Close()
	}
	if t.lo != nil {
		_ = t.lo.close()
	}
	if t.dir != "" {
		errs = append(errs, os.RemoveAll(t.dir))
	}
	if t.logFile != nil {
		errs = append(errs, t.logFile.Close())
	}
	return errors.Join(errs...)
}

func (t *Tier) sinkHostPort() (string, uint32) {
	host, port, _ := net.SplitHostPort(t.sink.Addr().String())
	p, _ := strconv.ParseUint(port, 10, 16)
	return host, uint32(p)
}
