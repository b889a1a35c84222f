package crds_test

import (
	"fmt"
	"testing"

	"sigs.k8s.io/yaml"
)

// BenchmarkAdmitHTTPRoute is one HTTPRoute's admission as users' files hold them (two
// rules, matches, filters, backendRefs): the per-object cost every translate pays.
func BenchmarkAdmitHTTPRoute(b *testing.B) {
	set := builtSet(b)
	// Every document differs, as in users' files.
	js := make([][]byte, b.N+1)
	for i := range js {
		doc := fmt.Sprintf(`apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: r%d, namespace: default}
spec:
  parentRefs: [{name: eg, sectionName: http}]
  hostnames: [h%d.example.com]
  rules:
  - matches:
    - {path: {type: PathPrefix, value: /api}, headers: [{name: x-env, value: canary}]}
    - {path: {type: Exact, value: /health}}
    filters: [{type: RequestHeaderModifier, requestHeaderModifier: {add: [{name: x-route, value: r%d}]}}]
    backendRefs: [{name: app, port: 8080, weight: 90}, {name: canary, port: 8080, weight: 10}]
  - matches: [{path: {type: PathPrefix, value: /}}]
    timeouts: {request: 10s, backendRequest: 5s}
    backendRefs: [{name: app, port: 8080}]
`, i, i%50, i)
		var err error
		if js[i], err = yaml.YAMLToJSON([]byte(doc)); err != nil {
			b.Fatal(err)
		}
	}
	if v, err := set.Admit(js[0]); err != nil || !v.Allowed {
		b.Fatalf("%v %s", err, v.Message)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := set.Admit(js[i+1]); err != nil {
			b.Fatal(err)
		}
	}
}
