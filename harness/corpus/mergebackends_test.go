package corpus

import (
	"context"
	"os"
	"sort"
	"strings"
	"testing"

	tcpv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/network/tcp_proxy/v3"
	udpv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/udp/udp_proxy/v3"
	"sigs.k8s.io/yaml"

	"github.com/egharness/egharness/harness/impl"
	"github.com/egharness/egharness/translator/profile"
	"github.com/egharness/egharness/translator/result"
)

// TestMergeBackendsDecisionsAgreeWithEG checks the reference's mergeBackends decisions on
// every mergebackends-* case of EG's testdata against the IR EG records in its out.yaml
// (which the status comparison does not read): for each HTTP route, the shared clusters it
// names (backendClusterRefs) and whether it keeps clusters of its own (settings); for each
// TCP, TLS and UDP route, the one cluster it proxies to. Skipped without the module cache.
func TestMergeBackendsDecisionsAgreeWithEG(t *testing.T) {
	dir, err := DefaultDir()
	if err != nil {
		t.Skip(err)
	}
	all, err := Cases(dir)
	if err != nil {
		t.Skip(err)
	}
	var cases []Case
	for _, c := range all {
		if c.Prefix == "mergebackends" {
			cases = append(cases, c)
		}
	}
	if len(cases) == 0 {
		t.Skip("no mergebackends cases")
	}
	base, err := BaseObjects(cases)
	if err != nil {
		t.Fatal(err)
	}
	p, _ := profile.Get("v1.9")
	checked := 0
	for _, c := range cases {
		prep, err := Prepare(c, base)
		if err != nil {
			t.Fatalf("%s: %v", c.Name, err)
		}
		res, err := impl.Reference{}.Translate(context.Background(),
			impl.Request{Scenario: c.Name, Objects: prep.Objects, Config: prep.Settings.Config, Profile: p})
		if err != nil {
			t.Fatalf("%s: %v", c.Name, err)
		}
		data, err := os.ReadFile(c.Out)
		if err != nil {
			t.Fatal(err)
		}
		var out struct {
			XdsIR map[string]struct {
				HTTP []struct {
					Name   string `json:"name"`
					Routes []struct {
						Name           string         `json:"name"`
						DirectResponse any            `json:"directResponse"`
						Destination    *egDestination `json:"destination"`
					} `json:"routes"`
				} `json:"http"`
				TCP []struct {
					Name   string `json:"name"`
					Routes []struct {
						Name        string         `json:"name"`
						Destination *egDestination `json:"destination"`
					} `json:"routes"`
				} `json:"tcp"`
				UDP []struct {
					Name  string `json:"name"`
					Route *struct {
						Destination *egDestination `json:"destination"`
					} `json:"route"`
				} `json:"udp"`
			} `json:"xdsIR"`
		}
		if err := yaml.Unmarshal(data, &out); err != nil {
			t.Fatalf("%s: %v", c.Name, err)
		}
		ours := routeClusters(res.XDS)
		for _, x := range out.XdsIR {
			for _, l := range x.HTTP {
				for _, r := range l.Routes {
					if r.Destination == nil || r.DirectResponse != nil {
						continue
					}
					got, ok := ours["http "+l.Name+" "+r.Name]
					if !ok {
						// a rule without matches: EG's test skips the CRD's default match
						got, ok = ours["http "+l.Name+" "+strings.Replace(r.Name, "/match/-1/", "/match/0/", 1)]
					}
					if !ok {
						t.Errorf("%s: route %s of %s: not in the reference's xDS", c.Name, r.Name, l.Name)
						continue
					}
					refs, own := r.Destination.shared(), r.Destination.ownClusters()
					if strings.Join(refs, ",") != strings.Join(got.shared, ",") || own != got.own {
						t.Errorf("%s: route %s of %s: EG shares %v (clusters of its own: %v), the reference %v (%v)", c.Name, r.Name,
							l.Name, refs, own, got.shared, got.own)
					}
					checked++
				}
			}
			for _, l := range x.TCP {
				for _, r := range l.Routes {
					if r.Destination == nil {
						continue
					}
					checkL4(t, c.Name, "tcp "+l.Name+" "+r.Name, r.Destination, ours)
					checked++
				}
			}
			for _, l := range x.UDP {
				if l.Route == nil || l.Route.Destination == nil {
					continue
				}
				checkL4(t, c.Name, "udp "+l.Name, l.Route.Destination, ours)
				checked++
			}
		}
	}
	if checked == 0 {
		t.Error("no route checked")
	}
}

// egDestination is the part of an IR route destination EG's out.yaml records that the
// check reads.
type egDestination struct {
	Name               string `json:"name"`
	BackendClusterRefs []struct {
		Name string `json:"name"`
	} `json:"backendClusterRefs"`
	Settings []struct {
		Endpoints         []any `json:"endpoints"`
		IsDynamicResolver bool  `json:"isDynamicResolver"`
	} `json:"settings"`
}

func (d *egDestination) shared() []string {
	var out []string
	for _, r := range d.BackendClusterRefs {
		out = append(out, r.Name)
	}
	sort.Strings(out)
	return out
}

// ownClusters says whether the route forwards to clusters of its own (a setting with
// endpoints).
func (d *egDestination) ownClusters() bool {
	for _, s := range d.Settings {
		if len(s.Endpoints) > 0 || s.IsDynamicResolver {
			return true
		}
	}
	return false
}

type routeUse struct {
	shared []string // shared clusters, sorted
	own    bool     // clusters of the route's own
	l4     string   // the cluster of a TCP, TLS or UDP route
}

func isShared(name string) bool {
	first, _, _ := strings.Cut(name, "/")
	return first == "service" || first == "serviceimport" || first == "backend"
}

// routeClusters reads, from the reference's xDS, the clusters each route uses: HTTP routes
// by route configuration and name, TCP and TLS routes by listener and filter chain, UDP
// routes by listener.
func routeClusters(x result.XDS) map[string]routeUse {
	out := map[string]routeUse{}
	for _, rc := range x.Routes {
		for _, vh := range rc.GetVirtualHosts() {
			for _, r := range vh.GetRoutes() {
				a := r.GetRoute()
				if a == nil {
					continue
				}
				var names []string
				if a.GetCluster() != "" {
					names = []string{a.GetCluster()}
				}
				for _, w := range a.GetWeightedClusters().GetClusters() {
					names = append(names, w.GetName())
				}
				var u routeUse
				for _, n := range names {
					if isShared(n) {
						u.shared = append(u.shared, n)
					} else {
						u.own = true
					}
				}
				sort.Strings(u.shared)
				out["http "+rc.GetName()+" "+r.GetName()] = u
			}
		}
	}
	for _, l := range x.Listeners {
		for _, fc := range l.GetFilterChains() {
			for _, f := range fc.GetFilters() {
				var tp tcpv3.TcpProxy
				if f.GetTypedConfig().UnmarshalTo(&tp) == nil && tp.GetCluster() != "" {
					out["tcp "+l.GetName()+" "+fc.GetName()] = routeUse{l4: tp.GetCluster()}
				}
			}
		}
		for _, lf := range l.GetListenerFilters() {
			var u udpv3.UdpProxyConfig
			if lf.GetTypedConfig().UnmarshalTo(&u) == nil {
				out["udp "+l.GetName()] = routeUse{l4: udpCluster(&u)}
			}
		}
	}
	return out
}

func udpCluster(u *udpv3.UdpProxyConfig) string {
	var r udpv3.Route
	if a := u.GetMatcher().GetOnNoMatch().GetAction(); a != nil && a.GetTypedConfig().UnmarshalTo(&r) == nil {
		return r.GetCluster()
	}
	return ""
}

func checkL4(t *testing.T, name, key string, d *egDestination, ours map[string]routeUse) {
	t.Helper()
	got, ok := ours[key]
	if !ok {
		t.Errorf("%s: %s: not in the reference's xDS", name, key)
		return
	}
	// EG's singleClusterDestinationName: the route's own cluster when it has settings, else
	// its first shared one (a TLS route's rules may name the same backend twice).
	want := d.Name
	if refs := d.shared(); len(refs) > 0 && !d.ownClusters() {
		want = refs[0]
	}
	if isShared(want) != isShared(got.l4) || isShared(want) && want != got.l4 {
		t.Errorf("%s: %s: EG proxies to %s, the reference to %s", name, key, want, got.l4)
	}
}
