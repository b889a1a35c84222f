package translator_test

import (
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
)

// The stages of the reference translator run gatewayapi → policy → ir → xds, and each
// meaning has one place: the policy stage resolves EG's CRD specs into typed values of
// translator/ir, and the xDS stage only turns those into Envoy protobufs. These rules hold
// the imports to that direction, so that a shortcut (xds reading a raw spec again, ir
// reaching back into a stage) fails here rather than in review. Test files are exempt:
// they build inputs by hand with whatever helps.

const (
	modulePath = "github.com/egharness/egharness/translator/"
	egAPI      = "github.com/envoyproxy/gateway/api"
)

// importRule forbids the non-test files of a translator package (a directory under
// translator/) every import path equal to, or under, one of the forbidden prefixes.
type importRule struct {
	pkg       string
	forbidden []string
	why       string
}

var importRules = []importRule{
	{"ir", []string{modulePath}, "the IR is plain types every stage shares: it depends on no stage"},
	{"gatewayapi", []string{modulePath + "policy", modulePath + "xds"}, "the Gateway API stage runs first"},
	{"policy", []string{modulePath + "xds"}, "the policy stage runs before the xDS stage"},
	{"xds", []string{modulePath + "gatewayapi", modulePath + "policy", egAPI},
		"the xDS stage reads only translator/ir: the policy stage resolves EG's API types"},
}

func TestImportDirection(t *testing.T) {
	for _, r := range importRules {
		for _, v := range violations(t, r.pkg, r) {
			t.Errorf("translator/%s: %s (%s)", r.pkg, v, r.why)
		}
	}
}

// TestImportDirectionCatchesViolations makes sure the rules bite: a package whose file
// imports what its rule forbids is reported, its test files are not.
func TestImportDirectionCatchesViolations(t *testing.T) {
	dir := t.TempDir()
	write := func(name, src string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("bad.go", "package xds\n\nimport egv1a1 \""+egAPI+"/v1alpha1\"\n\nvar _ egv1a1.Lua\n")
	write("bad_test.go", "package xds\n\nimport _ \""+modulePath+"policy\"\n")
	got := violations(t, dir, importRules[len(importRules)-1])
	if len(got) != 1 || !strings.Contains(got[0], "bad.go imports "+egAPI+"/v1alpha1") {
		t.Errorf("want one violation, of bad.go's EG API import; got %q", got)
	}
}

// violations are the forbidden imports of the non-test Go files in dir (relative to this
// package's directory, translator/), one line each, sorted.
func violations(t *testing.T, dir string, r importRule) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	files := 0
	for _, e := range entries {
		name := e.Name()
		if e.IsDir() || !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
			continue
		}
		files++
		f, err := parser.ParseFile(token.NewFileSet(), filepath.Join(dir, name), nil, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		for _, spec := range f.Imports {
			path, err := strconv.Unquote(spec.Path.Value)
			if err != nil {
				t.Fatal(err)
			}
			for _, prefix := range r.forbidden {
				if path == strings.TrimSuffix(prefix, "/") || strings.HasPrefix(path, strings.TrimSuffix(prefix, "/")+"/") {
					out = append(out, name+" imports "+path)
				}
			}
		}
	}
	if files == 0 {
		// a rule on a package that moved or was renamed would pass vacuously
		t.Fatalf("translator/%s: no Go files; update importRules", dir)
	}
	sort.Strings(out)
	return out
}
