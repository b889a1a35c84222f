package routecheck_test

import (
	"errors"
	"strings"
	"testing"

	adminv3 "github.com/envoyproxy/go-control-plane/envoy/admin/v3"
	listenerv3 "github.com/envoyproxy/go-control-plane/envoy/config/listener/v3"
	routev3 "github.com/envoyproxy/go-control-plane/envoy/config/route/v3"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/anypb"

	"github.com/egharness/egharness/harness/routecheck"
	"github.com/egharness/egharness/harness/scenario/scenariotest"
	"github.com/egharness/egharness/translator"
	"github.com/egharness/egharness/translator/profile"
)

// snapshot packs listeners and route configurations as a ConfigDump (a list of Any): the fuzzer
// mutates its bytes, so listeners, filters and routes (typed configs included) arrive
// broken in every way protobuf allows.
func snapshot(t testing.TB, ls []*listenerv3.Listener, rs []*routev3.RouteConfiguration) []byte {
	var dr adminv3.ConfigDump
	for _, l := range ls {
		a, err := anypb.New(l)
		if err != nil {
			t.Fatal(err)
		}
		dr.Configs = append(dr.Configs, a)
	}
	for _, r := range rs {
		a, err := anypb.New(r)
		if err != nil {
			t.Fatal(err)
		}
		dr.Configs = append(dr.Configs, a)
	}
	b, err := proto.MarshalOptions{Deterministic: true}.Marshal(&dr)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func unpack(b []byte) ([]*listenerv3.Listener, []*routev3.RouteConfiguration, bool) {
	var dr adminv3.ConfigDump
	if proto.Unmarshal(b, &dr) != nil {
		return nil, nil, false
	}
	var ls []*listenerv3.Listener
	var rs []*routev3.RouteConfiguration
	for _, a := range dr.Configs {
		m, err := a.UnmarshalNew()
		if err != nil {
			continue
		}
		switch v := m.(type) {
		case *listenerv3.Listener:
			ls = append(ls, v)
		case *routev3.RouteConfiguration:
			rs = append(rs, v)
		}
	}
	return ls, rs, true
}

// FuzzRouteCheck feeds the route checker hostile snapshots (a vendor's xDS, mutated from
// every scenario's translation) and hostile requests (from every scenario's traffic
// expectations). Whatever the input: no panic, no hang, the same answer twice, and an
// answer that holds together.
func FuzzRouteCheck(f *testing.F) {
	set := scenariotest.Load(f, "../../scenarios")
	for _, s := range set.Scenarios {
		for _, pn := range s.ProfilesOrDefault() {
			p, err := profile.Get(pn)
			if err != nil {
				f.Fatal(err)
			}
			res, err := translator.Translate(translator.Input{Objects: s.Objects, Config: s.Settings, Profile: p})
			if err != nil {
				f.Fatal(err)
			}
			snap := snapshot(f, res.XDS.Listeners, res.XDS.Routes)
			reqs := s.ExpectFor(pn).Traffic
			if len(reqs) == 0 {
				f.Add(snap, uint32(80), "app.example.com", "/", "GET", "", "", "", uint64(0), "")
			}
			for _, tr := range reqs {
				r := tr.Request
				var hdrs []string
				for k, v := range r.Headers {
					hdrs = append(hdrs, k+":"+v)
				}
				method := r.Method
				if r.GRPC {
					method = "POST"
					hdrs = append(hdrs, "content-type:application/grpc")
				}
				var random uint64
				if r.Random != nil {
					random = *r.Random
				}
				f.Add(snap, r.Port+10000, r.Host, r.Path, method, r.SNI, r.Protocol, strings.Join(hdrs, "\n"), random,
					"h2,http/1.1")
			}
		}
	}
	f.Fuzz(func(t *testing.T, snap []byte, port uint32, host, path, method, sni, protocol, headers string, random uint64,
		alpn string) {
		ls, rs, ok := unpack(snap)
		if !ok {
			return
		}
		tbl, err := routecheck.New(ls, rs)
		if err != nil {
			if !errors.Is(err, routecheck.ErrInvalidConfig) {
				t.Errorf("New error not marked ErrInvalidConfig: %v", err)
			}
			return
		}
		req := routecheck.Request{Port: port, Host: host, Path: path, Method: method, SNI: sni, Protocol: protocol,
			Random: random, Headers: map[string]string{}}
		for _, h := range strings.Split(headers, "\n") {
			if k, v, ok := strings.Cut(h, ":"); ok {
				req.Headers[k] = v
			}
		}
		if alpn != "" {
			req.ALPN = strings.Split(alpn, ",")
		}
		ans, err := tbl.Check(req)
		ans2, err2 := tbl.Check(req)
		if ans != ans2 || (err == nil) != (err2 == nil) || (err != nil && err.Error() != err2.Error()) {
			t.Fatalf("two answers to one request: %+v (%v) and %+v (%v)", ans, err, ans2, err2)
		}
		if err != nil {
			return
		}
		if ans.Listener == "" {
			t.Errorf("answer without a listener: %+v", ans)
		}
		if ans.Cluster != "" && ans.Status != 200 {
			t.Errorf("routed to cluster %q with status %d", ans.Cluster, ans.Status)
		}
		if ans.L4 && (ans.RouteConfig != "" || ans.VirtualHost != "" || ans.Route != "") {
			t.Errorf("a layer-4 answer names HTTP routing: %+v", ans)
		}
	})
}
