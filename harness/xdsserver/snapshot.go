// Package xdsserver serves the reference translator's xDS to real Envoy proxies: a
// go-control-plane snapshot cache behind an ADS (state of the world) gRPC server, a record
// of every node's ACKs and NACKs, and a management HTTP API that shows the IR and the xDS
// being served. `egharness serve` and the kind suite (suites/e2e) run it.
package xdsserver

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"

	"github.com/envoyproxy/go-control-plane/pkg/cache/types"
	cachev3 "github.com/envoyproxy/go-control-plane/pkg/cache/v3"
	resourcev3 "github.com/envoyproxy/go-control-plane/pkg/resource/v3"

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
// version and a change always gets a new one. It digests the JSON form (the translate
// contract, which sorts maps and expands Any payloads), not the wire form: protobuf's
// binary encoding of an Any holds bytes marshalled without a fixed map order.
func ContentHash(x *result.XDS) (string, error) {
	b, err := json.Marshal(x)
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])[:12], nil
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
