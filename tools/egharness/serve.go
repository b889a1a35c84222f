package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/spf13/cobra"
	"google.golang.org/grpc"

	"github.com/egharness/egharness/harness/catalog"
	"github.com/egharness/egharness/harness/scenario"
	"github.com/egharness/egharness/harness/xdsserver"
	"github.com/egharness/egharness/translator/admission"
	"github.com/egharness/egharness/translator/profile"
	"github.com/egharness/egharness/translator/resource"
)

// serveOptions are serve's flags.
type serveOptions struct {
	file, scenarioName, scenarioDir string
	profile, namespace              string
	watch, verbose                  bool
	xdsAddr, adminAddr              string
	limits                          resource.Limits
}

func newServeCmd() *cobra.Command {
	var o serveOptions
	var limits *resource.Limits
	cmd := &cobra.Command{
		Use: "serve -f FILE | --scenario NAME [--profile P] [--watch] [--xds-addr 127.0.0.1:18000] " +
			"[--admin-addr 127.0.0.1:19080]",
		Short: "Serve the reference translation as xDS (ADS) to real Envoy proxies, with a management API",
		Long: `serve translates a file of Kubernetes objects (-f, as translate reads them) or one
scenario (--scenario NAME, found under --scenarios) and serves the xDS over gRPC: the
aggregated discovery service, state of the world, from a go-control-plane snapshot cache.
Every node gets the same snapshot, whatever its node ID; ACKs and NACKs are logged per node.
With --watch an edit of the file (or of the scenario and its resource files) is served under
a new version; an edit that does not translate is logged and the last good snapshot stays.

The management API (--admin-addr) answers GET /healthz, /snapshots (the version, the IR,
each backend cluster's load balancing, session persistence and circuit breaker fields, the
xDS as protojson and every node's ACKs and NACKs), /events and /scenarios.

Both servers listen on 127.0.0.1 (this machine only) unless told otherwise: an Envoy in a
container or on another machine needs --xds-addr 0.0.0.0:18000 (every interface; the xDS
holds your secrets, so only on a network you trust).

Point Envoy at it with an ADS bootstrap (see docs/serving.md). Ctrl-C or SIGTERM stops it
gracefully: the management API finishes its requests, xDS streams get 5 seconds.`,
		Example: `  egharness serve --scenario request-mirror --watch
  egharness serve -f objects.yaml --profile v1.9 --admin-addr 127.0.0.1:0
  egharness serve -f objects.yaml --xds-addr 0.0.0.0:18000   # reachable from a kind node or container`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			o.limits = *limits
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			return runServe(ctx, o, cmd.ErrOrStderr(), nil)
		},
	}
	f := cmd.Flags()
	f.StringVarP(&o.file, "file", "f", "", "objects to serve (multi-document YAML)")
	f.StringVar(&o.scenarioName, "scenario", "", "serve this scenario (by name)")
	f.StringVar(&o.scenarioDir, "scenarios", "",
		"the scenarios folder --scenario looks in (default: the project's, found from the current folder upwards or --root)")
	f.StringVar(&o.profile, "profile", "",
		"version profile (default: v1.9 for -f, the scenario's first profile for --scenario)")
	f.StringVarP(&o.namespace, "namespace", "n", "envoy-gateway-system",
		"namespace of objects that name none (-f; as translate)")
	f.BoolVar(&o.watch, "watch", false, "serve a new version when the input files change")
	f.StringVar(&o.xdsAddr, "xds-addr", "127.0.0.1:18000",
		"address of the xDS gRPC server (0.0.0.0:18000: every interface)")
	f.StringVar(&o.adminAddr, "admin-addr", "127.0.0.1:19080",
		"address of the management API (0.0.0.0:19080: every interface)")
	f.BoolVarP(&o.verbose, "verbose", "v", false, "log every discovery request, not only ACKs, NACKs and reloads")
	limits = addLimitFlags(f)
	return cmd
}

// runServe serves until ctx ends. ready, when set, is told the bound addresses once both
// servers listen (tests bind to port 0).
func runServe(ctx context.Context, o serveOptions, logw io.Writer, ready func(xdsAddr, adminAddr net.Addr)) error {
	if (o.file == "") == (o.scenarioName == "") {
		return badInput("serve needs -f FILE or --scenario NAME (one of them)")
	}
	level := slog.LevelInfo
	if o.verbose {
		level = slog.LevelDebug
	}
	logger := slog.New(slog.NewTextHandler(logw, &slog.HandlerOptions{Level: level}))

	if o.scenarioDir == "" {
		proj, err := findProject(nil)
		switch {
		case err == nil:
			o.scenarioDir = proj.scenarios
		case o.scenarioName != "":
			return err
		}
	}
	var src xdsserver.Source
	var listScenarios func() ([]*scenario.Scenario, error)
	cat, err := catalog.Load()
	if err != nil {
		return err
	}
	loader := scenario.Loader{Catalog: cat, Root: o.scenarioDir, Limits: o.limits}
	if _, err := os.Stat(o.scenarioDir); o.scenarioDir != "" && err == nil {
		listScenarios = func() ([]*scenario.Scenario, error) {
			set, err := loader.LoadPaths(o.scenarioDir)
			if err != nil {
				return nil, err
			}
			return set.Scenarios, nil
		}
	}
	if o.file != "" {
		name := o.profile
		if name == "" {
			name = profile.Default
		}
		p, err := profile.Get(name)
		if err != nil {
			return badInput("%v", err)
		}
		src = xdsserver.FileSource{Path: o.file, Profile: p, Namespace: o.namespace, Limits: o.limits,
			Memo: &admission.Memo{}, Decoded: &resource.JSONCache{}}
	} else {
		if o.profile != "" {
			if _, err := profile.Get(o.profile); err != nil {
				return badInput("%v", err)
			}
		}
		src = xdsserver.ScenarioSource{Loader: loader, Dir: o.scenarioDir, Name: o.scenarioName, Profile: o.profile}
	}
	l, err := src.Load()
	if err != nil {
		return badInput("%v", err)
	}

	srv := xdsserver.New(ctx, xdsserver.Options{Logger: logger})
	version, _, err := srv.Update(ctx, l)
	if err != nil {
		return badInput("%v", err)
	}
	for _, w := range l.Result.Warnings {
		logger.Warn("translation warning", "warning", w)
	}
	for _, c := range xdsserver.PortConflicts(&l.Result.XDS) {
		logger.Warn("one Envoy will refuse these listeners (EG runs one Envoy per Gateway)", "conflict", c)
	}

	xl, err := net.Listen("tcp", o.xdsAddr)
	if err != nil {
		return badInput("--xds-addr: %v", err)
	}
	al, err := net.Listen("tcp", o.adminAddr)
	if err != nil {
		xl.Close()
		return badInput("--admin-addr: %v", err)
	}
	g := grpc.NewServer()
	srv.Register(g)
	api := &http.Server{Handler: (&xdsserver.API{Server: srv, Scenarios: listScenarios}).Handler(),
		ReadHeaderTimeout: 10 * time.Second}

	errc := make(chan error, 3)
	go func() { errc <- g.Serve(xl) }()
	go func() {
		if err := api.Serve(al); !errors.Is(err, http.ErrServerClosed) {
			errc <- err
		}
	}()
	if o.watch {
		go func() {
			if err := xdsserver.Watch(ctx, srv, src, l.Files); err != nil {
				errc <- err
			}
		}()
	}
	logger.Info("serving", "source", l.Source, "profile", l.Profile, "version", version,
		"xds", xl.Addr().String(), "admin", "http://"+al.Addr().String(), "watch", o.watch)
	for _, a := range []net.Addr{xl.Addr(), al.Addr()} {
		if ta, ok := a.(*net.TCPAddr); ok && !ta.IP.IsLoopback() {
			logger.Warn("listening beyond this machine: whoever reaches this address reads the xDS, secrets included", "addr",
				a.String())
		}
	}
	if ready != nil {
		ready(xl.Addr(), al.Addr())
	}

	select {
	case <-ctx.Done():
		logger.Info("shutting down", "reason", context.Cause(ctx))
	case err = <-errc:
	}
	shutdown, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_ = api.Shutdown(shutdown)
	stopped := make(chan struct{})
	go func() { g.GracefulStop(); close(stopped) }()
	select {
	case <-stopped:
	case <-shutdown.Done():
		g.Stop() // ADS streams never end on their own
	}
	if err != nil {
		return fmt.Errorf("serve: %w", err)
	}
	return nil
}
