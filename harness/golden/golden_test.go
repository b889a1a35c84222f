package golden_test

import (
	"bytes"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/egharness/egharness/harness/golden"
	"github.com/egharness/egharness/internal/testutil"
	"github.com/egharness/egharness/translator"
	"github.com/egharness/egharness/translator/result"
)

const objects = testutil.GatewayAndApp + `---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: app, namespace: default}
spec:
  parentRefs: [{name: eg}]
  hostnames: [app.example.com, b.example.com]
  rules:
  - matches: [{path: {type: PathPrefix, value: /app}}, {path: {type: Exact, value: /x}}]
    backendRefs: [{name: app, port: 8080}]
`

func translate(t *testing.T) *result.Result {
	t.Helper()
	objs, p := testutil.DecodeV19(t, "objects.yaml", objects)
	res, err := translator.Translate(translator.Input{Objects: objs, Profile: p})
	if err != nil {
		t.Fatalf("translate: %v", err)
	}
	return res
}

func render(t *testing.T, res *result.Result) golden.Files {
	t.Helper()
	f, err := golden.Render(res)
	if err != nil {
		t.Fatalf("Render: %v", err)
	}
	return f
}

func TestRenderFiles(t *testing.T) {
	f := render(t, translate(t))
	var got []string
	for name := range f {
		got = append(got, name)
	}
	sort.Strings(got)
	want := append([]string(nil), golden.FileNames...)
	sort.Strings(want)
	if !reflect.DeepEqual(got, want) {
		t.Errorf("files %v, want %v", got, want)
	}
	checks := map[string][]string{
		"listeners.yaml": {"name: default/eg/http", "portValue: 10080"},
		"routes.yaml": {"name: default/eg/http/app_example_com", "name: default/eg/http/b_example_com",
			"httproute/default/app/rule/0/match/1/app_example_com", "pathSeparatedPrefix: /app"},
		"clusters.yaml":  {"name: httproute/default/app/rule/0"},
		"endpoints.yaml": {"clusterName: httproute/default/app/rule/0", "address: 10.96.0.10", "portValue: 8080"},
		"status.yaml":    {"admission:", "message: Route is accepted", "attachedRoutes: 1", "patches: []", "warnings: []"},
		// The summary: a listener with its chain and filters, each route as match -> action,
		// each cluster with its endpoints.
		golden.SummaryFile: {
			"\nlisteners (2)\ndefault/eg/http 0.0.0.0:10080\n  default chain default/eg/http\n" +
				"    envoy.filters.network.http_connection_manager rds default/eg/http\n      http envoy.filters.http.router\n",
			"\n    httproute/default/app/rule/0/match/1/app_example_com\n" +
				"      path /x -> cluster httproute/default/app/rule/0\n",
			"\nhttproute/default/app/rule/0 EDS least_request\n" +
				"  httproute/default/app/rule/0/backend/0 weight 1: 10.96.0.10:8080\n",
			"\nsecrets (0)\n",
		},
	}
	for name, subs := range checks {
		for _, s := range subs {
			if !strings.Contains(string(f[name]), s) {
				t.Errorf("%s does not contain %q:\n%s", name, s, f[name])
			}
		}
	}
	if string(f["secrets.yaml"]) != "[]\n" {
		t.Errorf("secrets.yaml = %q, want an empty list", f["secrets.yaml"])
	}
	// Every Any carries its @type, and keys are sorted (YAML from sorted JSON).
	if !strings.Contains(string(f["listeners.yaml"]),
		"'@type': type.googleapis.com/envoy.extensions.filters.network.http_connection_manager.v3.HttpConnectionManager") {
		t.Errorf("listeners.yaml lacks the HCM @type:\n%s", f["listeners.yaml"])
	}
}

func TestRenderDeterministic(t *testing.T) {
	res := translate(t)
	first := render(t, res)
	for i := 0; i < 20; i++ {
		again := render(t, res)
		for _, name := range golden.FileNames {
			if !bytes.Equal(first[name], again[name]) {
				t.Fatalf("render %d: %s differs:\n%s\nvs\n%s", i, name, first[name], again[name])
			}
		}
	}
	// A fresh translation of the same objects renders the same bytes too.
	other := render(t, translate(t))
	for _, name := range golden.FileNames {
		if !bytes.Equal(first[name], other[name]) {
			t.Errorf("a second translation renders a different %s", name)
		}
	}
}

func TestCompareMissing(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "routing", "demo", "v1.9")
	diffs := golden.Compare(dir, render(t, translate(t)))
	if len(diffs) != len(golden.FileNames) {
		t.Fatalf("got %d diffs, want one per file: %+v", len(diffs), diffs)
	}
	for i, d := range diffs {
		if d.File != filepath.Join(dir, golden.FileNames[i]) || !strings.HasPrefix(d.Msg, "missing") {
			t.Errorf("diff %d = %+v", i, d)
		}
	}
}

func TestWriteThenCompare(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "routing", "demo", "v1.9")
	f := render(t, translate(t))
	changed, err := golden.Write(dir, f)
	if err != nil || !changed {
		t.Fatalf("first Write = %t, %v; want a change", changed, err)
	}
	for _, name := range golden.FileNames {
		disk, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil || !bytes.Equal(disk, f[name]) {
			t.Errorf("%s on disk differs from the rendering (%v)", name, err)
		}
	}
	if diffs := golden.Compare(dir, f); len(diffs) != 0 {
		t.Errorf("Compare after Write: %+v", diffs)
	}
	changed, err = golden.Write(dir, f)
	if err != nil || changed {
		t.Errorf("second Write = %t, %v; want no change", changed, err)
	}

	// One changed line is reported with its number and both texts.
	path := filepath.Join(dir, "status.yaml")
	lines := strings.Split(string(f["status.yaml"]), "\n")
	idx := -1
	for i, l := range lines {
		if strings.Contains(l, "message: Route is accepted") {
			idx = i
			break
		}
	}
	if idx < 0 {
		t.Fatal("no route message in status.yaml")
	}
	old := lines[idx]
	lines[idx] = strings.Replace(old, "Route is accepted", "Route was accepted", 1)
	if err := os.WriteFile(path, []byte(strings.Join(lines, "\n")), 0o644); err != nil {
		t.Fatal(err)
	}
	diffs := golden.Compare(dir, f)
	if len(diffs) != 1 {
		t.Fatalf("diffs %+v, want one", diffs)
	}
	want := golden.Diff{File: path,
		Msg: "line " + strconv.Itoa(idx+1) + ": golden " + strconv.Quote(lines[idx]) + ", now " + strconv.Quote(old)}
	if diffs[0] != want {
		t.Errorf("diff = %+v,\nwant   %+v", diffs[0], want)
	}

	// Extra lines on disk: the first line past the rendering differs from "".
	if err := os.WriteFile(path, append(append([]byte(nil), f["status.yaml"]...), "extra: 1\n"...), 0o644); err != nil {
		t.Fatal(err)
	}
	n := strings.Count(string(f["status.yaml"]), "\n")
	diffs = golden.Compare(dir, f)
	if len(diffs) != 1 || diffs[0].Msg != "line "+strconv.Itoa(n+1)+`: golden "extra: 1", now ""` {
		t.Errorf("diffs %+v", diffs)
	}

	// A missing file among present ones.
	if err := os.Remove(filepath.Join(dir, "clusters.yaml")); err != nil {
		t.Fatal(err)
	}
	diffs = golden.Compare(dir, f)
	if len(diffs) != 2 || diffs[0].File != filepath.Join(dir, "clusters.yaml") ||
		!strings.HasPrefix(diffs[0].Msg, "missing") {
		t.Errorf("diffs %+v", diffs)
	}

	// Write restores both and says so.
	changed, err = golden.Write(dir, f)
	if err != nil || !changed {
		t.Errorf("Write after edits = %t, %v; want a change", changed, err)
	}
	if diffs := golden.Compare(dir, f); len(diffs) != 0 {
		t.Errorf("Compare after restoring: %+v", diffs)
	}
}

func TestDir(t *testing.T) {
	if got := golden.Dir("golden", "routing/demo", "v1.9"); got != filepath.Join("golden", "routing", "demo", "v1.9") {
		t.Errorf("Dir = %q", got)
	}
}

func TestStale(t *testing.T) {
	root := t.TempDir()
	keep := golden.Dir(root, "routing/demo", "v1.9")
	dropped := golden.Dir(root, "routing/demo", "v1.8")
	gone := golden.Dir(root, "routing/renamed", "v1.9")
	for _, dir := range []string{keep, dropped, gone} {
		for _, name := range golden.FileNames {
			writeFile(t, filepath.Join(dir, name), "[]\n")
		}
	}
	writeFile(t, filepath.Join(keep, "notes.yaml"), "x")
	writeFile(t, filepath.Join(root, "README"), "x")

	stale, err := golden.Stale(root, map[string]bool{keep: true})
	if err != nil {
		t.Fatal(err)
	}
	var want []string
	for _, dir := range []string{dropped, gone} {
		for _, name := range golden.FileNames {
			want = append(want, filepath.Join(dir, name))
		}
	}
	want = append(want, filepath.Join(keep, "notes.yaml"), filepath.Join(root, "README"))
	sort.Strings(want)
	if !reflect.DeepEqual(stale, want) {
		t.Errorf("stale\n  %s\nwant\n  %s", strings.Join(stale, "\n  "), strings.Join(want, "\n  "))
	}

	// Nothing is stale when every folder is wanted and holds only known files.
	if err := os.Remove(filepath.Join(keep, "notes.yaml")); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(root, "README")); err != nil {
		t.Fatal(err)
	}
	stale, err = golden.Stale(root, map[string]bool{keep: true, dropped: true, gone: true})
	if err != nil || len(stale) != 0 {
		t.Errorf("Stale = %v, %v; want nothing", stale, err)
	}

	// A golden root that does not exist has nothing stale.
	stale, err = golden.Stale(filepath.Join(root, "nope"), nil)
	if err != nil || len(stale) != 0 {
		t.Errorf("Stale(missing root) = %v, %v", stale, err)
	}
}

func writeFile(t *testing.T, path, text string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

// A golden file is replaced, not rewritten in place: a reader that opened the old file
// reads it whole, and no temporary file is left behind.
func TestWriteFileAtomic(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "xds.yaml")
	if err := os.WriteFile(path, []byte("old content\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	reader, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer reader.Close()
	if err := golden.WriteFileAtomic(path, []byte("new\n")); err != nil {
		t.Fatal(err)
	}
	old := make([]byte, 64)
	n, _ := reader.Read(old)
	if string(old[:n]) != "old content\n" {
		t.Errorf("the open old file reads %q: it was rewritten in place", old[:n])
	}
	got, err := os.ReadFile(path)
	if err != nil || string(got) != "new\n" {
		t.Errorf("new content %q, %v", got, err)
	}
	if info, _ := os.Stat(path); info.Mode().Perm() != 0o644 {
		t.Errorf("mode %v, want 0644", info.Mode().Perm())
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Errorf("left in the folder: %v", entries)
	}
	// A write that cannot happen leaves the old file as it was.
	if os.Geteuid() != 0 {
		if err := os.Chmod(dir, 0o555); err != nil {
			t.Fatal(err)
		}
		defer os.Chmod(dir, 0o755)
		if err := golden.WriteFileAtomic(path, []byte("newer\n")); err == nil {
			t.Error("write into a read-only folder succeeded")
		}
		if got, _ := os.ReadFile(path); string(got) != "new\n" {
			t.Errorf("after a failed write: %q", got)
		}
	}
}
