package resource_test

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/egharness/egharness/translator/resource"
)

func configMap(name string) string {
	return fmt.Sprintf("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: %s, namespace: default}\n", name)
}

// nested is a ConfigMap whose data.v holds n-2 nested sequences, so that the document is
// n levels deep (the ConfigMap and data count as two).
func nested(n int) string {
	return configMap("deep") + "data:\n  v: " + strings.Repeat("[", n-2) + strings.Repeat("]", n-2) + "\n"
}

func wantLimit(t *testing.T, err error, limit, msg string) {
	t.Helper()
	var le *resource.LimitError
	if !errors.As(err, &le) {
		t.Fatalf("error %v (%T), want a *resource.LimitError", err, err)
	}
	if le.Limit != limit || err.Error() != msg {
		t.Errorf("error %q (limit %q)\nwant  %q (limit %q)", err.Error(), le.Limit, msg, limit)
	}
}

func TestLimitsDefaults(t *testing.T) {
	l := resource.Limits{}.Resolved()
	if l.MaxFileSize != 128<<20 || l.MaxObjects != 250000 || l.MaxDepth != 100 || l.MaxAliasExpansion != 8<<20 {
		t.Errorf("defaults %+v", l)
	}
	l = resource.Limits{MaxFileSize: -1, MaxObjects: 5, MaxDepth: -1, MaxAliasExpansion: 7}.Resolved()
	if l.MaxFileSize != -1 || l.MaxObjects != 5 || l.MaxDepth != -1 || l.MaxAliasExpansion != 7 {
		t.Errorf("set values changed: %+v", l)
	}
}

func TestDecodeFileSizeLimit(t *testing.T) {
	text := []byte(configMap("a"))
	_, err := resource.Decode("in.yaml", text,
		resource.Options{Limits: resource.Limits{MaxFileSize: int64(len(text)) - 1}})
	wantLimit(t, err, "file size",
		fmt.Sprintf("in.yaml: the file is over the file size limit of %d bytes (raise it with --max-file-size)", len(text)-1))
	if _, err := resource.Decode("in.yaml", text,
		resource.Options{Limits: resource.Limits{MaxFileSize: int64(len(text))}}); err != nil {
		t.Errorf("a file exactly at the limit: %v", err)
	}
	if _, err := resource.Decode("in.yaml", text, resource.Options{Limits: resource.Limits{MaxFileSize: -1}}); err != nil {
		t.Errorf("no limit: %v", err)
	}
}

func TestReadFileLimit(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "big.yaml")
	if err := os.WriteFile(path, []byte(strings.Repeat("#\n", 2048)), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := resource.ReadFile(path, resource.Limits{MaxFileSize: 4 << 10})
	if err != nil {
		t.Errorf("4 KiB file under a 4 KiB limit: %v", err)
	}
	_, err = resource.ReadFile(path, resource.Limits{MaxFileSize: 1 << 10})
	wantLimit(t, err, "file size", path+": the file is over the file size limit of 1 KiB (raise it with --max-file-size)")
	// A device is refused before it is read (it may never end).
	if _, err := resource.ReadFile("/dev/zero", resource.Limits{MaxFileSize: 1 << 20}); err == nil ||
		err.Error() != "/dev/zero: is a character device; only regular files are read (to read a pipe or a command's "+
			"output, give it on standard input with -f -)" {
		t.Errorf("/dev/zero: %v", err)
	}
	// Standard input that never ends is cut at the limit, not read forever.
	done := make(chan error, 1)
	go func() {
		_, err := resource.ReadAll("<stdin>", zeros{}, resource.Limits{MaxFileSize: 1 << 20})
		done <- err
	}()
	select {
	case err := <-done:
		wantLimit(t, err, "file size",
			"<stdin>: the file is over the file size limit of 1 MiB (raise it with --max-file-size)")
	case <-time.After(10 * time.Second):
		t.Fatal("reading an endless stdin did not stop at the limit")
	}
	if _, err := resource.ReadFile(filepath.Join(dir, "missing.yaml"), resource.Limits{}); !errors.Is(err,
		os.ErrNotExist) {
		t.Errorf("missing file: %v", err)
	}
	_, err = resource.ReadAll("<stdin>", strings.NewReader(strings.Repeat("x", 11)), resource.Limits{MaxFileSize: 10})
	wantLimit(t, err, "file size",
		"<stdin>: the file is over the file size limit of 10 bytes (raise it with --max-file-size)")
}

func TestDecodeObjectLimit(t *testing.T) {
	// Skipped kinds count: the limit bounds the work, whatever is kept.
	text := configMap(
		"a") + "---\napiVersion: apps/v1\nkind: Deployment\nmetadata: {name: d}\n---\n# the third\n" + configMap("c")
	dec, err := resource.Decode("in.yaml", []byte(text),
		resource.Options{SkipUnknownKinds: true, Limits: resource.Limits{MaxObjects: 2}})
	wantLimit(t, err, "object", "in.yaml:10: object 3 is over the object limit of 2 (raise it with --max-objects)")
	if len(dec.Objects) != 1 || len(dec.Notes) != 1 {
		t.Errorf("objects %d notes %d, want the two documents before the limit", len(dec.Objects), len(dec.Notes))
	}
	if _, err := resource.Decode("in.yaml", []byte(text),
		resource.Options{SkipUnknownKinds: true, Limits: resource.Limits{MaxObjects: 3}}); err != nil {
		t.Errorf("at the limit: %v", err)
	}
}

func TestDecodeDepthLimit(t *testing.T) {
	if _, err := resource.Decode("in.yaml", []byte(nested(100)), resource.Options{}); err == nil ||
		strings.Contains(err.Error(), "depth") {
		// 100 levels are allowed (and then data.v is refused as not a string).
		t.Errorf("100 levels: %v", err)
	}
	text := "# comment\n" + nested(101)
	_, err := resource.Decode("in.yaml", []byte(text), resource.Options{LineOffset: 10})
	wantLimit(t, err, "depth",
		"in.yaml:16: mappings and sequences nest deeper than the depth limit of 100 levels (raise it with --max-depth)")
	_, err = resource.Decode("in.yaml", []byte(nested(4)), resource.Options{Limits: resource.Limits{MaxDepth: 3}})
	wantLimit(t, err, "depth",
		"in.yaml:5: mappings and sequences nest deeper than the depth limit of 3 levels (raise it with --max-depth)")
	if _, err := resource.Decode("in.yaml", []byte(nested(150)),
		resource.Options{Limits: resource.Limits{MaxDepth: -1}}); err == nil || strings.Contains(err.Error(), "depth") {
		t.Errorf("no depth limit: %v", err)
	}
	// Depth reached through an alias names the alias.
	text = configMap("a") + "data:\n  x: &x [[[[1]]]]\n  y: [*x]\n"
	_, err = resource.Decode("in.yaml", []byte(text), resource.Options{Limits: resource.Limits{MaxDepth: 6}})
	wantLimit(t, err, "depth",
		"in.yaml:6: mappings and sequences nest deeper than the depth limit of 6 levels (raise it with --max-depth)")
}

// billionLaughs is nine levels of ten aliases: 10^9 strings once expanded.
func billionLaughs(indent string) string {
	var b strings.Builder
	b.WriteString(indent + "l0: &l0 \"lol\"\n")
	for i := 1; i <= 9; i++ {
		fmt.Fprintf(&b, "%sl%d: &l%d [%s]\n", indent, i, i,
			strings.TrimSuffix(strings.Repeat(fmt.Sprintf("*l%d, ", i-1), 10), ", "))
	}
	return b.String()
}

func TestDecodeAliasLimit(t *testing.T) {
	start := time.Now()
	text := configMap("lol") + "data:\n" + billionLaughs("  ")
	_, err := resource.Decode("in.yaml", []byte(text), resource.Options{})
	wantLimit(t, err, "alias expansion",
		"in.yaml:12: YAML aliases expand past the alias expansion limit of 8 MiB (raise it with --max-alias-expansion)")
	// One long string named many times: few nodes, many bytes.
	long := configMap("long") + "data:\n  a: &a \"" + strings.Repeat("x", 100000) + "\"\n  b: [" + strings.Repeat("*a, ",
		2000) + "*a]\n"
	_, err = resource.Decode("in.yaml", []byte(long), resource.Options{})
	wantLimit(t, err, "alias expansion",
		"in.yaml:6: YAML aliases expand past the alias expansion limit of 8 MiB (raise it with --max-alias-expansion)")
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("refusing alias bombs took %s", d)
	}

	// Modest aliases decode; the budget is one per file, spent across documents.
	small := configMap("%s") + "data:\n  a: &a \"0123456789\"\n  b: *a\n"
	two := fmt.Sprintf(small, "one") + "---\n" + fmt.Sprintf(small, "two")
	dec, err := resource.Decode("in.yaml", []byte(two), resource.Options{})
	if err != nil || len(dec.Objects) != 2 {
		t.Fatalf("small aliases: %v (%d objects)", err, len(dec.Objects))
	}
	_, err = resource.Decode("in.yaml", []byte(two), resource.Options{Limits: resource.Limits{MaxAliasExpansion: 20}})
	wantLimit(t, err, "alias expansion",
		"in.yaml:13: YAML aliases expand past the alias expansion limit of 20 bytes (raise it with --max-alias-expansion)")
	if _, err := resource.Decode("in.yaml", []byte(two),
		resource.Options{Limits: resource.Limits{MaxAliasExpansion: -1}}); err != nil {
		t.Errorf("no alias limit: %v", err)
	}
}

func TestDecodeAliasCycle(t *testing.T) {
	_, err := resource.Decode("in.yaml", []byte(configMap("c")+"data: &d {a: *d}\n"), resource.Options{})
	if err == nil || !strings.HasPrefix(err.Error(), "in.yaml:4: malformed YAML: ") {
		t.Errorf("error %v, want a malformed YAML error at line 4", err)
	}
}

func TestDecodeStopsAfterManyErrors(t *testing.T) {
	var docs []string
	for i := 0; i < 150; i++ {
		docs = append(docs, "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\n")
	}
	_, err := resource.Decode("in.yaml", []byte(strings.Join(docs, "---\n")), resource.Options{})
	lines := errLines(err)
	if len(lines) != 101 || lines[100] != "in.yaml:401: stopped reading after 100 errors" {
		t.Errorf("%d errors, last %q", len(lines), lines[len(lines)-1])
	}
}

func TestDecodeObjectLineSkipsLeadingComments(t *testing.T) {
	text := "# a Service\n\n# more words\n" + service + "---\n# another\n" + gwClass
	dec, errs := decode(t, text, resource.Options{})
	if len(errs) > 0 || len(dec.Objects) != 2 {
		t.Fatalf("errors %q, %d objects", errs, len(dec.Objects))
	}
	if dec.Objects[0].Line != 4 || dec.Objects[1].Line != 10 {
		t.Errorf("lines %d and %d, want 4 and 10 (each apiVersion)", dec.Objects[0].Line, dec.Objects[1].Line)
	}
}

func TestNotAMappingWording(t *testing.T) {
	_, errs := decode(t, "- a\n- b\n", resource.Options{})
	if msg := oneError(t, errs); !strings.HasSuffix(msg, "the document is an array, not a mapping") {
		t.Errorf("error %q", msg)
	}
}

func TestParseAndFormatSize(t *testing.T) {
	for in, want := range map[string]int64{"0": 0, "1024": 1024, "32MiB": 32 << 20, "32 MiB": 32 << 20, "64Mi": 64 << 20,
		"512KiB": 512 << 10, "1GiB": 1 << 30, "10MB": 10_000_000, "7B": 7, "-1": -1, "2k": 2048} {
		got, err := resource.ParseSize(in)
		if err != nil || got != want {
			t.Errorf("ParseSize(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for _, bad := range []string{"", "MiB", "12XB", "1.5MiB", "99999999999999999999", "9999999999GiB"} {
		if _, err := resource.ParseSize(bad); err == nil {
			t.Errorf("ParseSize(%q) accepted", bad)
		}
	}
	for n, want := range map[int64]string{32 << 20: "32 MiB", 512 << 10: "512 KiB", 1 << 30: "1 GiB", 1000: "1000 bytes",
		1: "1 byte", 1536: "1536 bytes"} {
		if got := resource.FormatSize(n); got != want {
			t.Errorf("FormatSize(%d) = %q, want %q", n, got, want)
		}
	}
}

// Old Mac (CR) and Windows (CRLF) line breaks: the same objects and the same lines as LF.
func TestDecodeLineBreaks(t *testing.T) {
	text := service + "---\n" + "apiVersion: v1\nkind: Service\nmetadata: {name: x}\nspec: [\n"
	for name, br := range map[string]string{"LF": "\n", "CRLF": "\r\n", "CR": "\r"} {
		dec, errs := decode(t, strings.ReplaceAll(text, "\n", br), resource.Options{})
		if len(dec.Objects) != 1 || dec.Objects[0].Line != 1 {
			t.Errorf("%s: objects %v", name, dec.Objects)
		}
		if msg := oneError(t, errs); msg != "in.yaml:9: malformed YAML: did not find expected node content" {
			t.Errorf("%s: error %q", name, msg)
		}
	}
}

// zeros is a reader that never ends.
type zeros struct{}

func (zeros) Read(p []byte) (int, error) { clear(p); return len(p), nil }
