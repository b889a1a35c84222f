package live_test

import (
	"strings"
	"testing"

	bootstrapv3 "github.com/envoyproxy/go-control-plane/envoy/config/bootstrap/v3"
	clusterv3 "github.com/envoyproxy/go-control-plane/envoy/config/cluster/v3"
	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	"sigs.k8s.io/yaml"

	"github.com/egharness/egharness/harness/live"
)

func TestBootstrap(t *testing.T) {
	b, err := live.Bootstrap(
		live.BootstrapOptions{XDSAddress: "172.18.0.1:18000", NodeID: "envoy-e2e", NodeCluster: "egharness",
			AdminPort: 19000})
	if err != nil {
		t.Fatal(err)
	}
	if err := b.ValidateAll(); err != nil {
		t.Fatal(err)
	}
	if b.GetNode().GetId() != "envoy-e2e" {
		t.Errorf("node %v", b.GetNode())
	}
	ads := b.GetDynamicResources().GetAdsConfig()
	if ads.GetApiType() != corev3.ApiConfigSource_GRPC || ads.GetTransportApiVersion() != corev3.ApiVersion_V3 ||
		ads.GetGrpcServices()[0].GetEnvoyGrpc().GetClusterName() != live.XDSClusterName {
		t.Errorf("ads config %v", ads)
	}
	for _, cs := range []*corev3.ConfigSource{b.GetDynamicResources().GetCdsConfig(),
		b.GetDynamicResources().GetLdsConfig()} {
		if cs.GetAds() == nil || cs.GetResourceApiVersion() != corev3.ApiVersion_V3 {
			t.Errorf("CDS/LDS not over ADS v3: %v", cs)
		}
	}
	xds := b.GetStaticResources().GetClusters()[0]
	sa := xds.GetLoadAssignment().GetEndpoints()[0].GetLbEndpoints()[0].GetEndpoint().GetAddress().GetSocketAddress()
	if xds.GetType() != clusterv3.Cluster_STATIC || sa.GetAddress() != "172.18.0.1" || sa.GetPortValue() != 18000 {
		t.Errorf("xDS cluster %v", xds)
	}
	if _, ok := xds.GetTypedExtensionProtocolOptions()["envoy.extensions.upstreams.http.v3.HttpProtocolOptions"]; !ok {
		t.Error("the xDS cluster does not speak HTTP/2")
	}

	// The YAML Envoy reads (-c) is the same bootstrap.
	y, err := live.BootstrapYAML(b)
	if err != nil {
		t.Fatal(err)
	}
	js, err := yaml.YAMLToJSON(y)
	if err != nil {
		t.Fatal(err)
	}
	back := &bootstrapv3.Bootstrap{}
	if err := protojson.Unmarshal(js, back); err != nil {
		t.Fatalf("%v\n%s", err, y)
	}
	if !proto.Equal(b, back) {
		t.Errorf("bootstrap YAML does not read back:\n%s", y)
	}

	// A host name is resolved by Envoy.
	b, err = live.Bootstrap(live.BootstrapOptions{XDSAddress: "host.docker.internal:18000", NodeID: "n", AdminPort: 19000})
	if err != nil || b.GetStaticResources().GetClusters()[0].GetType() != clusterv3.Cluster_STRICT_DNS {
		t.Errorf("host name: %v %v", err, b)
	}
	for _, bad := range []string{"18000", "host:0", "host:http", ""} {
		if _, err := live.Bootstrap(live.BootstrapOptions{XDSAddress: bad, NodeID: "n"}); err == nil ||
			!strings.Contains(err.Error(), "xDS address") {
			t.Errorf("%q: %v", bad, err)
		}
	}
	// Validation is real: a node without an ID is still valid, a port past 65535 is not.
	if _, err := live.Bootstrap(
		live.BootstrapOptions{XDSAddress: "10.0.0.1:1", NodeID: "n", AdminPort: 70000}); err == nil {
		t.Error("admin port 70000 passed validation")
	}
}
