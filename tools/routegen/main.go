// Command routegen writes a multi-document YAML file of one GatewayClass, one Gateway, one
// Service and N HTTPRoutes (two matches each, spread over 50 hostnames), the input of the
// performance numbers of docs/performance.md; with -mix, the realistic mix of Gateways, TLS and
// every policy kind that mix.go describes. The output depends only on its flags.
//
//	go run ./tools/routegen -n 10000 > /tmp/routes-10k.yaml
//	/usr/bin/time -v bin/egharness translate -f /tmp/routes-10k.yaml -o json > /dev/null
package main

import (
	"bufio"
	"flag"
	"fmt"
	"os"
)

const head = `apiVersion: gateway.networking.k8s.io/v1
kind: GatewayClass
metadata:
  name: eg
spec:
  controllerName: gateway.envoyproxy.io/gatewayclass-controller
---
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata:
  name: eg
  namespace: default
spec:
  gatewayClassName: eg
  listeners:
  - name: http
    protocol: HTTP
    port: 80
---
apiVersion: v1
kind: Service
metadata:
  name: app
  namespace: default
spec:
  clusterIP: 10.96.0.10
  ports:
  - name: http
    port: 8080
`

const route = `---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata:
  name: r%[1]d
  namespace: default
  creationTimestamp: "2026-01-01T00:00:00Z"
spec:
  parentRefs:
  - name: eg
  hostnames:
  - h%[2]d.example.com
  rules:
  - matches:
    - path:
        type: PathPrefix
        value: /p%[1]d
    - path:
        type: Exact
        value: /e%[1]d
      headers:
      - name: x-tenant
        value: t%[1]d
    backendRefs:
    - name: app
      port: 8080
`

func main() {
	n := flag.Int("n", 1000, "number of HTTPRoutes")
	hosts := flag.Int("hosts", 50, "number of distinct hostnames the routes share")
	mix := flag.Bool("mix", false, "write the realistic mix instead: per 1,000 routes 50 Gateways with TLS, "+
		"200 SecurityPolicies, 200 BackendTrafficPolicies, 100 ClientTrafficPolicies, 100 BackendTLSPolicies, "+
		"Services with EndpointSlices and ReferenceGrants over ten namespaces (-hosts is ignored)")
	flag.Parse()
	if *n < 0 || *hosts < 1 {
		fmt.Fprintln(os.Stderr, "routegen: -n must be >= 0 and -hosts >= 1")
		os.Exit(2)
	}
	w := bufio.NewWriter(os.Stdout)
	if *mix {
		if err := writeMix(w, *n); err != nil {
			fmt.Fprintln(os.Stderr, "routegen:", err)
			os.Exit(1)
		}
		if err := w.Flush(); err != nil {
			fmt.Fprintln(os.Stderr, "routegen:", err)
			os.Exit(1)
		}
		return
	}
	fmt.Fprint(w, head)
	for i := 0; i < *n; i++ {
		fmt.Fprintf(w, route, i, i%*hosts)
	}
	if err := w.Flush(); err != nil {
		fmt.Fprintln(os.Stderr, "routegen:", err)
		os.Exit(1)
	}
}
