package check_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/egharness/egharness/harness/catalog"
	"github.com/egharness/egharness/harness/check"
	"github.com/egharness/egharness/harness/scenario"
	"github.com/egharness/egharness/internal/testutil"
	"github.com/egharness/egharness/translator"
	"github.com/egharness/egharness/translator/profile"
	"github.com/egharness/egharness/translator/result"
)

// A scenario whose every expectation holds for the reference translator. Each test case
// below breaks one of them and checks that exactly that one fails, at its line.
var base = `name: checks
covers: [RT-01]
profiles: [v1.8, v1.9]
resources: |
` + testutil.Indent(testutil.GatewayAndApp) + `  ---
  apiVersion: gateway.envoyproxy.io/v1alpha1
  kind: EnvoyProxy
  metadata: {name: proxy, namespace: default}
  spec: {routingType: Service}
  ---
  apiVersion: gateway.networking.k8s.io/v1
  kind: HTTPRoute
  metadata: {name: app, namespace: default}
  spec:
    parentRefs: [{name: eg}]
    hostnames: [app.example.com]
    rules:
    - matches: [{path: {type: PathPrefix, value: /app}}]
      backendRefs: [{name: app, port: 8080}]
    - matches: [{path: {type: Exact, value: /exact}}]
      backendRefs: [{name: app, port: 8080}]
  ---
  apiVersion: gateway.networking.k8s.io/v1
  kind: HTTPRoute
  metadata: {name: bad, namespace: default}
  spec:
    parentRefs: [{name: eg}]
    hostnames: [Bad.Example.com]
expect:
  admission:
  - {object: HTTPRoute/default/bad, allowed: false, message: "should match"}
  - {object: HTTPRoute/default/app, allowed: true}
  statuses:
  - object: HTTPRoute/default/app
    parent: Gateway/default/eg
    only: true
    conditions:
    - {type: Accepted, status: "True", reason: Accepted, message: Route is accepted}
    - {type: ResolvedRefs, status: "True", reason: ResolvedRefs}
    - {type: RouteRulesOverlap, absent: true}
  - {object: Gateway/default/eg, listener: http, attachedRoutes: 1}
  - {object: GatewayClass/eg, conditions: [{type: Accepted, status: "True", message: Valid GatewayClass}]}
  - {object: HTTPRoute/default/bad, absent: true}
  - {object: HTTPRoute/default/app, parent: Gateway/default/eg/http, absent: true}
  - {object: HTTPRoute/default/bad, parent: Gateway/default/eg, absent: true}
  xds:
  - {kind: Listener, name: default/eg/http}
  - {kind: RouteConfiguration, name: default/eg/http}
  - kind: VirtualHost
    name: default/eg/http/app_example_com
    domains: [app.example.com]
    routes:
    - httproute/default/app/rule/1/match/0/app_example_com
    - httproute/default/app/rule/0/match/0/app_example_com
  - {kind: Route, name: httproute/default/app/rule/0/match/0/app_example_com, in: default/eg/http/app_example_com}
  - {kind: Cluster, name: httproute/default/app/rule/0}
  - {kind: Cluster, name: httproute/default/app/rule/0-mirror-0, absent: true}
  - {kind: ClusterLoadAssignment, name: httproute/default/app/rule/1}
  - {kind: HTTPFilter, name: envoy.filters.http.router, in: default/eg/http}
  - {kind: Cluster, prefix: httproute/default/app/, names: [httproute/default/app/rule/0, httproute/default/app/rule/1]}
  snapshot:
  - {irRoute: httproute/default/app/rule/0/match/0/app_example_com,
     fields: {destination: {name: httproute/default/app/rule/0}}, absent: [directResponse]}
  traffic:
  - request: {port: 80, host: app.example.com, path: /app/items}
    expect: {status: 200, cluster: httproute/default/app/rule/0, backend: httproute/default/app/rule/0/backend/0}
  - request: {port: 10080, host: app.example.com, path: /exact}
    expect: {status: 200, cluster: httproute/default/app/rule/1,
      route: httproute/default/app/rule/1/match/0/app_example_com}
  - request: {port: 80, host: other.example.com, path: /app}
    expect: {status: 404}
  warnings: ["EnvoyProxy default/proxy: spec.routingType is not translated"]
`

func load(t *testing.T, text string) *scenario.Scenario {
	t.Helper()
	cat, err := catalog.Load()
	if err != nil {
		t.Fatal(err)
	}
	root := t.TempDir()
	path := filepath.Join(root, "routing", "checks.yaml")
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	s, err := scenario.Loader{Catalog: cat, Root: root}.LoadFile(path)
	if err != nil {
		t.Fatalf("load: %v", err)
	}
	return s
}

func translate(t *testing.T, s *scenario.Scenario, p string) *result.Result {
	t.Helper()
	prof, err := profile.Get(p)
	if err != nil {
		t.Fatal(err)
	}
	res, err := translator.Translate(translator.Input{Objects: s.Objects, Config: s.Settings, Profile: prof})
	if err != nil {
		t.Fatalf("translate: %v", err)
	}
	return res
}

// onlyFailure checks base with its first old replaced by replacement, under v1.9: exactly
// one expectation must fail. It returns that failure and the text its line is counted in.
func onlyFailure(t *testing.T, base, old, replacement string) (check.Failure, string) {
	t.Helper()
	text := strings.Replace(base, old, replacement, 1)
	if text == base {
		t.Fatalf("%q is not in the scenario", old)
	}
	s := load(t, text)
	fs := check.Run(s, "v1.9", translate(t, s, "v1.9"))
	if len(fs) != 1 {
		t.Fatalf("got %d failures, want 1:\n%s", len(fs), describe(fs))
	}
	return fs[0], text
}

func describe(fs []check.Failure) string {
	var out []string
	for _, f := range fs {
		out = append(out, f.Check+": "+f.String())
	}
	return strings.Join(out, "\n")
}

func TestCorrectExpectationsPass(t *testing.T) {
	s := load(t, base)
	for _, p := range []string{"v1.8", "v1.9"} {
		if fs := check.Run(s, p, translate(t, s, p)); len(fs) != 0 {
			t.Errorf("%s: failures for correct expectations:\n%s", p, describe(fs))
		}
	}
}

func TestWrongExpectationsFail(t *testing.T) {
	tests := []struct {
		name     string
		old, new string
		check    string // Failure.Check
		where    string // Failure.Where
		marker   string // a text on the failure's line
		msg      string // contained in Failure.Msg
	}{
		{
			name:  "condition status",
			old:   `- {type: Accepted, status: "True", reason: Accepted, message: Route is accepted}`,
			new:   `- {type: Accepted, status: "False", reason: Accepted, message: Route is accepted}`,
			check: "statuses", where: "expect.statuses[0].conditions[0]", marker: `- {type: Accepted, status: "False"`,
			msg: `HTTPRoute/default/app parent Gateway/default/eg: Accepted: status "True", expected "False"`,
		},
		{
			name:  "condition reason",
			old:   `- {type: ResolvedRefs, status: "True", reason: ResolvedRefs}`,
			new:   `- {type: ResolvedRefs, status: "True", reason: BackendNotFound}`,
			check: "statuses", where: "expect.statuses[0].conditions[1]", marker: "reason: BackendNotFound",
			msg: `ResolvedRefs: reason "ResolvedRefs", expected "BackendNotFound"`,
		},
		{
			name:  "condition message",
			old:   "message: Route is accepted}",
			new:   "message: Route is rejected}",
			check: "statuses", where: "expect.statuses[0].conditions[0]", marker: "Route is rejected",
			msg: `Accepted: message "Route is accepted" does not contain "Route is rejected"`,
		},
		{
			name:  "status and reason both wrong in one message",
			old:   `- {type: ResolvedRefs, status: "True", reason: ResolvedRefs}`,
			new:   `- {type: ResolvedRefs, status: "False", reason: RefNotPermitted}`,
			check: "statuses", where: "expect.statuses[0].conditions[1]", marker: "reason: RefNotPermitted",
			msg: `ResolvedRefs: status "True", expected "False"; reason "ResolvedRefs", expected "RefNotPermitted"`,
		},
		{
			name:  "condition expected absent",
			old:   "- {type: RouteRulesOverlap, absent: true}",
			new:   "- {type: ResolvedRefs, absent: true}",
			check: "statuses", where: "expect.statuses[0].conditions[2]", marker: "- {type: ResolvedRefs, absent: true}",
			msg: "expected no ResolvedRefs condition, got ResolvedRefs=True",
		},
		{
			name:  "condition missing",
			old:   "- {type: RouteRulesOverlap, absent: true}",
			new:   `- {type: Programmed, status: "True"}`,
			check: "statuses", where: "expect.statuses[0].conditions[2]", marker: "- {type: Programmed",
			msg: "no Programmed condition (conditions: Accepted=True",
		},
		{
			name:  "condition not listed with only",
			old:   `- {type: ResolvedRefs, status: "True", reason: ResolvedRefs}`,
			new:   `- {type: SecurityPolicyAffected, absent: true}`,
			check: "statuses", where: "expect.statuses[0]", marker: "  - object: HTTPRoute/default/app",
			msg: `HTTPRoute/default/app parent Gateway/default/eg: conditions not listed (only: true): ResolvedRefs=True`,
		},
		{
			name:  "clusters by prefix in order",
			old:   `names: [httproute/default/app/rule/0, httproute/default/app/rule/1]}`,
			new:   `names: [httproute/default/app/rule/1, httproute/default/app/rule/0]}`,
			check: "xds", where: "expect.xds[8]", marker: "prefix: httproute/default/app/",
			msg: "Cluster httproute/default/app/*: names in order are",
		},
		{
			name:  "clusters by prefix, one missing",
			old:   `names: [httproute/default/app/rule/0, httproute/default/app/rule/1]}`,
			new:   `names: [httproute/default/app/rule/0]}`,
			check: "xds", where: "expect.xds[8]", marker: "prefix: httproute/default/app/",
			msg: "expected\n    httproute/default/app/rule/0",
		},
		{
			name:  "IR route field",
			old:   `fields: {destination: {name: httproute/default/app/rule/0}}, absent: [directResponse]}`,
			new:   `fields: {destination: {name: httproute/default/app/rule/1}}, absent: [directResponse]}`,
			check: "snapshot", where: "expect.snapshot[0]", marker: "irRoute: httproute/default/app/rule/0",
			msg: `IR route httproute/default/app/rule/0/match/0/app_example_com: destination.name is ` +
				`"httproute/default/app/rule/0", expected "httproute/default/app/rule/1"`,
		},
		{
			name:  "IR route field expected absent",
			old:   `fields: {destination: {name: httproute/default/app/rule/0}}, absent: [directResponse]}`,
			new:   `fields: {name: httproute/default/app/rule/0/match/0/app_example_com}, absent: [destination]}`,
			check: "snapshot", where: "expect.snapshot[0]", marker: "irRoute: httproute/default/app/rule/0",
			msg: `IR route httproute/default/app/rule/0/match/0/app_example_com: destination is {`,
		},
		{
			name:  "IR route not there",
			old:   `irRoute: httproute/default/app/rule/0/match/0/app_example_com,`,
			new:   `irRoute: httproute/default/app/rule/7/match/0/app_example_com,`,
			check: "snapshot", where: "expect.snapshot[0]", marker: "irRoute: httproute/default/app/rule/7",
			msg: `IR route httproute/default/app/rule/7/match/0/app_example_com: not in the snapshot's IR`,
		},
		{
			name:  "field given as null is there",
			old:   "- {kind: Cluster, name: httproute/default/app/rule/0}",
			new:   "- {kind: Cluster, name: httproute/default/app/rule/0, fields: {connectTimeout: 10s, name: null}}",
			check: "xds", where: "expect.xds[4]", marker: "fields: {connectTimeout: 10s, name: null}",
			msg: `Cluster httproute/default/app/rule/0: .name is "httproute/default/app/rule/0", expected it unset`,
		},
		{
			name:  "missing parent",
			old:   "    parent: Gateway/default/eg\n",
			new:   "    parent: Gateway/default/other\n",
			check: "statuses", where: "expect.statuses[0]", marker: "  - object: HTTPRoute/default/app",
			msg: "HTTPRoute/default/app parent Gateway/default/other: no such parent in the status " +
				"(parents: Gateway/default/eg)",
		},
		{
			name:  "parent entry expected absent",
			old:   "parent: Gateway/default/eg/http, absent: true}",
			new:   "parent: Gateway/default/eg, absent: true}",
			check: "statuses", where: "expect.statuses[4]", marker: "parent: Gateway/default/eg, absent: true",
			msg: "expected no entry, got Accepted=True",
		},
		{
			name:  "parent expected on an object without status",
			old:   "- {object: HTTPRoute/default/bad, parent: Gateway/default/eg, absent: true}",
			new:   "- {object: HTTPRoute/default/bad, parent: Gateway/default/eg, conditions: [{type: Accepted}]}",
			check: "statuses", where: "expect.statuses[5]",
			marker: "- {object: HTTPRoute/default/bad, parent: Gateway/default/eg, conditions",
			msg:    "HTTPRoute/default/bad: no status in the result",
		},
		{
			name:  "listener attachedRoutes",
			old:   "listener: http, attachedRoutes: 1}",
			new:   "listener: http, attachedRoutes: 2}",
			check: "statuses", where: "expect.statuses[1]", marker: "attachedRoutes: 2",
			msg: "Gateway/default/eg listener http: attachedRoutes is 1, expected 2",
		},
		{
			name:  "missing listener",
			old:   "listener: http, attachedRoutes: 1}",
			new:   "listener: raw, attachedRoutes: 1}",
			check: "statuses", where: "expect.statuses[1]", marker: "listener: raw",
			msg: "Gateway/default/eg listener raw: no such listener in the status (listeners: http)",
		},
		{
			name:  "object expected without status",
			old:   "- {object: HTTPRoute/default/bad, absent: true}",
			new:   "- {object: GatewayClass/eg, absent: true}",
			check: "statuses", where: "expect.statuses[3]", marker: "- {object: GatewayClass/eg, absent: true}",
			msg: "GatewayClass/eg: expected no status, got Accepted=True (Accepted: \"Valid GatewayClass\")",
		},
		{
			name:  "object without status",
			old:   "- {object: HTTPRoute/default/bad, absent: true}",
			new:   "- {object: HTTPRoute/default/bad, conditions: [{type: Accepted}]}",
			check: "statuses", where: "expect.statuses[3]", marker: "- {object: HTTPRoute/default/bad, conditions",
			msg: "HTTPRoute/default/bad: no status in the result",
		},
		{
			name:  "unexpected admission refusal",
			old:   `  - {object: HTTPRoute/default/bad, allowed: false, message: "should match"}` + "\n",
			new:   "",
			check: "admission", where: "expect.admission", marker: "  admission:",
			msg: `HTTPRoute/default/bad was refused, and the scenario does not expect it: HTTPRoute.gateway.networking.k8s.io ` +
				`"bad" is invalid: spec.hostnames[0]: Invalid value: "Bad.Example.com"`,
		},
		{
			name:  "expected refusal of an admitted object",
			old:   "- {object: HTTPRoute/default/app, allowed: true}",
			new:   "- {object: HTTPRoute/default/app, allowed: false}",
			check: "admission", where: "expect.admission[1]", marker: "- {object: HTTPRoute/default/app, allowed: false}",
			msg: "HTTPRoute/default/app: expected allowed=false, got allowed=true",
		},
		{
			name:  "admission message",
			old:   `message: "should match"}`,
			new:   `message: "must match"}`,
			check: "admission", where: "expect.admission[0]", marker: `message: "must match"`,
			msg: `does not contain "must match"`,
		},
		{
			name:  "xds present expected, absent",
			old:   "- {kind: Cluster, name: httproute/default/app/rule/0-mirror-0, absent: true}",
			new:   "- {kind: Cluster, name: httproute/default/app/rule/0-mirror-0}",
			check: "xds", where: "expect.xds[5]", marker: "mirror-0}",
			msg: "Cluster httproute/default/app/rule/0-mirror-0: not found (present: httproute/default/app/rule/0, " +
				"httproute/default/app/rule/1)",
		},
		{
			name:  "xds absent expected, present",
			old:   "- {kind: Cluster, name: httproute/default/app/rule/0}",
			new:   "- {kind: Cluster, name: httproute/default/app/rule/0, absent: true}",
			check: "xds", where: "expect.xds[4]", marker: "rule/0, absent: true}",
			msg: "Cluster httproute/default/app/rule/0: expected absent, but it is there",
		},
		{
			name:  "xds listener name",
			old:   "- {kind: Listener, name: default/eg/http}",
			new:   "- {kind: Listener, name: tcp-10080}",
			check: "xds", where: "expect.xds[0]", marker: "name: tcp-10080",
			msg: "Listener tcp-10080: not found (present: default/eg/http, envoy-gateway-proxy-ready-0.0.0.0-19003)",
		},
		{
			name:  "xds route in another virtual host",
			old:   "in: default/eg/http/app_example_com}",
			new:   "in: default/eg/http/other_example_com}",
			check: "xds", where: "expect.xds[3]", marker: "in: default/eg/http/other_example_com",
			msg: "not found (present: none)",
		},
		{
			name:  "xds HTTP filter",
			old:   "name: envoy.filters.http.router, in",
			new:   "name: envoy.filters.http.cors, in",
			check: "xds", where: "expect.xds[7]", marker: "envoy.filters.http.cors",
			msg: "HTTPFilter envoy.filters.http.cors in default/eg/http: not found (present: envoy.filters.http.router)",
		},
		{
			name: "xds route order",
			old: "    - httproute/default/app/rule/1/match/0/app_example_com\n" +
				"    - httproute/default/app/rule/0/match/0/app_example_com\n",
			new: "    - httproute/default/app/rule/0/match/0/app_example_com\n" +
				"    - httproute/default/app/rule/1/match/0/app_example_com\n",
			check: "xds", where: "expect.xds[2]", marker: "  - kind: VirtualHost",
			msg: "routes in order are\n    httproute/default/app/rule/1/match/0/app_example_com\n" +
				"    httproute/default/app/rule/0/match/0/app_example_com\n  expected\n" +
				"    httproute/default/app/rule/0/match/0/app_example_com\n" +
				"    httproute/default/app/rule/1/match/0/app_example_com",
		},
		{
			name:  "xds domains",
			old:   "domains: [app.example.com]",
			new:   "domains: [app.example.com, '*']",
			check: "xds", where: "expect.xds[2]", marker: "  - kind: VirtualHost",
			msg: "domains are [app.example.com], expected [app.example.com *]",
		},
		{
			name:  "traffic cluster",
			old:   "expect: {status: 200, cluster: httproute/default/app/rule/0, backend",
			new:   "expect: {status: 200, cluster: httproute/default/app/rule/1, backend",
			check: "traffic", where: "expect.traffic[0]", marker: "path: /app/items",
			msg: `GET app.example.com/app/items on port 80: cluster "httproute/default/app/rule/0", expected ` +
				`"httproute/default/app/rule/1" (answered by route "httproute/default/app/rule/0/match/0/app_example_com")`,
		},
		{
			name:  "traffic status",
			old:   "    expect: {status: 404}",
			new:   "    expect: {status: 200}",
			check: "traffic", where: "expect.traffic[2]", marker: "host: other.example.com",
			msg: "GET other.example.com/app on port 80: status 404, expected 200",
		},
		{
			name:  "traffic backend",
			old:   "backend: httproute/default/app/rule/0/backend/0}",
			new:   "backend: httproute/default/app/rule/0/backend/1}",
			check: "traffic", where: "expect.traffic[0]", marker: "path: /app/items",
			msg: `backend "httproute/default/app/rule/0/backend/0", expected "httproute/default/app/rule/0/backend/1"`,
		},
		{
			name:  "traffic route",
			old:   "route: httproute/default/app/rule/1/match/0/app_example_com}",
			new:   "route: httproute/default/app/rule/0/match/0/app_example_com}",
			check: "traffic", where: "expect.traffic[1]", marker: "path: /exact",
			msg: `route "httproute/default/app/rule/1/match/0/app_example_com", expected ` +
				`"httproute/default/app/rule/0/match/0/app_example_com"`,
		},
		{
			name:  "traffic on a port with no listener",
			old:   "request: {port: 10080, host: app.example.com, path: /exact}",
			new:   "request: {port: 8443, host: app.example.com, path: /exact}",
			check: "traffic", where: "expect.traffic[1]", marker: "port: 8443",
			msg: "GET app.example.com/exact on port 8443:",
		},
		{
			name:  "warning",
			old:   `warnings: ["EnvoyProxy default/proxy: spec.routingType is not translated"]`,
			new:   `warnings: ["EnvoyProxy default/other: spec.routingType is not translated"]`,
			check: "warnings", where: "expect.warnings[0]", marker: "warnings: [\"EnvoyProxy default/other",
			msg: `no warning contains "EnvoyProxy default/other: spec.routingType is not translated"`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, text := onlyFailure(t, base, tt.old, tt.new)
			line := testutil.LineOf(t, text, tt.marker)
			if f.Check != tt.check || f.Where != tt.where || f.Line != line {
				t.Errorf("failure %s/%s at line %d, want %s/%s at line %d (%s)", f.Check, f.Where, f.Line, tt.check, tt.where, line,
					f.Msg)
			}
			if !strings.Contains(f.Msg, tt.msg) {
				t.Errorf("message\n  %s\ndoes not contain\n  %s", f.Msg, tt.msg)
			}
			if want := tt.where + " (line "; !strings.HasPrefix(f.String(), want) {
				t.Errorf("String() = %q, want prefix %q", f.String(), want)
			}
		})
	}
}

// The v1.8 profile has no RouteRulesOverlap: an expectation of it fails there only.
func TestProfileDifference(t *testing.T) {
	twin := strings.Replace(base,
		"  ---\n  apiVersion: gateway.networking.k8s.io/v1\n  kind: HTTPRoute\n  metadata: {name: bad, namespace: default}",
		"  ---\n  apiVersion: gateway.networking.k8s.io/v1\n  kind: HTTPRoute\n"+
			"  metadata: {name: twin, namespace: default}\n  spec:\n    parentRefs: [{name: eg}]\n"+
			"    hostnames: [app.example.com]\n    rules:\n    - matches: [{path: {type: PathPrefix, value: /app}}]\n"+
			"      backendRefs: [{name: app, port: 8080}]\n"+
			"  ---\n  apiVersion: gateway.networking.k8s.io/v1\n  kind: HTTPRoute\n  metadata: {name: bad, namespace: default}",
		1)
	twin = strings.Replace(twin, "- {type: RouteRulesOverlap, absent: true}",
		`- {type: RouteRulesOverlap, status: "True", message: "Overlapping match conditions with `+
			`route(s): HTTPRoute default/twin"}`,
		1)
	// The twin route attaches too and adds its route to the virtual host.
	twin = strings.Replace(twin, "listener: http, attachedRoutes: 1}", "listener: http, attachedRoutes: 2}", 1)
	twin = strings.Replace(twin, "    - httproute/default/app/rule/0/match/0/app_example_com\n",
		"    - httproute/default/app/rule/0/match/0/app_example_com\n"+
			"    - httproute/default/twin/rule/0/match/0/app_example_com\n",
		1)
	s := load(t, twin)
	if fs := check.Run(s, "v1.9", translate(t, s, "v1.9")); len(fs) != 0 {
		t.Errorf("v1.9: %s", describe(fs))
	}
	fs := check.Run(s, "v1.8", translate(t, s, "v1.8"))
	if len(fs) != 1 {
		t.Fatalf("v1.8: got %d failures, want 1:\n%s", len(fs), describe(fs))
	}
	if fs[0].Where != "expect.statuses[0].conditions[2]" ||
		fs[0].Line != testutil.LineOf(t, twin, "type: RouteRulesOverlap") ||
		!strings.Contains(fs[0].Msg, "no RouteRulesOverlap condition") {
		t.Errorf("v1.8 failure %+v", fs[0])
	}
}

// A section of expectByProfile replaces the base one for its profile; the failure names its
// path there, and sections it does not set keep the base path.
func TestExpectByProfileFailure(t *testing.T) {
	text := base + "expectByProfile:\n  v1.8:\n    statuses:\n" +
		"    - {object: Gateway/default/eg, listener: http, attachedRoutes: 5}\n"
	s := load(t, text)
	if fs := check.Run(s, "v1.9", translate(t, s, "v1.9")); len(fs) != 0 {
		t.Errorf("v1.9 uses the base: %s", describe(fs))
	}
	fs := check.Run(s, "v1.8", translate(t, s, "v1.8"))
	if len(fs) != 1 || fs[0].Where != "expectByProfile.v1.8.statuses[0]" ||
		!strings.Contains(fs[0].Msg, "attachedRoutes is 1, expected 5") {
		t.Fatalf("v1.8 failures:\n%s", describe(fs))
	}

	// The base traffic section still applies under v1.8 and keeps its path.
	text2 := strings.Replace(text, "    expect: {status: 404}", "    expect: {status: 201}", 1)
	s = load(t, text2)
	fs = check.Run(s, "v1.8", translate(t, s, "v1.8"))
	var where []string
	for _, f := range fs {
		where = append(where, f.Where)
	}
	if strings.Join(where, " ") != "expectByProfile.v1.8.statuses[0] expect.traffic[2]" {
		t.Errorf("failures at %v", where)
	}
}

func TestExpectByProfileFailureLine(t *testing.T) {
	text := base + "expectByProfile:\n  v1.8:\n    statuses:\n" +
		"    - {object: Gateway/default/eg, listener: http, attachedRoutes: 5}\n"
	s := load(t, text)
	fs := check.Run(s, "v1.8", translate(t, s, "v1.8"))
	if len(fs) != 1 {
		t.Fatalf("failures:\n%s", describe(fs))
	}
	if want := testutil.LineOf(t, text, "attachedRoutes: 5"); fs[0].Line != want {
		t.Errorf("failure at line %d, want %d", fs[0].Line, want)
	}
}

func TestFailureString(t *testing.T) {
	tests := []struct {
		f    check.Failure
		want string
	}{
		{check.Failure{Where: "expect.xds[0]", Line: 12, Msg: "m"}, "expect.xds[0] (line 12): m"},
		{check.Failure{Where: "golden/x/status.yaml", Msg: "m"}, "golden/x/status.yaml: m"},
		{check.Failure{Msg: "m"}, "m"},
	}
	for _, tt := range tests {
		if got := tt.f.String(); got != tt.want {
			t.Errorf("String() = %q, want %q", got, tt.want)
		}
	}
}
