package live_test

import (
	"fmt"
	"strings"
	"testing"

	listenerv3 "github.com/envoyproxy/go-control-plane/envoy/config/listener/v3"
	"google.golang.org/protobuf/proto"

	"github.com/egharness/egharness/harness/live"
	"github.com/egharness/egharness/harness/xdsserver"
)

// Every scenario's endpoints move onto their stand-ins: each servable backend's locality
// holds one endpoint at its stand-in's address with its weight unchanged, the translation
// itself is untouched, and the result is still a consistent snapshot.
func TestRewriteEndpoints(t *testing.T) {
	rewritten := 0
	for _, sc := range scenarios(t) {
		l, err := xdsserver.Translate(sc, "")
		if err != nil {
			t.Fatal(err)
		}
		res := l.Result
		addrs := map[string]string{}
		for i, b := range live.Backends(res.IR) {
			addrs[b] = fmt.Sprintf("10.96.7.%d:3000", i+1)
		}
		before := make([]proto.Message, len(res.XDS.Endpoints))
		for i, e := range res.XDS.Endpoints {
			before[i] = proto.Clone(e)
		}
		out, err := live.RewriteEndpoints(&res.XDS, res.IR, addrs)
		if err != nil {
			t.Fatalf("%s: %v", sc.Name, err)
		}
		for i, e := range res.XDS.Endpoints {
			if !proto.Equal(before[i], e) {
				t.Errorf("%s: the translation's %s changed", sc.Name, e.GetClusterName())
			}
		}
		locs := live.Localities(res.IR)
		for i, cla := range out.Endpoints {
			for j, loc := range cla.GetEndpoints() {
				orig := res.XDS.Endpoints[i].GetEndpoints()[j]
				if loc.GetLoadBalancingWeight().GetValue() != orig.GetLoadBalancingWeight().GetValue() ||
					loc.GetLocality().GetRegion() != orig.GetLocality().GetRegion() {
					t.Errorf("%s: locality %s lost its name or weight", sc.Name, orig.GetLocality().GetRegion())
				}
				b := locs[loc.GetLocality().GetRegion()]
				if b == nil || !live.Servable(b) || len(orig.GetLbEndpoints()) == 0 {
					continue
				}
				rewritten++
				sa := loc.GetLbEndpoints()[0].GetEndpoint().GetAddress().GetSocketAddress()
				if len(loc.GetLbEndpoints()) != 1 ||
					fmt.Sprintf("%s:%d", sa.GetAddress(), sa.GetPortValue()) != addrs[live.BackendKey(b)] {
					t.Errorf("%s: locality %s points at %v, want %s", sc.Name, b.Name, loc.GetLbEndpoints(), addrs[live.BackendKey(b)])
				}
			}
		}
		if _, err := xdsserver.NewSnapshot("1", out); err != nil {
			t.Errorf("%s: %v", sc.Name, err)
		}
	}
	if rewritten < 20 {
		t.Errorf("only %d localities rewritten", rewritten)
	}
}

func TestPortConflicts(t *testing.T) {
	for _, sc := range scenarios(t) {
		l, err := xdsserver.Translate(sc, "")
		if err != nil {
			t.Fatal(err)
		}
		if c := xdsserver.PortConflicts(&l.Result.XDS); len(c) != 0 {
			// Gateways of their own on one port (no mergeGateways) are one proxy each in EG;
			// one Envoy cannot serve them at once (serving one Gateway at a time is future work).
			t.Logf("%s: %v", sc.Name, c)
			continue
		}
		if len(l.Result.XDS.Listeners) == 0 {
			continue
		}
		x := l.Result.XDS
		dup := proto.Clone(x.Listeners[0]).(*listenerv3.Listener)
		dup.Name = "other/gateway/http"
		x.Listeners = append(append([]*listenerv3.Listener(nil), x.Listeners...), dup)
		c := xdsserver.PortConflicts(&x)
		if len(c) != 1 || !strings.Contains(c[0], "other/gateway/http") || !strings.Contains(c[0], x.Listeners[0].GetName()) {
			t.Errorf("%s: %v", sc.Name, c)
		}
	}
}
