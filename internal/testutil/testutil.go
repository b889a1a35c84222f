// Package testutil holds what the tests of several packages share: the Kubernetes objects
// most of their inputs start from, small helpers on text, and decoding those inputs.
package testutil

import (
	"strings"
	"testing"

	"github.com/egharness/egharness/translator/profile"
	"github.com/egharness/egharness/translator/resource"
)

// GatewayClass is GatewayClass eg, of Envoy Gateway's controller, as a YAML document. Like
// every fixture here it ends in a newline; join documents with "---\n".
const GatewayClass = `apiVersion: gateway.networking.k8s.io/v1
kind: GatewayClass
metadata: {name: eg}
spec: {controllerName: gateway.envoyproxy.io/gatewayclass-controller}
`

// Gateway is GatewayClass, then Gateway default/eg with one listener, http on port 80.
const Gateway = GatewayClass + `---
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: eg, namespace: default}
spec:
  gatewayClassName: eg
  listeners:
  - {name: http, protocol: HTTP, port: 80}
`

// AppService is Service default/app at 10.96.0.10 with one port, http 8080: the backend
// the inputs' routes send to.
const AppService = `apiVersion: v1
kind: Service
metadata: {name: app, namespace: default}
spec: {clusterIP: 10.96.0.10, ports: [{name: http, port: 8080}]}
`

// GatewayAndApp is Gateway, then AppService.
const GatewayAndApp = Gateway + "---\n" + AppService

// Indent puts two spaces before every line of text that is not empty: YAML documents as
// the block of a scenario's "resources: |".
func Indent(text string) string {
	lines := strings.SplitAfter(text, "\n")
	for i, l := range lines {
		if l != "" && l != "\n" {
			lines[i] = "  " + l
		}
	}
	return strings.Join(lines, "")
}

// LineOf is the 1-based line of the first line of text containing marker.
func LineOf(t testing.TB, text, marker string) int {
	t.Helper()
	for i, l := range strings.Split(text, "\n") {
		if strings.Contains(l, marker) {
			return i + 1
		}
	}
	t.Fatalf("marker %q not in the text", marker)
	return 0
}

// DecodeV19 decodes the YAML documents of text, read as the file named file, and gets
// profile v1.9, the one most tests translate with; either failing fails the test.
func DecodeV19(t testing.TB, file, text string) ([]resource.Object, profile.Profile) {
	t.Helper()
	dec, err := resource.Decode(file, []byte(text), resource.Options{})
	if err != nil {
		t.Fatalf("decode %s: %v", file, err)
	}
	p, err := profile.Get("v1.9")
	if err != nil {
		t.Fatal(err)
	}
	return dec.Objects, p
}
