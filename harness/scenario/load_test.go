package scenario_test

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf16"

	gwapiv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/egharness/egharness/harness/scenario"
	"github.com/egharness/egharness/harness/scenario/scenariotest"
	"github.com/egharness/egharness/internal/testutil"
)

var resourcesBlock = `resources: |
` + testutil.Indent(testutil.Gateway) + `  ---
  apiVersion: v1
  kind: Service
  metadata: {name: app}
  spec: {clusterIP: 10.96.0.10, ports: [{name: http, port: 8080}]}
  ---
  apiVersion: gateway.networking.k8s.io/v1
  kind: HTTPRoute
  metadata: {name: app}
  spec:
    parentRefs: [{name: eg}]
    hostnames: [app.example.com]
    rules:
    - matches: [{path: {type: PathPrefix, value: /app}}]
      backendRefs: [{name: app, port: 8080}]
`

const validExpect = `expect:
  statuses:
  - object: HTTPRoute/default/app
    parent: Gateway/default/eg
    conditions:
    - {type: Accepted, status: "True", reason: Accepted}
  - {object: Gateway/default/eg, listener: http, attachedRoutes: 1}
  xds:
  - {kind: VirtualHost, name: default/eg/http/app_example_com}
  traffic:
  - request: {port: 80, host: app.example.com, path: /app}
    expect: {status: 200}
`

var validScenario = "name: demo\ndescription: a demo\ncovers: [RT-01]\nlabels: [traffic]\n" +
	resourcesBlock + validExpect

func loader(t testing.TB, root string) scenario.Loader {
	t.Helper()
	return scenariotest.Loader(t, root)
}

// write puts text at root/rel and returns its path.
func write(t *testing.T, root, rel, text string) string {
	t.Helper()
	path := filepath.Join(root, rel)
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// loadErr loads text as root/routing/s.yaml and returns the load error's messages.
func loadErr(t *testing.T, text string) (path string, msgs []string) {
	t.Helper()
	root := t.TempDir()
	path = write(t, root, "routing/s.yaml", text)
	s, err := loader(t, root).LoadFile(path)
	if err == nil {
		t.Fatalf("scenario loaded, want an error (%s)", s.Name)
	}
	var se *scenario.Error
	if !errors.As(err, &se) {
		t.Fatalf("error %v (%T) is not a *scenario.Error", err, err)
	}
	if se.File != path {
		t.Errorf("Error.File = %q, want %q", se.File, path)
	}
	if err.Error() != strings.Join(se.Msgs, "\n") {
		t.Errorf("Error() = %q, want the messages joined", err.Error())
	}
	return path, se.Msgs
}

// wantMsg asserts that one of msgs starts with "path:line: " and contains substr.
func wantMsg(t *testing.T, msgs []string, path string, line int, substr string) {
	t.Helper()
	prefix := fmt.Sprintf("%s:%d: ", path, line)
	for _, m := range msgs {
		if strings.HasPrefix(m, prefix) && strings.Contains(m, substr) {
			return
		}
	}
	t.Errorf("no message starting with %q and containing %q in:\n  %s", prefix, substr, strings.Join(msgs, "\n  "))
}

func TestLoadFileValid(t *testing.T) {
	root := t.TempDir()
	path := write(t, root, "routing/demo.yaml", validScenario)
	s, err := loader(t, root).LoadFile(path)
	if err != nil {
		t.Fatalf("LoadFile: %v", err)
	}
	if s.Name != "demo" || s.Area != "routing" || s.File != path || s.Description != "a demo" {
		t.Errorf("name %q area %q file %q description %q", s.Name, s.Area, s.File, s.Description)
	}
	if strings.Join(s.Covers, ",") != "RT-01" || strings.Join(s.Labels, ",") != "traffic" {
		t.Errorf("covers %v labels %v", s.Covers, s.Labels)
	}
	if got := s.ProfilesOrDefault(); len(got) != 1 || got[0] != "v1.9" {
		t.Errorf("ProfilesOrDefault = %v, want [v1.9]", got)
	}
	var refs []string
	for _, o := range s.Objects {
		refs = append(refs, o.Ref().String())
	}
	if want := "GatewayClass/eg Gateway/default/eg Service/default/app HTTPRoute/default/app"; strings.Join(refs,
		" ") != want {
		t.Errorf("objects %v, want %s", refs, want)
	}
	// Objects carry the scenario file's lines: the block text starts below `resources: |`.
	route := s.Objects[3]
	if _, ok := route.Obj.(*gwapiv1.HTTPRoute); !ok {
		t.Errorf("HTTPRoute decoded into %T", route.Obj)
	}
	if want := testutil.LineOf(t, validScenario, "kind: HTTPRoute") - 1; route.File != path || route.Line != want {
		t.Errorf("HTTPRoute at %s:%d, want %s:%d", route.File, route.Line, path, want)
	}
	if want := testutil.LineOf(t, validScenario, "kind: GatewayClass") - 1; s.Objects[0].Line != want {
		t.Errorf("GatewayClass at line %d, want %d (the line after `resources: |`)", s.Objects[0].Line, want)
	}
	if len(s.Expect.Statuses) != 2 || s.Expect.Statuses[1].AttachedRoutes == nil ||
		*s.Expect.Statuses[1].AttachedRoutes != 1 {
		t.Errorf("statuses %+v", s.Expect.Statuses)
	}
	if len(s.Expect.Traffic) != 1 || s.Expect.Traffic[0].Request.Port != 80 || s.Expect.Traffic[0].Expect.Status != 200 {
		t.Errorf("traffic %+v", s.Expect.Traffic)
	}
	if got, want := s.Line("expect.traffic[0].request"),
		testutil.LineOf(t, validScenario, "request: {port: 80"); got != want {
		t.Errorf("Line(expect.traffic[0].request) = %d, want %d", got, want)
	}
}

func TestAreaWithoutRoot(t *testing.T) {
	root := t.TempDir()
	path := write(t, root, "a/b/naming/demo.yaml", validScenario)
	s, err := loader(t, "").LoadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if s.Area != "naming" {
		t.Errorf("area %q, want the file's folder naming", s.Area)
	}
	s, err = loader(t, root).LoadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if s.Area != "a" {
		t.Errorf("area %q, want the first folder below Root (a)", s.Area)
	}
}

func TestLoadFileErrors(t *testing.T) {
	base := validScenario
	tests := []struct {
		name   string
		text   string
		marker string // the line the message must name
		substr string
	}{
		{
			name:   "unknown top-level field",
			text:   strings.Replace(base, "labels: [traffic]\n", "labels: [traffic]\nowner: me\n", 1),
			marker: "owner: me",
			substr: `unknown field "owner"`,
		},
		{
			name: "unknown nested field",
			text: strings.Replace(base, "    parent: Gateway/default/eg\n",
				"    parent: Gateway/default/eg\n    sectoin: http\n", 1),
			marker: "sectoin: http",
			substr: `unknown field "expect.statuses[0].sectoin"`,
		},
		{
			name:   "unknown covers ID",
			text:   strings.Replace(base, "covers: [RT-01]\n", "covers:\n- RT-01\n- XX-99\n", 1),
			marker: "- XX-99",
			substr: `covers: unknown behavior ID "XX-99"`,
		},
		{
			name:   "bad profile",
			text:   strings.Replace(base, "labels: [traffic]\n", "labels: [traffic]\nprofiles:\n- v1.9\n- v2.0\n", 1),
			marker: "- v2.0",
			substr: `unknown profile "v2.0"`,
		},
		{
			name:   "profile listed twice",
			text:   strings.Replace(base, "labels: [traffic]\n", "labels: [traffic]\nprofiles:\n- v1.9\n- v1.9\n", 1),
			marker: "profiles:", // the second - v1.9, two lines below: computed below
			substr: "profile v1.9 is listed twice",
		},
		{
			name:   "expectByProfile for a profile not run",
			text:   base + "expectByProfile:\n  v1.8:\n    statuses: []\n",
			marker: "  v1.8:",
			substr: "expectByProfile.v1.8: the scenario does not run under v1.8 (profiles: v1.9)",
		},
		{
			name:   "missing name",
			text:   strings.Replace(base, "name: demo\n", "", 1),
			marker: "description: a demo",
			substr: "name is required",
		},
		{
			name:   "bad name",
			text:   strings.Replace(base, "name: demo\n", "name: Demo_1\n", 1),
			marker: "name: Demo_1",
			substr: `name "Demo_1": use lower case letters`,
		},
		{
			name:   "no covers",
			text:   strings.Replace(base, "covers: [RT-01]\n", "", 1),
			marker: "name: demo",
			substr: "covers is required",
		},
		{
			name:   "neither resources nor resourcesFile",
			text:   "name: demo\ncovers: [RT-01]\nexpect: {}\n",
			marker: "name: demo",
			substr: "set exactly one of resources (inline YAML) and resourcesFile",
		},
		{
			name:   "both resources and resourcesFile",
			text:   strings.Replace(base, "labels: [traffic]\n", "labels: [traffic]\nresourcesFile: demo.resources.yaml\n", 1),
			marker: "name: demo",
			substr: "set exactly one of resources (inline YAML) and resourcesFile",
		},
		{
			name:   "expectation naming an object not in resources",
			text:   strings.Replace(base, "  - object: HTTPRoute/default/app\n", "  - object: HTTPRoute/default/nope\n", 1),
			marker: "object: HTTPRoute/default/nope",
			substr: "expect.statuses[0].object: HTTPRoute/default/nope is not among the scenario's objects",
		},
		{
			name: "admission naming an object not in resources",
			text: strings.Replace(base, "expect:\n",
				"expect:\n  admission:\n  - {object: Gateway/default/other, allowed: false}\n", 1),
			marker: "object: Gateway/default/other",
			substr: "expect.admission[0].object: Gateway/default/other is not among the scenario's objects",
		},
		{
			name:   "malformed object reference",
			text:   strings.Replace(base, "  - object: HTTPRoute/default/app\n", "  - object: HTTPRoute/app\n", 1),
			marker: "object: HTTPRoute/app",
			substr: "HTTPRoute is namespaced",
		},
		{
			name:   "malformed parent",
			text:   strings.Replace(base, "    parent: Gateway/default/eg\n", "    parent: Gateway/eg\n", 1),
			marker: "parent: Gateway/eg",
			substr: `parent "Gateway/eg": want Kind/namespace/name`,
		},
		{
			name: "bad xds kind",
			text: strings.Replace(base, "  - {kind: VirtualHost, name: default/eg/http/app_example_com}\n",
				"  - kind: Vhost\n    name: x\n", 1),
			marker: "kind: Vhost",
			substr: `expect.xds[0].kind: "Vhost" is not one of Listener, RouteConfiguration, VirtualHost`,
		},
		{
			name: "routes on a cluster",
			text: strings.Replace(base, "  - {kind: VirtualHost, name: default/eg/http/app_example_com}\n",
				"  - {kind: Cluster, name: c, routes: [r]}\n", 1),
			marker: "kind: Cluster, name: c",
			substr: "routes and domains belong to a VirtualHost",
		},
		{
			name: "prefix with a name",
			text: strings.Replace(base, "  - {kind: VirtualHost, name: default/eg/http/app_example_com}\n",
				"  - {kind: Cluster, name: c, prefix: sds_, names: [sds_a]}\n", 1),
			marker: "kind: Cluster, name: c",
			substr: "prefix and names go together, without name or absent",
		},
		{
			name: "names off the prefix",
			text: strings.Replace(base, "  - {kind: VirtualHost, name: default/eg/http/app_example_com}\n",
				"  - {kind: Cluster, prefix: sds_, names: [other]}\n", 1),
			marker: "kind: Cluster, prefix: sds_",
			substr: `names: "other" does not start with the prefix "sds_"`,
		},
		{
			name: "traffic without port",
			text: strings.Replace(base, "request: {port: 80, host: app.example.com, path: /app}",
				"request: {host: app.example.com, path: /app}", 1),
			marker: "request: {host: app.example.com",
			substr: "expect.traffic[0].request.port is required",
		},
		{
			name:   "traffic that checks nothing",
			text:   strings.Replace(base, "    expect: {status: 200}\n", "    expect: {}\n", 1),
			marker: "request: {port: 80",
			substr: "expect.traffic[0].expect checks nothing",
		},
		{
			name: "condition without type",
			text: strings.Replace(base, "    - {type: Accepted, status: \"True\", reason: Accepted}\n",
				"    - {status: \"True\"}\n", 1),
			marker: `- {status: "True"}`,
			substr: "expect.statuses[0].conditions[0]: type is required",
		},
		{
			name:   "wrong type",
			text:   strings.Replace(base, "labels: [traffic]\n", "labels: traffic\n", 1),
			marker: "labels: traffic",
			substr: "cannot unmarshal string",
		},
		{
			name:   "syntax error",
			text:   strings.Replace(base, "labels: [traffic]\n", "labels: @traffic\n", 1),
			marker: "labels: @traffic",
			substr: "malformed YAML",
		},
		{
			name:   "not a mapping",
			text:   "- name: demo\n",
			marker: "- name: demo",
			substr: "a scenario is a YAML mapping",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path, msgs := loadErr(t, tt.text)
			line := testutil.LineOf(t, tt.text, tt.marker)
			if tt.name == "profile listed twice" {
				line += 2
			}
			wantMsg(t, msgs, path, line, tt.substr)
		})
	}
}

func TestInlineResourceErrorLine(t *testing.T) {
	text := strings.Replace(validScenario, "  spec: {clusterIP: 10.96.0.10, ports: [{name: http, port: 8080}]}\n",
		"  spec:\n    clusterIP: 10.96.0.10\n    bogus: 1\n    ports: [{name: http, port: 8080}]\n", 1)
	path, msgs := loadErr(t, text)
	if len(msgs) != 1 {
		t.Fatalf("messages %q, want 1", msgs)
	}
	line := testutil.LineOf(t, text, "bogus: 1")
	want := fmt.Sprintf("%s:%d: Service app: unknown field \"spec.bogus\"", path, line)
	if !strings.Contains(msgs[0], want) {
		t.Errorf("message %q does not contain %q (the scenario file's line)", msgs[0], want)
	}
}

// Every other loader message starts with "file:line:", as scenario.Error documents.
func TestInlineResourceErrorStartsWithFileLine(t *testing.T) {
	text := strings.Replace(validScenario, "  metadata: {name: app}\n  spec: {clusterIP",
		"  metadata: {name: app}\n  bogus: 1\n  spec: {clusterIP", 1)
	path, msgs := loadErr(t, text)
	wantMsg(t, msgs, path, testutil.LineOf(t, text, "bogus: 1"), `unknown field "bogus"`)
}

func TestInlineResourceErrors(t *testing.T) {
	tests := []struct {
		name, old, new, marker, substr string
	}{
		{"unknown kind", "  kind: Service\n", "  kind: Pod\n", "kind: Pod", `unknown kind "Pod"`},
		// the Service is the third document, on line 19,
		{"duplicate object", "expect:\n", "  ---\n  apiVersion: v1\n  kind: Service\n  metadata: {name: app}\nexpect:\n", "",
			"Service/default/app: duplicate object (first defined at line 19)"},
		{"missing name", "  metadata: {name: app}\n  spec: {clusterIP", "  metadata: {labels: {a: b}}\n  spec: {clusterIP",
			"kind: Service", "metadata.name is required"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			text := strings.Replace(validScenario, tt.old, tt.new, 1)
			if text == validScenario {
				t.Fatal("replacement did not apply")
			}
			path, msgs := loadErr(t, text)
			// The document starts on the line of its apiVersion, one above the marker.
			var line int
			if tt.marker != "" {
				line = testutil.LineOf(t, text, tt.marker) - 1
			} else {
				// the last document: its apiVersion is on the line above the last kind: Service
				line = strings.Count(text[:strings.LastIndex(text, "  kind: Service\n")], "\n")
			}
			want := fmt.Sprintf("%s:%d: ", path, line)
			found := false
			for _, m := range msgs {
				if strings.Contains(m, want) && strings.Contains(m, tt.substr) {
					found = true
				}
			}
			if !found {
				t.Errorf("no message containing %q and %q in %q", want, tt.substr, msgs)
			}
		})
	}
}

// The message about an expectByProfile entry should name the line of the profile's key.
func TestExpectByProfileLine(t *testing.T) {
	text := validScenario + "expectByProfile:\n  v1.8:\n    statuses: []\n"
	path, msgs := loadErr(t, text)
	wantMsg(t, msgs, path, testutil.LineOf(t, text, "  v1.8:"),
		"expectByProfile.v1.8: the scenario does not run under v1.8")
}

func TestResourcesFile(t *testing.T) {
	root := t.TempDir()
	res := strings.ReplaceAll(strings.TrimPrefix(resourcesBlock, "resources: |\n"), "\n  ", "\n")[2:]
	resPath := write(t, root, "routing/demo.resources.yaml", res)
	text := "name: demo\ncovers: [RT-01]\nresourcesFile: demo.resources.yaml\n" + validExpect
	path := write(t, root, "routing/demo.yaml", text)
	s, err := loader(t, root).LoadFile(path)
	if err != nil {
		t.Fatalf("LoadFile: %v", err)
	}
	if len(s.Objects) != 4 {
		t.Fatalf("got %d objects, want 4", len(s.Objects))
	}
	if o := s.Objects[3]; o.File != resPath || o.Line != testutil.LineOf(t, res, "kind: HTTPRoute")-1 {
		t.Errorf("HTTPRoute at %s:%d, want %s:%d", o.File, o.Line, resPath, testutil.LineOf(t, res, "kind: HTTPRoute")-1)
	}

	// A missing resources file is reported at the resourcesFile line.
	text = strings.Replace(text, "demo.resources.yaml", "gone.resources.yaml", 1)
	path = write(t, root, "routing/gone.yaml", text)
	_, err = loader(t, root).LoadFile(path)
	var se *scenario.Error
	if !errors.As(err, &se) {
		t.Fatalf("error %v", err)
	}
	wantMsg(t, se.Msgs, path, 3, "resourcesFile:")
}

func TestLoadFileMissing(t *testing.T) {
	path := filepath.Join(t.TempDir(), "nope.yaml")
	_, err := loader(t, "").LoadFile(path)
	var se *scenario.Error
	if !errors.As(err, &se) || len(se.Msgs) != 1 || !strings.HasPrefix(se.Msgs[0], path+": ") {
		t.Errorf("error %v", err)
	}
}

func TestLoadPaths(t *testing.T) {
	root := t.TempDir()
	good1 := write(t, root, "routing/a.yaml", validScenario)
	good2 := write(t, root, "naming/b.yaml", strings.Replace(validScenario, "name: demo", "name: demo-b", 1))
	bad := write(t, root, "routing/bad.yaml",
		strings.Replace(validScenario, "labels: [traffic]", "labels: [traffic]\nbogus: 1", 1))
	empty := write(t, root, "routing/empty.yaml", "\n  \n")
	dup := write(t, root, "routing/z-dup.yaml", validScenario)
	// Neither a resources file nor the catalog is a scenario.
	write(t, root, "routing/x.resources.yaml", "not: [a scenario")
	write(t, root, "behaviors.yaml", "behaviors: []\n")
	write(t, root, "routing/notes.txt", "ignored")

	set, err := loader(t, root).LoadPaths(root)
	if err != nil {
		t.Fatalf("LoadPaths: %v", err)
	}
	var names []string
	for _, s := range set.Scenarios {
		names = append(names, s.Name+"@"+s.Area)
	}
	if strings.Join(names, " ") != "demo-b@naming demo@routing" {
		t.Errorf("scenarios %v, want demo-b@naming demo@routing (sorted by path)", names)
	}
	if set.Scenarios[1].File != good1 || set.Scenarios[0].File != good2 {
		t.Errorf("files %s %s", set.Scenarios[0].File, set.Scenarios[1].File)
	}
	errsByFile := map[string]string{}
	for _, e := range set.Errors {
		errsByFile[e.File] = e.Error()
	}
	if len(errsByFile) != 3 {
		t.Errorf("errors for %d files, want 3 (bad, empty, dup): %v", len(errsByFile), errsByFile)
	}
	if msg := errsByFile[bad]; !strings.HasPrefix(msg,
		fmt.Sprintf("%s:%d: unknown field \"bogus\"", bad, testutil.LineOf(t, validScenario, "labels:")+1)) {
		t.Errorf("bad file: %q", msg)
	}
	if msg := errsByFile[empty]; msg != empty+": empty scenario file" {
		t.Errorf("empty file: %q", msg)
	}
	if msg := errsByFile[dup]; msg != fmt.Sprintf("%s:1: name \"demo\" is already used by %s", dup, good1) {
		t.Errorf("duplicate name: %q", msg)
	}
}

func TestLoadPathsFileAndMissing(t *testing.T) {
	root := t.TempDir()
	f := write(t, root, "routing/a.yaml", validScenario)
	set, err := loader(t, root).LoadPaths(f)
	if err != nil || len(set.Scenarios) != 1 || len(set.Errors) != 0 {
		t.Fatalf("LoadPaths(file) = %+v, %v", set, err)
	}
	if _, err := loader(t, root).LoadPaths(filepath.Join(root, "nope")); err == nil {
		t.Error("LoadPaths of a missing path did not fail")
	}
}

func TestExpectFor(t *testing.T) {
	text := strings.Replace(validScenario, "labels: [traffic]\n", "labels: [traffic]\nprofiles: [v1.8, v1.9]\n", 1) +
		"expectByProfile:\n  v1.8:\n    statuses:\n    - {object: Gateway/default/eg, listener: http, attachedRoutes: 2}\n"
	root := t.TempDir()
	s, err := loader(t, root).LoadFile(write(t, root, "routing/p.yaml", text))
	if err != nil {
		t.Fatal(err)
	}
	e18, e19 := s.ExpectFor("v1.8"), s.ExpectFor("v1.9")
	if len(e18.Statuses) != 1 || *e18.Statuses[0].AttachedRoutes != 2 {
		t.Errorf("v1.8 statuses %+v, want the replacement", e18.Statuses)
	}
	if len(e18.XDS) != 1 || len(e18.Traffic) != 1 {
		t.Errorf("v1.8 keeps the base xds and traffic: %+v", e18)
	}
	if len(e19.Statuses) != 2 {
		t.Errorf("v1.9 statuses %+v, want the base", e19.Statuses)
	}
}

func TestParseParent(t *testing.T) {
	p, err := scenario.ParseParent("Gateway/default/eg/http")
	if err != nil || p != (scenario.ParentParsed{Kind: "Gateway", Namespace: "default", Name: "eg", SectionName: "http"}) {
		t.Errorf("ParseParent = %+v, %v", p, err)
	}
	p, err = scenario.ParseParent("Gateway/default/eg")
	if err != nil || p.SectionName != "" || p.Name != "eg" {
		t.Errorf("ParseParent = %+v, %v", p, err)
	}
	for _, bad := range []string{"Gateway/eg", "Gateway/default/eg/http/x", "Gateway//eg", ""} {
		if _, err := scenario.ParseParent(bad); err == nil {
			t.Errorf("ParseParent(%q) accepted", bad)
		}
	}
}

// A scenario saved as UTF-16 with a BOM (or UTF-8 with one) loads as its UTF-8 self; a
// scenario in UTF-16 without a BOM is refused with a message naming the file.
func TestLoadScenarioEncodings(t *testing.T) {
	root := t.TempDir()
	enc := func(s string, bom bool) string {
		var b []byte
		if bom {
			b = append(b, 0xFF, 0xFE)
		}
		for _, u := range utf16.Encode([]rune(s)) {
			b = append(b, byte(u), byte(u>>8))
		}
		return string(b)
	}
	for name, text := range map[string]string{
		"utf8.yaml":     validScenario,
		"utf8bom.yaml":  "\uFEFF" + validScenario,
		"utf16le.yaml":  enc(strings.ReplaceAll(validScenario, "\n", "\r\n"), true),
		"utf16raw.yaml": enc(validScenario, false),
	} {
		path := write(t, root, filepath.Join("a", name), text)
		s, err := loader(t, root).LoadFile(path)
		if name == "utf16raw.yaml" {
			want := path + ": the file looks like UTF-16 text without a byte-order mark; save it as UTF-8 (or " +
				"UTF-16 with a BOM) and try again"
			if err == nil || err.Error() != want {
				t.Errorf("%s: %v\nwant %s", name, err, want)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		if s.Name != "demo" || len(s.Objects) == 0 {
			t.Errorf("%s: name %q, %d objects", name, s.Name, len(s.Objects))
		}
	}
}
