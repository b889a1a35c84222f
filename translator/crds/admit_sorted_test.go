package crds_test

import (
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

// An object that breaks CEL rules on several fields is refused with the same message every
// time: the CEL validator visits an object's fields in map order, and the errors are sorted.
func TestCELErrorsInOneOrder(t *testing.T) {
	set := builtSet(t)
	js, err := yaml.YAMLToJSON([]byte(`apiVersion: gateway.envoyproxy.io/v1alpha1
kind: BackendTrafficPolicy
metadata: {name: two-rules, namespace: default}
spec:
  targetRefs: [{group: gateway.networking.k8s.io, kind: HTTPRoute, name: app}]
  loadBalancer: {type: ConsistentHash}
  faultInjection: {}
  healthCheck: {active: {type: HTTP}}
  mergeType: Replace
`))
	if err != nil {
		t.Fatal(err)
	}
	first := ""
	for i := 0; i < 30; i++ {
		v, err := set.Admit(js)
		if err != nil {
			t.Fatal(err)
		}
		if v.Allowed || strings.Count(v.Message, "Invalid value") < 2 {
			t.Fatalf("want a refusal with several errors, got allowed=%v %q", v.Allowed, v.Message)
		}
		if i == 0 {
			first = v.Message
		} else if v.Message != first {
			t.Fatalf("the message changed between runs:\n%s\n%s", first, v.Message)
		}
	}
}

// The schema's own errors on several fields (here duplicate list-map keys in two lists,
// which the validator reports in map order) come sorted by field path too.
func TestSchemaErrorsInOneOrder(t *testing.T) {
	set := builtSet(t)
	js, err := yaml.YAMLToJSON([]byte(`apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: dup, namespace: default}
spec:
  rules:
  - filters:
    - type: RequestHeaderModifier
      requestHeaderModifier:
        set: [{name: a, value: "1"}, {name: a, value: "2"}]
        add: [{name: b, value: "1"}, {name: b, value: "2"}]
`))
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 30; i++ {
		v, err := set.Admit(js)
		if err != nil {
			t.Fatal(err)
		}
		add := strings.Index(v.Message, "requestHeaderModifier.add[1]")
		set := strings.Index(v.Message, "requestHeaderModifier.set[1]")
		if v.Allowed || add < 0 || set < 0 {
			t.Fatalf("want a refusal naming both duplicates, got allowed=%v %q", v.Allowed, v.Message)
		}
		if add > set {
			t.Fatalf("run %d: errors not in field order: %s", i, v.Message)
		}
	}
}
