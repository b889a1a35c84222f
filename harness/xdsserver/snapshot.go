// Package xdsserver serves the reference translator's xDS to real Envoy proxies: a
// go-control-plane snapshot cache behind an ADS (state of the world) gRPC server, a record
// of every node's ACKs and NACKs, and a management HTTP API that shows the IR and the xDS
// being served. `egharness serve` and the kind suite (suites/e2e) run it.
package xdsserver

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"

	"github.com/envoyproxy/go-control-plane/pkg/cache/types"
	cachev3 "github.com/envoyproxy/go-control-plane/pkg/cache/v3"
	resourcev3 "github.com/envoyproxy/go-control-plane/pkg/resource/v3"
	"google.golang.org/protobuf/proto"

	"github.com/egharness/egharness/internal/parallel"
	"github.com/egharness/egharness/translator/result"
)

// TypeURLs are the resource types a snapshot holds, in the order Envoy asks for them.
var TypeURLs = []string{
	resourcev3.ClusterType,
	resourcev3.EndpointType,
	resourcev3.ListenerType,
	resourcev3.RouteType,
	resourcev3.SecretType,
}

// NewSnapshot makes a snapshot of one translation's xDS under version, checked for
// consistency (every endpoint and route configuration referenced, none missing): an ADS
// client waits forever for a resource a snapshot lacks, so an inconsistent one is refused.
func NewSnapshot(version string, x *result.XDS) (*cachev3.Snapshot, error) {
	// Every type is present, empty or not: go-control-plane gives a type missing from the
	// map no version, so a translation without clusters (redirects only) would never be
	// sent to Envoy, which would keep the clusters of the last snapshot (found by real
	// Envoy: it never ACKed such a snapshot).
	res := map[resourcev3.Type][]types.Resource{}
	for _, typ := range TypeURLs {
		res[typ] = []types.Resource{}
	}
	for _, l := range x.Listeners {
		res[resourcev3.ListenerType] = append(res[resourcev3.ListenerType], l)
	}
	for _, r := range x.Routes {
		res[resourcev3.RouteType] = append(res[resourcev3.RouteType], r)
	}
	for _, c := range x.Clusters {
		res[resourcev3.ClusterType] = append(res[resourcev3.ClusterType], c)
	}
	for _, e := range x.Endpoints {
		res[resourcev3.EndpointType] = append(res[resourcev3.EndpointType], e)
	}
	for _, s := range x.Secrets {
		res[resourcev3.SecretType] = append(res[resourcev3.SecretType], s)
	}
	snap, err := cachev3.NewSnapshot(version, res)
	if err != nil {
		return nil, err
	}
	if err := snap.Consistent(); err != nil {
		return nil, fmt.Errorf("the xDS is not a consistent snapshot: %w", err)
	}
	return snap, nil
}

// ContentHash is a short digest of the xDS, so a reload that changes nothing keeps its
// version and a change always gets a new one. It digests the deterministic wire form of
// each resource, on every core: the reference translator marshals its Any payloads
// deterministically too (translator/xds mustAny), so equal xDS digests the same, and the
// wire form costs a fraction of the JSON form (which, for a large file, took longer than
// the translation). An xDS from elsewhere whose Any bytes were marshalled in another map
// order only gets a new version for the same content.
func ContentHash(x *result.XDS) (string, error) {
	var msgs []proto.Message
	for _, l := range x.Listeners {
		msgs = append(msgs, l)
	}
	for _, r := range x.Routes {
		msgs = append(msgs, r)
	}
	for _, c := range x.Clusters {
		msgs = append(msgs, c)
	}
	for _, e := range x.Endpoints {
		msgs = append(msgs, e)
	}
	for _, s := range x.Secrets {
		msgs = append(msgs, s)
	}
	sums := make([][sha256.Size]byte, len(msgs))
	errs := make([]error, len(msgs))
	parallel.Each(len(msgs), func(i int) {
		b, err := proto.MarshalOptions{Deterministic: true}.Marshal(msgs[i])
		sums[i], errs[i] = sha256.Sum256(b), err
	})
	// The counts per type keep a resource that moves from one list to the next from
	// digesting the same.
	h := sha256.New()
	fmt.Fprintf(h, "%d %d %d %d %d\n", len(x.Listeners), len(x.Routes), len(x.Clusters), len(x.Endpoints), len(x.Secrets))
	for i := range sums {
		if errs[i] != nil {
			return "", errs[i]
		}
		h.Write(sums[i][:])
	}
	return hex.EncodeToString(h.Sum(nil))[:12], nil
}

// PortConflicts lists listeners that bind an address another listener already binds: two
// Gateways on one port, which EG serves with two Envoys but one Envoy refuses (a NACK).
// Every node gets the whole snapshot, so serve logs them when it loads.
func PortConflicts(x *result.XDS) []string {
	seen := map[string]string{}
	var out []string
	for _, l := range x.Listeners {
		sa := l.GetAddress().GetSocketAddress()
		key := fmt.Sprintf("%s %s:%d", sa.GetProtocol(), sa.GetAddress(), sa.GetPortValue())
		if other, ok := seen[key]; ok {
			out = append(out, fmt.Sprintf("listeners %s and %s both bind %s", other, l.GetName(), key))
			continue
		}
		seen[key] = l.GetName()
	}
	return out
}
