package upgrade

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/egharness/egharness/harness/impl"
	"github.com/egharness/egharness/internal/testutil"
	"github.com/egharness/egharness/translator/config"
	"github.com/egharness/egharness/translator/profile"
	"github.com/egharness/egharness/translator/resource"
)

// routesDump is a dump of n HTTPRoutes on one Gateway (50 hostnames, three matches in two
// rules each; routes 2k and 2k+1 share a hostname and a match, so v1.9 flags half of them with RouteRulesOverlap),
// with a v1 TCPRoute (which v1.8.0's CRDs do not serve: UPG-02) and an FQDN Backend.
func routesDump(n int) string {
	var b strings.Builder
	b.WriteString(`apiVersion: gateway.envoyproxy.io/v1alpha1
kind: EnvoyGateway
extensionApis: {enableBackend: true}
---
` + testutil.GatewayClass + `---
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: eg, namespace: default}
spec:
  gatewayClassName: eg
  listeners:
  - {name: http, protocol: HTTP, port: 80}
  - {name: pg, protocol: TCP, port: 5432}
---
apiVersion: v1
kind: Service
metadata: {name: app, namespace: default}
spec: {clusterIP: 10.96.0.10, ports: [{name: http, port: 8080}, {name: pg, port: 5432}]}
---
apiVersion: gateway.envoyproxy.io/v1alpha1
kind: Backend
metadata: {name: partner, namespace: default}
spec: {endpoints: [{fqdn: {hostname: api.partner.example, port: 443}}]}
---
apiVersion: gateway.networking.k8s.io/v1
kind: TCPRoute
metadata: {name: pg, namespace: default}
spec:
  parentRefs: [{name: eg, sectionName: pg}]
  rules: [{backendRefs: [{name: app, port: 5432}]}]
`)
	for i := 0; i < n; i++ {
		fmt.Fprintf(&b, `---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: r%d, namespace: default}
spec:
  parentRefs: [{name: eg, sectionName: http}]
  hostnames: [h%d.example.com]
  rules:
  - matches: [{path: {type: PathPrefix, value: /p%d}}, {path: {type: Exact, value: /x%d}, method: GET}]
    backendRefs: [{name: app, port: 8080}]
  - matches: [{path: {type: PathPrefix, value: /partner%d}}]
    backendRefs: [{group: gateway.envoyproxy.io, kind: Backend, name: partner}]
`, i, (i/2)%50, i/2, i, i)
	}
	return b.String()
}

func benchRequest(tb testing.TB, n int, from, to string) Request {
	return dumpRequest(tb, routesDump(n), from, to)
}

// dumpRequest is an upgrade check of the objects of a YAML dump between two profiles.
func dumpRequest(tb testing.TB, dump, from, to string) Request {
	dec, err := resource.Decode("dump.yaml", []byte(dump), resource.Options{})
	if err != nil {
		tb.Fatal(err)
	}
	var sides [2]Side
	for i, name := range []string{from, to} {
		p, err := profile.Get(name)
		if err != nil {
			tb.Fatal(err)
		}
		s, err := ParseSide(p.Name, "", impl.Options{})
		if err != nil {
			tb.Fatal(err)
		}
		sides[i] = s
	}
	return Request{Objects: dec.Objects, Config: configOf(dec), From: sides[0], To: sides[1]}
}

// The generated dump is what the benchmark claims: its traps are found.
func TestRoutesDump(t *testing.T) {
	rep, err := Check(context.Background(), benchRequest(t, 40, "v1.8", "v1.9"))
	if err != nil {
		t.Fatal(err)
	}
	by := findingsByID(rep)
	if len(by["RT-11"]) != 40 || len(by["UPG-01"]) != 40 || len(by["UPG-02"]) == 0 {
		t.Errorf("RT-11 %d, UPG-01 %d, UPG-02 %d findings", len(by["RT-11"]), len(by["UPG-01"]), len(by["UPG-02"]))
	}
	rep, err = Check(context.Background(), benchRequest(t, 40, "v1.9", "v1.10-preview"))
	if err != nil {
		t.Fatal(err)
	}
	// 40 routes on 20 hostnames: 20 virtual hosts renamed, and the listeners
	if n := len(findingsByID(rep)["NAME-02"]); n < 20 {
		t.Errorf("%d NAME-02 findings", n)
	}
}

// BenchmarkUpgradeCheck1kRoutes is both translations and the comparison of a 1000-route
// dump, v1.8 → v1.9 (RouteRulesOverlap on 1000 routes, 1000 DNS clusters changing type).
func BenchmarkUpgradeCheck1kRoutes(b *testing.B) {
	req := benchRequest(b, 1000, "v1.8", "v1.9")
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Check(context.Background(), req); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkUpgradeCheck1kRoutesNameScheme is the same dump, v1.9 → v1.10-preview (every
// listener, route configuration and virtual host renamed).
func BenchmarkUpgradeCheck1kRoutesNameScheme(b *testing.B) {
	req := benchRequest(b, 1000, "v1.9", "v1.10-preview")
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Check(context.Background(), req); err != nil {
			b.Fatal(err)
		}
	}
}

func configOf(dec resource.Decoded) config.Config { return config.FromEnvoyGateway(dec.EnvoyGateway) }
