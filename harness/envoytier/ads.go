package envoytier

import (
	"context"
	"fmt"
	"net"
	"slices"
	"strings"
	"time"

	resourcev3 "github.com/envoyproxy/go-control-plane/pkg/resource/v3"
	"google.golang.org/grpc"

	"github.com/egharness/egharness/harness/xdsserver"
	"github.com/egharness/egharness/translator/result"
)

// What the Tier and Bare share: the xDS server their Envoy reads from, and what they wait
// for from that Envoy (its ADS stream, the ACK or NACK of a version, the end of warming).

// adsServer is an in-process xDS server, served over gRPC on a free loopback port.
type adsServer struct {
	srv  *xdsserver.Server
	grpc *grpc.Server
	stop context.CancelFunc
	// xdsAddr is where Envoy reaches the server.
	xdsAddr string
}

// startADS runs the xDS server with opts on a free loopback port.
func (a *adsServer) startADS(opts xdsserver.Options) error {
	sctx, cancel := context.WithCancel(context.Background())
	a.stop = cancel
	a.srv = xdsserver.New(sctx, opts)
	a.grpc = grpc.NewServer()
	a.srv.Register(a.grpc)
	xl, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return fmt.Errorf("xDS listener: %w", err)
	}
	go func() { _ = a.grpc.Serve(xl) }()
	a.xdsAddr = xl.Addr().String()
	return nil
}

// closeADS stops what startADS started.
func (a *adsServer) closeADS() {
	if a.grpc != nil {
		a.grpc.Stop()
	}
	if a.stop != nil {
		a.stop()
	}
}

// waitStream waits until envoy, node nodeID, has opened its ADS stream to the server.
func (a *adsServer) waitStream(ctx context.Context, envoy *process, nodeID string) error {
	wctx, wcancel := context.WithTimeout(ctx, 30*time.Second)
	defer wcancel()
	if err := a.srv.WaitFor(wctx, func(nodes []xdsserver.NodeStatus) bool {
		for _, n := range nodes {
			if n.ID == nodeID && n.Streams > 0 {
				return true
			}
		}
		return envoy.alive() != nil
	}); err != nil {
		return fmt.Errorf("envoy opened no ADS stream within 30s: %w\n%s", err, envoy.log.String())
	}
	return envoy.alive()
}

// ackTypes are the types Envoy must ACK for x: clusters and listeners always (an empty
// configuration too), routes and endpoints when x has some.
func ackTypes(x *result.XDS) []string {
	types := []string{resourcev3.ClusterType, resourcev3.ListenerType}
	if len(x.Routes) > 0 {
		types = append(types, resourcev3.RouteType)
	}
	if len(x.Endpoints) > 0 {
		types = append(types, resourcev3.EndpointType)
	}
	return types
}

// nackOf is node nodeID's NACK of version ("Listener: its error"), "" when there is none.
func nackOf(nodes []xdsserver.NodeStatus, nodeID, version string) string {
	for _, n := range nodes {
		if n.ID != nodeID {
			continue
		}
		for _, typ := range slices.Sorted(mapKeys(n.Nacked)) {
			if nk := n.Nacked[typ]; nk.Version == version {
				return fmt.Sprintf("%s: %s", typ[strings.LastIndex(typ, ".")+1:], nk.Error)
			}
		}
	}
	return ""
}

// waitWarmed waits until none of Envoy's listeners and clusters warms (secrets, routes and
// endpoints still arriving after an ACK). When ctx ends first, warmed is false, with the
// last gauges read and the error reading them.
func (p *process) waitWarmed(ctx context.Context) (warmed bool, gauges map[string]int, err error) {
	const listenersWarming, clustersWarming = "listener_manager.total_listeners_warming",
		"cluster_manager.warming_clusters"
	for {
		g, err := p.gauges(ctx, listenersWarming, clustersWarming)
		if err == nil && g[listenersWarming] == 0 && g[clustersWarming] == 0 {
			return true, g, nil
		}
		select {
		case <-ctx.Done():
			return false, g, err
		case <-time.After(10 * time.Millisecond):
		}
	}
}
