package xds

import (
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/egharness/egharness/translator/ir"
)

// A rule served on two listeners names its cluster twice: the cluster is built ahead once,
// for the first route, and the second route builds an equal one only when asked (its first
// claimant was left out of the output).
func TestPrebuildBuildsEachClusterOnce(t *testing.T) {
	route := func(listener string) *ir.HTTPRoute {
		return &ir.HTTPRoute{
			Name:   listener + "/rule/0",
			Source: ir.Source{Kind: "HTTPRoute", Name: "web", Namespace: "default", RuleName: "rule/0"},
			Destination: &ir.Destination{Name: "httproute/default/web/rule/0",
				Settings: []*ir.Backend{{Name: "httproute/default/web/rule/0/backend/0", Weight: 1,
					Kind: "Service", ServiceName: "app", Namespace: "default", Port: 80,
					Endpoints: []ir.Endpoint{{Host: "10.0.0.1", Port: 8080}}}}},
		}
	}
	listeners := []*ir.HTTPListener{
		{Name: "default/gw/http", Routes: []*ir.HTTPRoute{route("http")}},
		{Name: "default/gw/https", Routes: []*ir.HTTPRoute{route("https")}},
	}
	built := prebuildRoutes(listeners, newMetadataTable())
	if len(built) != 2 || len(built[0].plan) != 1 || len(built[1].plan) != 1 {
		t.Fatalf("plans: %+v", built)
	}
	if built[0].built[0] == nil || built[1].built[0] != nil {
		t.Fatalf("built ahead: first %v, second %v; want only the first", built[0].built[0], built[1].built[0])
	}
	first, second := built[0].cluster(0), built[1].cluster(0)
	if !proto.Equal(first.cluster, second.cluster) || !proto.Equal(first.cla, second.cla) {
		t.Errorf("the cluster built on demand differs:\n%v\n%v", first.cluster, second.cluster)
	}
	if first.cluster.GetName() != built[0].plan[0].name {
		t.Errorf("planned name %q, built %q", built[0].plan[0].name, first.cluster.GetName())
	}
	// the two routes of one rule share one metadata message
	if built[0].route.GetMetadata() != built[1].route.GetMetadata() {
		t.Error("the routes of one rule carry two metadata messages")
	}
}

// The metadata table gives one message per owner and policy, and a policy's its own.
func TestMetadataTable(t *testing.T) {
	table := newMetadataTable()
	owner := resourceRef{Kind: "HTTPRoute", Name: "web", Namespace: "default", SectionName: "rule/0"}
	policy := resourceRef{Kind: "BackendTrafficPolicy", Name: "retries", Namespace: "default"}
	plain, withPolicy := table.of(owner, resourceRef{}), table.of(owner, policy)
	if plain != table.of(owner, resourceRef{}) || withPolicy != table.of(owner, policy) {
		t.Error("the same owner got a second message")
	}
	if !proto.Equal(plain, resourceMetadata(owner)) {
		t.Errorf("owner metadata %v", plain)
	}
	eg := withPolicy.GetFilterMetadata()["envoy-gateway"].GetFields()
	got := eg["policies"].GetListValue().GetValues()
	if len(got) != 1 || got[0].GetStructValue().GetFields()["name"].GetStringValue() != "retries" ||
		len(eg["resources"].GetListValue().GetValues()) != 1 {
		t.Errorf("policy metadata %v", withPolicy)
	}
	if _, ok := plain.GetFilterMetadata()["envoy-gateway"].GetFields()["policies"]; ok {
		t.Error("adding a policy changed the owner's shared message")
	}
}
