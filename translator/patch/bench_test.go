package patch_test

import (
	"fmt"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/egharness/egharness/translator"
	"github.com/egharness/egharness/translator/config"
	"github.com/egharness/egharness/translator/patch"
	"github.com/egharness/egharness/translator/profile"
	"github.com/egharness/egharness/translator/resource"
	"github.com/egharness/egharness/translator/result"

	"github.com/egharness/egharness/internal/testutil"
	egv1a1 "github.com/envoyproxy/gateway/api/v1alpha1"
)

// snapshotYAML is a Gateway with one HTTP listener and n HTTPRoutes, each with its own
// hostname (so n virtual hosts in one route configuration) and cluster.
func snapshotYAML(n int) string {
	var b strings.Builder
	b.WriteString(testutil.GatewayClass + `---
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: eg, namespace: default}
spec:
  gatewayClassName: eg
  listeners: [{name: http, protocol: HTTP, port: 80}]
---
apiVersion: v1
kind: Service
metadata: {name: app, namespace: default}
spec: {clusterIP: 10.96.0.10, ports: [{name: http, port: 8080}]}
`)
	for i := 0; i < n; i++ {
		fmt.Fprintf(&b, `---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: r%d, namespace: default}
spec:
  parentRefs: [{name: eg}]
  hostnames: [r%d.example.com]
  rules: [{backendRefs: [{name: app, port: 8080}]}]
`, i, i)
	}
	return b.String()
}

// policiesYAML is 10 EnvoyPatchPolicies of 100 operations each: per route, a header added
// to its route, a test of its cluster's timeout, the timeout replaced, and every tenth a
// jsonPath selection of its virtual host by name; the rest misses (a cluster that is not
// there), as stale patches do.
func policiesYAML(routes int) string {
	var b strings.Builder
	op := 0
	for p := 0; p < 10; p++ {
		fmt.Fprintf(&b, `---
apiVersion: gateway.envoyproxy.io/v1alpha1
kind: EnvoyPatchPolicy
metadata: {name: p%d, namespace: default}
spec:
  type: JSONPatch
  priority: %d
  targetRef: {group: gateway.networking.k8s.io, kind: Gateway, name: eg}
  jsonPatches:
`, p, p)
		for j := 0; j < 100; j++ {
			r := op % routes
			switch op % 5 {
			case 0:
				fmt.Fprintf(&b, `  - type: type.googleapis.com/envoy.config.route.v3.RouteConfiguration
    name: default/eg/http
    operation: {op: add, path: /virtual_hosts/%d/routes/0/request_headers_to_add,
      value: [{header: {key: x-op, value: "%d"}}]}
`, r, op)
			case 1:
				fmt.Fprintf(&b, `  - type: type.googleapis.com/envoy.config.cluster.v3.Cluster
    name: httproute/default/r%d/rule/0
    operation: {op: test, path: /name, value: httproute/default/r%d/rule/0}
`, r, r)
			case 2:
				fmt.Fprintf(&b, `  - type: type.googleapis.com/envoy.config.cluster.v3.Cluster
    name: httproute/default/r%d/rule/0
    operation: {op: replace, path: /connect_timeout, value: %ds}
`, r, 1+op%9)
			case 3:
				fmt.Fprintf(&b, `  - type: type.googleapis.com/envoy.config.route.v3.RouteConfiguration
    name: default/eg/http
    operation: {op: add, jsonPath: "$.virtual_hosts[?(@.name == 'default/eg/http/r%d_example_com')].routes[0]",
      path: response_headers_to_add, value: [{header: {key: x-op, value: "%d"}}]}
`, r, op)
			case 4:
				fmt.Fprintf(&b, `  - type: type.googleapis.com/envoy.config.cluster.v3.Cluster
    name: gone/%d
    operation: {op: replace, path: /connect_timeout, value: 1s}
`, op)
			}
			op++
		}
	}
	return b.String()
}

// BenchmarkPatch1kOperations applies 1000 operations (10 policies) to the xDS of a
// Gateway with 100 HTTPRoutes: each operation on a route configuration rewrites the whole
// configuration (100 virtual hosts) through JSON, as EG does. The snapshot is cloned
// outside the timer.
func BenchmarkPatch1kOperations(b *testing.B) {
	for _, routes := range []int{10, 100} {
		b.Run(fmt.Sprintf("routes=%d", routes), func(b *testing.B) {
			dec, err := resource.Decode("bench.yaml", []byte(snapshotYAML(routes)+policiesYAML(routes)), resource.Options{})
			if err != nil {
				b.Fatal(err)
			}
			var objs, policies []resource.Object
			for _, o := range dec.Objects {
				if o.Kind == egv1a1.KindEnvoyPatchPolicy {
					policies = append(policies, o)
				} else {
					objs = append(objs, o)
				}
			}
			prof, _ := profile.Get("v1.9")
			res, err := translator.Translate(translator.Input{Objects: objs, Config: config.Config{}, Profile: prof})
			if err != nil {
				b.Fatal(err)
			}
			all := append(append([]resource.Object(nil), objs...), policies...)
			stage := patch.Stage{Enabled: true}
			// check once that the workload is what it says
			x := cloneXDS(res.XDS)
			out := stage.Apply(all, res.Statuses, &x)
			hits := 0
			for _, r := range out.Patches {
				if r.Hit {
					hits++
				}
			}
			if len(out.Patches) != 1000 || hits != 800 {
				b.Fatalf("%d records, %d hits; want 1000 and 800", len(out.Patches), hits)
			}
			// Fresh snapshots are made before the timer starts, so that the measurement is
			// the patching alone.
			fresh := make([]result.XDS, b.N)
			for i := range fresh {
				fresh[i] = cloneXDS(res.XDS)
			}
			b.ReportAllocs()
			cpu0 := cpuTime()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				_ = stage.Apply(all, res.Statuses, &fresh[i])
			}
			b.StopTimer()
			// The process's CPU time says what the work costs on a machine shared with
			// other jobs, where the wall time (ns/op) also counts the waiting.
			b.ReportMetric(float64((cpuTime()-cpu0).Nanoseconds())/float64(b.N), "cpu-ns/op")
		})
	}
}

func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
