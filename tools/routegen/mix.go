package main

import (
	"crypto/ed25519"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"encoding/pem"
	"fmt"
	"io"
	"math/big"
	"strings"
	"time"
)

// The realistic mix (-mix): what a platform team's dump holds besides its routes. Per 1,000
// HTTPRoutes: 50 Gateways with an HTTP and an HTTPS listener (each with its certificate
// Secret), 200 SecurityPolicies (JWT, CORS and basic auth in turn), 200
// BackendTrafficPolicies (retries, timeouts, a local rate limit, a circuit breaker), 100
// ClientTrafficPolicies (one per listener), 100 BackendTLSPolicies with their CA ConfigMaps,
// a Service and EndpointSlice for every four routes, and ReferenceGrants for the 10% of
// routes that also send to a shared Service in another namespace. Routes are spread over ten
// team namespaces. Every count scales with -n, so 10× the routes is 10× every kind.

const teams = 10

// mixCert is a self-signed Ed25519 certificate for *.example.com and its key. Ed25519 keys
// come from a seed and its signatures are deterministic, so the output still depends only
// on the flags.
func mixCert() (certPEM, keyPEM []byte, err error) {
	key := ed25519.NewKeyFromSeed(make([]byte, ed25519.SeedSize))
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "*.example.com"},
		DNSNames:              []string{"*.example.com", "example.com"},
		NotBefore:             time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC),
		NotAfter:              time.Date(2125, 1, 1, 0, 0, 0, 0, time.UTC),
		IsCA:                  true,
		BasicConstraintsValid: true,
		KeyUsage:              x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(nil, tmpl, tmpl, key.Public(), key)
	if err != nil {
		return nil, nil, err
	}
	pk, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return nil, nil, err
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
		pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: pk}), nil
}

// scaled is per1k for every 1,000 routes, at least one.
func scaled(n, per1k int) int {
	if c := n * per1k / 1000; c > 0 {
		return c
	}
	return 1
}

func writeMix(w io.Writer, n int) error {
	certPEM, keyPEM, err := mixCert()
	if err != nil {
		return err
	}
	crt := base64.StdEncoding.EncodeToString(certPEM)
	key := base64.StdEncoding.EncodeToString(keyPEM)
	gateways := scaled(n, 50)
	// services per team namespace: one for every four routes
	services := (n/teams + 3) / 4
	if services < 1 {
		services = 1
	}
	p := func(format string, args ...any) { fmt.Fprintf(w, format, args...) }

	p(`apiVersion: gateway.networking.k8s.io/v1
kind: GatewayClass
metadata: {name: eg}
spec: {controllerName: gateway.envoyproxy.io/gatewayclass-controller}
`)
	for _, ns := range append([]string{"infra", "shared"}, teamNames()...) {
		p("---\napiVersion: v1\nkind: Namespace\nmetadata: {name: %s}\n", ns)
	}
	for g := 0; g < gateways; g++ {
		p(`---
apiVersion: v1
kind: Secret
metadata: {name: gw%[1]d-cert, namespace: infra}
type: kubernetes.io/tls
data: {tls.crt: %[2]s, tls.key: %[3]s}
---
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: gw%[1]d, namespace: infra}
spec:
  gatewayClassName: eg
  listeners:
  - {name: http, protocol: HTTP, port: 80, allowedRoutes: {namespaces: {from: All}}}
  - name: https
    protocol: HTTPS
    port: 443
    allowedRoutes: {namespaces: {from: All}}
    tls: {mode: Terminate, certificateRefs: [{name: gw%[1]d-cert}]}
`, g, crt, key)
	}
	for c := 0; c < 2*scaled(n, 50); c++ {
		section := []string{"http", "https"}[c%2]
		p(`---
apiVersion: gateway.envoyproxy.io/v1alpha1
kind: ClientTrafficPolicy
metadata: {name: ctp%[1]d, namespace: infra}
spec:
  targetRefs: [{group: gateway.networking.k8s.io, kind: Gateway, name: gw%[2]d, sectionName: %[3]s}]
  clientIPDetection: {xForwardedFor: {numTrustedHops: 1}}
  timeout: {http: {idleTimeout: 30s, requestReceivedTimeout: 10s}}
  headers: {withUnderscoresAction: RejectRequest}
`, c, (c/2)%gateways, section)
	}
	p(`---
apiVersion: v1
kind: Service
metadata: {name: common, namespace: shared}
spec:
  clusterIP: 10.96.0.2
  ports: [{name: http, port: 8080}]
---
apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata: {name: common-1, namespace: shared, labels: {kubernetes.io/service-name: common}}
addressType: IPv4
ports: [{name: http, port: 8080, protocol: TCP}]
endpoints: [{addresses: [10.2.0.1], conditions: {ready: true}}, {addresses: [10.2.0.2], conditions: {ready: true}}]
`)
	for t, ns := range teamNames() {
		p(`---
apiVersion: gateway.networking.k8s.io/v1beta1
kind: ReferenceGrant
metadata: {name: from-%[1]s, namespace: shared}
spec:
  from: [{group: gateway.networking.k8s.io, kind: HTTPRoute, namespace: %[1]s}]
  to: [{group: "", kind: Service, name: common}]
---
apiVersion: v1
kind: Secret
metadata: {name: users, namespace: %[1]s}
data: {.htpasswd: YWxpY2U6e1NIQX0vdk5CK0YySFE1NTlrYUxVWmJtSEh2WnJYcGc9Cg==}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: backend-ca, namespace: %[1]s}
data:
  ca.crt: |
%[2]s`, ns, indent(string(certPEM), "    "))
		for s := 0; s < services; s++ {
			p(`---
apiVersion: v1
kind: Service
metadata: {name: svc%[1]d, namespace: %[2]s}
spec:
  clusterIP: 10.%[3]d.%[4]d.%[5]d
  ports: [{name: http, port: 8080}]
---
apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata: {name: svc%[1]d-1, namespace: %[2]s, labels: {kubernetes.io/service-name: svc%[1]d}}
addressType: IPv4
ports: [{name: http, port: 8080, protocol: TCP}]
endpoints: [{addresses: [10.%[6]d.%[4]d.%[5]d], conditions: {ready: true}}]
`, s, ns, 100+t, s/250, s%250+1, 200+t)
		}
	}
	// BackendTLSPolicies: the first services of each team, 100 per 1,000 routes.
	for b := 0; b < scaled(n, 100); b++ {
		p(`---
apiVersion: gateway.networking.k8s.io/v1
kind: BackendTLSPolicy
metadata: {name: tls-svc%[1]d, namespace: team%[2]d}
spec:
  targetRefs: [{group: "", kind: Service, name: svc%[1]d}]
  validation:
    caCertificateRefs: [{group: "", kind: ConfigMap, name: backend-ca}]
    hostname: svc%[1]d.example.com
`, (b/teams)%services, b%teams)
	}
	for i := 0; i < n; i++ {
		ns := i % teams
		p(`---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: r%[1]d, namespace: team%[2]d, creationTimestamp: "2026-01-01T00:00:00Z"}
spec:
  parentRefs: [{name: gw%[3]d, namespace: infra}]
  hostnames: [h%[1]d.example.com]
  rules:
  - matches:
    - path: {type: PathPrefix, value: /api}
      headers: [{name: x-tenant, value: t%[1]d}]
    - path: {type: Exact, value: /health}
    filters: [{type: RequestHeaderModifier, requestHeaderModifier: {add: [{name: x-route, value: r%[1]d}]}}]
    backendRefs:
`, i, ns, i%gateways)
		svc := (i / teams) / 4 % services
		if i%10 == 3 {
			p("    - {name: svc%d, port: 8080, weight: 90}\n    - {name: common, namespace: shared, port: 8080, weight: 10}\n",
				svc)
		} else {
			p("    - {name: svc%d, port: 8080}\n", svc)
		}
		p(`  - matches: [{path: {type: PathPrefix, value: /}}]
    timeouts: {request: 10s, backendRequest: 5s}
    backendRefs: [{name: svc%d, port: 8080}]
`, svc)
		target := fmt.Sprintf("targetRefs: [{group: gateway.networking.k8s.io, kind: HTTPRoute, name: r%d}]", i)
		switch {
		case i%5 == 0:
			p(
				"---\napiVersion: gateway.envoyproxy.io/v1alpha1\nkind: SecurityPolicy\n"+
					"metadata: {name: sp-r%d, namespace: team%d}\nspec:\n  %s\n",
				i, ns, target)
			switch (i / 5) % 3 {
			case 0:
				p(`  jwt:
    providers:
    - name: issuer
      issuer: https://issuer.example.com
      audiences: [r%d]
      remoteJWKS: {uri: "https://issuer.example.com/.well-known/jwks.json"}
      claimToHeaders: [{claim: sub, header: x-user}]
`, i)
			case 1:
				p(
					"  cors:\n    allowOrigins: [\"https://*.example.com\"]\n    allowMethods: [GET, POST]\n" +
						"    allowHeaders: [x-token]\n    maxAge: 1h\n")
			default:
				p("  basicAuth: {users: {name: users}}\n")
			}
		case i%5 == 1:
			p(`---
apiVersion: gateway.envoyproxy.io/v1alpha1
kind: BackendTrafficPolicy
metadata: {name: btp-r%[1]d, namespace: team%[2]d}
spec:
  %[3]s
  retry:
    numRetries: 3
    retryOn: {triggers: [connect-failure, retriable-status-codes], httpStatusCodes: [503]}
    perRetry: {timeout: 1s, backOff: {baseInterval: 100ms, maxInterval: 1s}}
  timeout:
    http: {requestTimeout: 10s, connectionIdleTimeout: 60s}
    tcp: {connectTimeout: 5s}
  rateLimit:
    local:
      rules: [{limit: {requests: 100, unit: Second}}]
  circuitBreaker: {maxConnections: 100, maxPendingRequests: 50, maxParallelRequests: 100}
`, i, ns, target)
		}
	}
	return nil
}

func teamNames() []string {
	names := make([]string, teams)
	for t := range names {
		names[t] = fmt.Sprintf("team%d", t)
	}
	return names
}

// indent prefixes every line of s.
func indent(s, prefix string) string {
	return prefix + strings.ReplaceAll(strings.TrimSuffix(s, "\n"), "\n", "\n"+prefix) + "\n"
}
