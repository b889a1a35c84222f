package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf16"

	sigsyaml "sigs.k8s.io/yaml"
)

const sampleDump = "../../examples/upgrade/v1.8-cluster-dump.yaml"

type upgradeJSON struct {
	From     string `json:"from"`
	To       string `json:"to"`
	Findings []struct {
		ID     string `json:"id"`
		Object struct {
			Kind      string `json:"kind"`
			Namespace string `json:"namespace"`
			Name      string `json:"name"`
		} `json:"object"`
		Severity string `json:"severity"`
		Summary  string `json:"summary"`
		Before   string `json:"before"`
		After    string `json:"after"`
		Context  []struct {
			Kind      string `json:"kind"`
			Namespace string `json:"namespace"`
			Name      string `json:"name"`
		} `json:"context"`
	} `json:"findings"`
}

func upgradeFindings(t *testing.T, stdout string) upgradeJSON {
	t.Helper()
	var doc upgradeJSON
	dec := json.NewDecoder(strings.NewReader(stdout))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&doc); err != nil {
		t.Fatalf("not the upgrade-check JSON shape: %v\n%.500s", err, stdout)
	}
	return doc
}

// upgradeCheckText runs upgrade-check from v1.8 to v1.9 (-o json) on a dump given as text:
// its findings, and what it wrote to stderr.
func upgradeCheckText(t *testing.T, dump string) (upgradeJSON, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "dump.yaml")
	if err := os.WriteFile(path, []byte(dump), 0o644); err != nil {
		t.Fatal(err)
	}
	_, stdout, msg := execute(t, "", "upgrade-check", "--from", "v1.8", "--to", "v1.9", "-f", path, "-o", "json")
	return upgradeFindings(t, stdout), msg
}

// The sample dump (status, managedFields, kind: List, EG's ConfigMap, a Deployment) reads
// without error and shows the traps the translator reproduces today, each with its ID.
func TestUpgradeCheckSampleDump(t *testing.T) {
	code, stdout, msg := execute(t, "", "upgrade-check", "--from", "v1.8", "--to", "v1.9", "-f", sampleDump, "-o", "json")
	if code != exitFail || msg != "" {
		t.Fatalf("exit %d (%q), want 1: the dump has breaking findings", code, msg)
	}
	doc := upgradeFindings(t, stdout)
	if doc.From != "v1.8" || doc.To != "v1.9" {
		t.Errorf("from/to: %q %q", doc.From, doc.To)
	}
	want := map[string]string{ // ID → object with that finding
		"UPG-01": "HTTPRoute/shop/storefront",
		"RT-11":  "HTTPRoute/shop/checkout-v2",
		// EG v1.8.0's CRD refused every rate limit rule (envoyproxy/gateway#9186); v1.9.1's
		// admits the policy, which then takes effect.
		"BTP-03": "BackendTrafficPolicy/shop/checkout-limits",
	}
	// The v1alpha2 TCPRoute is served and stored as v1 by v1.9.1's CRDs: EG reads it as
	// before, and the upgrade changes nothing for it.
	for _, f := range doc.Findings {
		if f.Object.Kind == "TCPRoute" && f.Object.Name == "postgres" {
			t.Errorf("finding on the v1alpha2 TCPRoute, which v1.9.1 stores as v1: %+v", f)
		}
	}
	for id, obj := range want {
		found := false
		for _, f := range doc.Findings {
			if f.ID == id && f.Object.Kind+"/"+f.Object.Namespace+"/"+f.Object.Name == obj {
				found = true
			}
		}
		if !found {
			t.Errorf("no %s finding on %s in\n%s", id, obj, stdout)
		}
	}
	// The same dump towards v1.10-preview: the names change, and the patches written for
	// the old listener and route-configuration names miss.
	code, stdout, _ = execute(t, "", "upgrade-check", "--from", "v1.9", "--to", "v1.10-preview", "-f", sampleDump)
	for _, want := range []string{
		"NAME-02   Listener renamed: shop/eg/http → tcp-80",
		"EPP-05    operation 3 (add /per_connection_buffer_limit_bytes on Listener shop/eg/http) " +
			"hits before and misses after",
	} {
		if !strings.Contains(stdout, want) {
			t.Errorf("v1.9 → v1.10-preview (exit %d) lacks %q:\n%s", code, want, stdout)
		}
	}
	if code != exitFail {
		t.Errorf("patches that stop applying are breaking: exit %d", code)
	}
	if !strings.Contains(stdout, "skipped Deployment shop/storefront") ||
		!strings.Contains(stdout, "EG configuration read from ConfigMap envoy-gateway-system/envoy-gateway-config") {
		t.Errorf("the notes about the input are missing:\n%s", stdout)
	}
}

func TestUpgradeCheckExitCodes(t *testing.T) {
	dir := t.TempDir()
	clean := filepath.Join(dir, "clean.yaml")
	if err := os.WriteFile(clean, []byte(`apiVersion: v1
kind: List
items:
- apiVersion: gateway.networking.k8s.io/v1
  kind: GatewayClass
  metadata: {name: eg}
  spec: {controllerName: gateway.envoyproxy.io/gatewayclass-controller}
- apiVersion: gateway.networking.k8s.io/v1
  kind: Gateway
  metadata: {name: eg, namespace: default}
  spec:
    gatewayClassName: eg
    listeners: [{name: http, protocol: HTTP, port: 80}]
`), 0o644); err != nil {
		t.Fatal(err)
	}
	if code, stdout, _ := execute(t, "", "upgrade-check", "--from", "v1.8", "--to", "v1.9", "-f", clean); code != 0 ||
		!strings.Contains(stdout, "No differences") {
		t.Errorf("a dump without differences: exit %d\n%s", code, stdout)
	}
	// Only warnings: exit 0.
	if code, stdout, _ := execute(t, "", "upgrade-check", "--from", "v1.9", "--to", "v1.10-preview", "-f", clean, "-o",
		"markdown"); code != 0 || !strings.Contains(stdout, "NAME-02") {
		t.Errorf("warnings only: exit %d\n%s", code, stdout)
	}
	broken := filepath.Join(dir, "broken.yaml")
	if err := os.WriteFile(broken, []byte("apiVersion: v1\nkind: Service\nmetadata: {name: [x}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	bad := []struct {
		args []string
		want string
	}{
		{[]string{"--from", "v1.8", "--to", "v1.9", "-f", broken}, broken + ":3: malformed YAML"},
		{[]string{"--from", "v1.8", "--to", "v1.9", "-f", filepath.Join(dir, "missing.yaml")}, "missing.yaml"},
		{[]string{"--from", "v1.7", "--to", "v1.9", "-f", clean}, `--from: unknown profile "v1.7"`},
		{[]string{"--from", "v1.8", "--to", "nosuch@v1.9.1", "-f", clean}, "--to: nosuch@v1.9.1: unknown implementation"},
		// a release side is looked for where --peers-dir says, and the message says how to install it
		{[]string{"--from", "egctl@v1.8.0", "--to", "v1.9", "-f", clean, "--peers-dir", dir},
			"egctl@v1.8.0 is not installed (no " + filepath.Join(dir, "egctl-v1.8.0", "egctl")},
		{[]string{"--from", "v1.8", "-f", clean}, "needs --from and --to"},
		{[]string{"--from", "v1.8", "--to", "v1.9"}, "needs -f FILE"},
		{[]string{"--from", "v1.8", "--to", "v1.9", "-f", clean, "-o", "pdf"},
			`-o must be one of text, json, markdown, html, not "pdf"`},
		{[]string{"--from", "v1.8", "--to", "v1.9", "-f", clean, "--config", broken}, broken},
	}
	for _, b := range bad {
		code, stdout, msg := execute(t, "", append([]string{"upgrade-check"}, b.args...)...)
		if code != exitBad || !strings.Contains(msg, b.want) || stdout != "" {
			t.Errorf("%v: exit %d, message %q, want 2 and %q", b.args, code, msg, b.want)
		}
	}
	// A dump of kinds egharness does not translate only is bad input, said with the file.
	only := filepath.Join(dir, "only.yaml")
	_ = os.WriteFile(only, []byte("apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: x}\n"), 0o644)
	if code, _, msg := execute(t, "", "upgrade-check", "--from", "v1.8", "--to", "v1.9", "-f", only); code != exitBad ||
		!strings.HasPrefix(msg, only+": no objects") {
		t.Errorf("only skipped kinds: exit %d, %q", code, msg)
	}
}

func TestUpgradeCheckHTML(t *testing.T) {
	_, stdout, _ := execute(t, "", "upgrade-check", "--from", "v1.8", "--to", "v1.9", "-f", sampleDump, "-o", "html")
	for _, want := range []string{"<!DOCTYPE html>", `<span class="kind">BackendTrafficPolicy</span> shop/checkout-limits`,
		`<table class="diff">`, "BTP-03"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("the page lacks %q", want)
		}
	}
	// Diffs are named in words and say what comes and goes; a route table that stays (a Lua
	// script leaves it) is shown on both sides, not as deleted.
	if !strings.Contains(stdout,
		"Generated Envoy configuration: Envoy upstream cluster &#34;ratelimit_cluster&#34;: new in v1.9") ||
		strings.Contains(stdout, "route table &#34;shop/eg/http&#34;: not generated") {
		t.Error("the diff titles do not say what the page shows")
	}
	// No external asset and no script: URLs from the objects may appear, as escaped text;
	// links only point within the page (a diff shown under another object).
	for _, external := range []string{"<script", "<link", "<img", "src=", "@import", "url("} {
		if strings.Contains(stdout, external) {
			t.Errorf("the page is not self-contained: it holds %q", external)
		}
	}
	if n, local := strings.Count(stdout, "href="), strings.Count(stdout, `href="#`); n != local {
		t.Errorf("the page links outside itself: %d of %d links", n-local, n)
	}
}

// The sample dump saved as UTF-16 with a BOM (PowerShell 5's `>`), and as JSON values
// appended one after another (`kubectl get KIND -o json >> dump.json`), gives the findings
// the UTF-8 YAML gives: no encoding or stream shape reads as "No differences".
func TestUpgradeCheckSampleDumpEncodings(t *testing.T) {
	_, want, _ := execute(t, "", "upgrade-check", "--from", "v1.8", "--to", "v1.9", "-f", sampleDump, "-o", "json")
	if len(upgradeFindings(t, want).Findings) == 0 {
		t.Fatal("the sample dump has no findings")
	}
	data, err := os.ReadFile(sampleDump)
	if err != nil {
		t.Fatal(err)
	}
	var u16 []byte
	for _, u := range utf16.Encode([]rune("\uFEFF" + strings.ReplaceAll(string(data), "\n", "\r\n"))) {
		u16 = append(u16, byte(u), byte(u>>8))
	}
	var stream bytes.Buffer
	for _, doc := range strings.Split(string(data), "\n---\n") {
		js, err := sigsyaml.YAMLToJSON([]byte(doc))
		if err != nil {
			t.Fatal(err)
		}
		if string(js) == "null" {
			continue
		}
		if err := json.Indent(&stream, js, "", "    "); err != nil {
			t.Fatal(err)
		}
		stream.WriteString("\n")
	}
	dir := t.TempDir()
	for name, content := range map[string][]byte{"dump-utf16.yaml": u16, "dump.json": stream.Bytes()} {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, content, 0o644); err != nil {
			t.Fatal(err)
		}
		code, got, msg := execute(t, "", "upgrade-check", "--from", "v1.8", "--to", "v1.9", "-f", path, "-o", "json")
		if code != exitFail || msg != "" {
			t.Errorf("%s: exit %d (%q), want 1", name, code, msg)
		}
		g, w := upgradeFindings(t, got), upgradeFindings(t, want)
		if len(g.Findings) != len(w.Findings) {
			t.Errorf("%s: %d findings, want %d as in UTF-8 YAML", name, len(g.Findings), len(w.Findings))
		}
	}
}

func refString(kind, ns, name string) string { return kind + "/" + ns + "/" + name }

// Each finding is on the object the user must change: the SecurityPolicy defining the JWT
// provider (SP-06), the BackendTrafficPolicy with the shared rate limit (BTP-03), the
// EnvoyExtensionPolicy with the Lua script (EEP-02/03), the patch (EPP); the route and the
// Gateway are named as context. The sample dump has no UNMAPPED finding.
func TestUpgradeCheckAttribution(t *testing.T) {
	_, stdout, _ := execute(t, "", "upgrade-check", "--from", "v1.8", "--to", "v1.9", "-f", sampleDump, "-o", "json")
	checkAttribution(t, upgradeFindings(t, stdout), map[string]string{
		"SP-06":  "SecurityPolicy/shop/api-jwt",
		"BTP-03": "BackendTrafficPolicy/shop/checkout-limits",
		"EEP-02": "EnvoyExtensionPolicy/shop/add-header",
	}, map[string]string{"SP-06": "HTTPRoute/shop/orders-api", "BTP-03": "HTTPRoute/shop/checkout",
		"EEP-02": "HTTPRoute/shop/storefront"})
}

// checkAttribution: every finding of each ID in owner is on an allowed object (the policy,
// or an EnvoyPatchPolicy for a patch), at least one on the policy with the route in context;
// no finding is UNMAPPED.
func checkAttribution(t *testing.T, doc upgradeJSON, owner, route map[string]string) {
	t.Helper()
	onPolicy := map[string]bool{}
	for _, f := range doc.Findings {
		obj := refString(f.Object.Kind, f.Object.Namespace, f.Object.Name)
		if f.ID == "UNMAPPED" {
			t.Errorf("UNMAPPED finding on %s: %s", obj, f.Summary)
		}
		want, ok := owner[f.ID]
		if !ok || f.Object.Kind == "EnvoyPatchPolicy" {
			continue
		}
		if obj != want && !strings.HasPrefix(want, obj) {
			// Several policies may share an ID (every policy with shared rules): want
			// lists them separated by commas.
			if !strings.Contains(","+want+",", ","+obj+",") {
				t.Errorf("%s finding on %s, want it on %s: %s", f.ID, obj, want, f.Summary)
				continue
			}
		}
		for _, c := range f.Context {
			if refString(c.Kind, c.Namespace, c.Name) == route[f.ID] {
				onPolicy[f.ID+" "+obj] = true
			}
		}
	}
	for id, objs := range owner {
		for _, obj := range strings.Split(objs, ",") {
			if !onPolicy[id+" "+obj] {
				t.Errorf("no %s finding on %s with %s as context", id, obj, route[id])
			}
		}
	}
}

// A held-out style dump: the JWT SecurityPolicy targets the Gateway rather than the route,
// and two BackendTrafficPolicies carry shared rate limit rules (one on the Gateway, one on
// a route). SP-06 goes to the SecurityPolicy, BTP-03 to each policy with shared rules.
func TestUpgradeCheckAttributionGatewayPolicies(t *testing.T) {
	data, err := os.ReadFile(sampleDump)
	if err != nil {
		t.Fatal(err)
	}
	s := string(data)
	s = strings.Replace(s, "  - {group: gateway.networking.k8s.io, kind: HTTPRoute, name: orders-api}\n  jwt:",
		"  - {group: gateway.networking.k8s.io, kind: Gateway, name: eg}\n  jwt:", 1)
	s += `---
apiVersion: gateway.envoyproxy.io/v1alpha1
kind: BackendTrafficPolicy
metadata: {name: gateway-limits, namespace: shop}
spec:
  targetRefs:
  - {group: gateway.networking.k8s.io, kind: Gateway, name: eg}
  rateLimit:
    type: Global
    global:
      rules:
      - clientSelectors:
        - headers: [{name: x-user, type: Distinct}]
        limit: {requests: 10, unit: Second}
        shared: true
`
	doc, msg := upgradeCheckText(t, s)
	if len(doc.Findings) == 0 {
		t.Fatalf("no findings (%s)", msg)
	}
	checkAttribution(t, doc, map[string]string{
		"SP-06":  "SecurityPolicy/shop/api-jwt",
		"BTP-03": "BackendTrafficPolicy/shop/checkout-limits,BackendTrafficPolicy/shop/gateway-limits",
	}, map[string]string{"SP-06": "HTTPRoute/shop/orders-api", "BTP-03": "Gateway/shop/eg"})
}

// A SecurityPolicy that selects its route by label (targetSelectors) is found like one that
// names it: SP-06 goes to it, the route as context.
func TestUpgradeCheckAttributionTargetSelectors(t *testing.T) {
	data, err := os.ReadFile(sampleDump)
	if err != nil {
		t.Fatal(err)
	}
	s := strings.Replace(string(data),
		`metadata: {name: orders-api, namespace: shop, creationTimestamp: "2025-09-06T10:00:00Z"}`,
		`metadata: {name: orders-api, namespace: shop, creationTimestamp: "2025-09-06T10:00:00Z", labels: {team: orders}}`, 1)
	s = strings.Replace(s, "  - {group: gateway.networking.k8s.io, kind: HTTPRoute, name: orders-api}\n  jwt:",
		"  - {group: gateway.networking.k8s.io, kind: HTTPRoute, name: no-such-route}\n  targetSelectors:\n"+
			"  - {kind: HTTPRoute, matchLabels: {team: orders}}\n  jwt:",
		1)
	if !strings.Contains(s, "matchLabels: {team: orders}") || !strings.Contains(s, "labels: {team: orders}") {
		t.Fatal("the dump changed: the test's edits no longer apply")
	}
	doc, msg := upgradeCheckText(t, s)
	if len(doc.Findings) == 0 {
		t.Fatalf("no findings (%s)", msg)
	}
	checkAttribution(t, doc, map[string]string{"SP-06": "SecurityPolicy/shop/api-jwt"},
		map[string]string{"SP-06": "HTTPRoute/shop/orders-api"})
}

// Lua on the Gateway rather than a route: v1.9 (Lua off) fails every route of the Gateway
// closed. Each such finding goes to the EnvoyExtensionPolicy as EEP-02 with its route as
// context, not to the Gateway's other policies (a BackendTrafficPolicy the API server
// refuses is not applied, it fails nothing closed), and nothing is UNMAPPED.
func TestUpgradeCheckFailClosedByGatewayPolicy(t *testing.T) {
	data, err := os.ReadFile(sampleDump)
	if err != nil {
		t.Fatal(err)
	}
	s := strings.Replace(string(data), "  - {group: gateway.networking.k8s.io, kind: HTTPRoute, name: storefront}\n  lua:",
		"  - {group: gateway.networking.k8s.io, kind: Gateway, name: eg}\n  lua:", 1)
	if s == string(data) {
		t.Fatal("the dump changed: the test's edit no longer applies")
	}
	doc, _ := upgradeCheckText(t, s)
	closed := 0
	for _, f := range doc.Findings {
		obj := refString(f.Object.Kind, f.Object.Namespace, f.Object.Name)
		if f.ID == "UNMAPPED" {
			t.Errorf("UNMAPPED finding on %s: %s", obj, f.Summary)
		}
		if !strings.Contains(f.Summary, "fails closed") {
			continue
		}
		closed++
		if f.ID != "EEP-02" || obj != "EnvoyExtensionPolicy/shop/add-header" || len(f.Context) == 0 ||
			f.Context[0].Kind != "HTTPRoute" {
			t.Errorf("%s on %s (context %v): %s", f.ID, obj, f.Context, f.Summary)
		}
	}
	if closed < 3 {
		t.Errorf("%d fail-closed findings, want one per route rule of the Gateway", closed)
	}
}

// fullWriter fails every write, as stdout on a full disk or a closed pipe does.
type fullWriter struct{}

func (fullWriter) Write([]byte) (int, error) { return 0, errors.New("no space left on device") }

// A report that cannot be written is no answer: exit 2 with the error, never 0 or the 1
// that means "breaking findings".
func TestUpgradeCheckWriteError(t *testing.T) {
	for _, format := range []string{"text", "json", "markdown", "html"} {
		root := newRoot()
		root.SetArgs([]string{"upgrade-check", "--from", "v1.8", "--to", "v1.9", "-f", sampleDump, "-o", format})
		root.SetOut(fullWriter{})
		root.SetErr(io.Discard)
		err := root.Execute()
		var ee *exitError
		if !errors.As(err, &ee) || ee.code != exitBad || !strings.Contains(ee.err.Error(), "no space left") {
			t.Errorf("-o %s: %v, want exit %d with the write error", format, err, exitBad)
		}
	}
}

// On the realistic mix (routegen -mix: many Gateways on the same ports, TLS, every policy
// kind), every finding from v1.8 to v1.9 names a behavior: nothing is UNMAPPED, and no
// Gateway is blamed for another Gateway's listener.
func TestUpgradeCheckMixHasNoUnmappedFinding(t *testing.T) {
	out, err := exec.Command("go", "run", "../routegen", "-mix", "-n", "100").Output()
	if err != nil {
		t.Fatalf("routegen: %v", err)
	}
	file := filepath.Join(t.TempDir(), "mix.yaml")
	if err := os.WriteFile(file, out, 0o644); err != nil {
		t.Fatal(err)
	}
	_, stdout, msg := execute(t, "", "upgrade-check", "--from", "v1.8", "--to", "v1.9", "-f", file, "-o", "json")
	rep := upgradeFindings(t, stdout)
	if len(rep.Findings) == 0 {
		t.Fatalf("no findings (%s)", msg)
	}
	for _, f := range rep.Findings {
		if f.ID == "UNMAPPED" {
			t.Errorf("UNMAPPED: %s (%s)", f.Summary, f.Object)
		}
		if gw := f.Object; gw.Kind == "Gateway" && strings.Contains(f.Summary, "(listener infra/") &&
			!strings.Contains(f.Summary, "(listener infra/"+gw.Name+"/") {
			t.Errorf("Gateway %s blamed for: %s", gw.Name, f.Summary)
		}
	}
}

// upgrade-check --timings tells its steps on standard error and leaves the report alone.
func TestUpgradeCheckTimings(t *testing.T) {
	run := func(extra ...string) (string, string) {
		root := newRoot()
		var out, errOut bytes.Buffer
		root.SetOut(&out)
		root.SetErr(&errOut)
		root.SetArgs(append([]string{"upgrade-check", "--from", "v1.8", "--to", "v1.9", "-f", sampleDump}, extra...))
		_ = root.Execute() // exit 1: the sample dump has breaking findings
		return out.String(), errOut.String()
	}
	plain, _ := run()
	timed, table := run("--timings")
	if plain == "" || plain != timed {
		t.Fatalf("--timings changed the report (or there is none: %d bytes)", len(plain))
	}
	var names []string
	for _, line := range strings.Split(strings.TrimSuffix(table, "\n"), "\n")[1:] {
		if i := strings.Index(line, "  "); i > 0 {
			names = append(names, line[:i])
		}
	}
	want := []string{"read and decode", "translate v1.8 and v1.9", "compare", "write text", "total"}
	if strings.Join(names, "|") != strings.Join(want, "|") {
		t.Errorf("stages %q, want %q; table:\n%s", names, want, table)
	}
}
