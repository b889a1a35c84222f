package check_test

import (
	"strings"
	"testing"

	"github.com/egharness/egharness/harness/check"
	"github.com/egharness/egharness/internal/testutil"
)

// A scenario with one EnvoyPatchPolicy whose first operation hits and second misses.
var patchBase = `name: patch-checks
covers: [EPP-04]
config:
  extensionApis: {enableEnvoyPatchPolicy: true}
resources: |
` + testutil.Indent(testutil.Gateway) + `  ---
  apiVersion: gateway.envoyproxy.io/v1alpha1
  kind: EnvoyPatchPolicy
  metadata: {name: p, namespace: default}
  spec:
    type: JSONPatch
    targetRef: {group: gateway.networking.k8s.io, kind: Gateway, name: eg}
    jsonPatches:
    - type: type.googleapis.com/envoy.config.listener.v3.Listener
      name: default/eg/http
      operation: {op: add, path: /per_connection_buffer_limit_bytes, value: 1024}
    - type: type.googleapis.com/envoy.config.listener.v3.Listener
      name: tcp-80
      operation: {op: add, path: /per_connection_buffer_limit_bytes, value: 1024}
expect:
  patches:
  - {policy: EnvoyPatchPolicy/default/p, operation: 0, outcome: hit}
  - {policy: EnvoyPatchPolicy/default/p, operation: 1, outcome: miss, reason: no such resource}
`

func TestPatchExpectations(t *testing.T) {
	if fs := check.Run(load(t, patchBase), "v1.9", translate(t, load(t, patchBase), "v1.9")); len(fs) != 0 {
		t.Fatalf("failures for correct expectations:\n%s", describe(fs))
	}
	tests := []struct {
		name, old, new, where, marker, msg string
	}{
		{
			name:  "a hit expected, a miss came",
			old:   "operation: 1, outcome: miss, reason: no such resource}",
			new:   "operation: 1, outcome: hit}",
			where: "expect.patches[1]", marker: "operation: 1, outcome: hit",
			msg: `EnvoyPatchPolicy/default/p operation 1: expected a hit, got a miss: no such resource: Listener "tcp-80"`,
		},
		{
			name:  "a miss expected, a hit came",
			old:   "operation: 0, outcome: hit}",
			new:   "operation: 0, outcome: miss}",
			where: "expect.patches[0]", marker: "operation: 0, outcome: miss",
			msg: "EnvoyPatchPolicy/default/p operation 0: expected a miss, got a hit",
		},
		{
			name:  "another reason",
			old:   "reason: no such resource}",
			new:   "reason: test failed}",
			where: "expect.patches[1]", marker: "reason: test failed",
			msg: `does not contain "test failed"`,
		},
		{
			name:  "an operation the policy does not have",
			old:   "operation: 1, outcome: miss, reason: no such resource}",
			new:   "operation: 7, outcome: miss}",
			where: "expect.patches[1]", marker: "operation: 7",
			msg: "EnvoyPatchPolicy/default/p operation 7: no record of it (operations recorded for the policy: 0, 1)",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f, text := onlyFailure(t, patchBase, tc.old, tc.new)
			if f.Check != "patches" || f.Where != tc.where || f.Line != testutil.LineOf(t, text, tc.marker) ||
				!strings.Contains(f.Msg, tc.msg) {
				t.Errorf("got %s (check %s, line %d), want %s at line %d containing %q",
					f.Where, f.Check, f.Line, tc.where, testutil.LineOf(t, text, tc.marker), tc.msg)
				t.Logf("message: %s", f.Msg)
			}
		})
	}
}
