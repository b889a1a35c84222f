package resource_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
	"unicode/utf16"

	"github.com/egharness/egharness/translator/resource"
)

const twoServices = `apiVersion: v1
kind: Service
metadata: {name: a, namespace: ns}
---
apiVersion: v1
kind: Service
metadata: {name: b, namespace: ns}
`

func utf16Bytes(s string, bigEndian, bom bool) []byte {
	units := utf16.Encode([]rune(s))
	if bom {
		units = append([]uint16{0xFEFF}, units...)
	}
	out := make([]byte, 0, 2*len(units))
	for _, u := range units {
		if bigEndian {
			out = append(out, byte(u>>8), byte(u))
		} else {
			out = append(out, byte(u), byte(u>>8))
		}
	}
	return out
}

// readVia writes data to a file and reads it back as every command does.
func readVia(t *testing.T, data []byte) (string, []byte, error) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "dump.yaml")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := resource.ReadFile(path, resource.Limits{})
	return path, out, err
}

func names(t *testing.T, file string, data []byte) []string {
	t.Helper()
	dec, err := resource.Decode(file, data, resource.Options{})
	if err != nil {
		t.Fatalf("decode: %v", err)
	}
	var out []string
	for _, o := range dec.Objects {
		out = append(out, o.Ref().String())
	}
	return out
}

func TestReadEncodings(t *testing.T) {
	want := "Service/ns/a,Service/ns/b"
	for _, tc := range []struct {
		name string
		data []byte
	}{
		{"utf-8", []byte(twoServices)},
		{"utf-8 with BOM", append([]byte{0xEF, 0xBB, 0xBF}, twoServices...)},
		{"utf-16le with BOM", utf16Bytes(twoServices, false, true)},
		{"utf-16be with BOM", utf16Bytes(twoServices, true, true)},
		{"utf-16le with BOM and CRLF", utf16Bytes(strings.ReplaceAll(twoServices, "\n", "\r\n"), false, true)},
		// two files with BOMs, concatenated with cat
		{"utf-8 parts with BOMs", []byte("\uFEFF" + strings.Replace(twoServices, "---\n", "---\n\uFEFF", 1))},
		{"json parts with BOMs",
			[]byte("\uFEFF" + `{"apiVersion": "v1", "kind": "Service", "metadata": {"name": "a", "namespace": "ns"}}` +
				"\n\uFEFF" + `{"apiVersion": "v1", "kind": "Service", "metadata": {"name": "b", "namespace": "ns"}}` + "\n")},
		{"utf-16le parts with BOMs", append(utf16Bytes(strings.SplitAfter(twoServices, "---\n")[0], false, true),
			utf16Bytes(strings.SplitAfter(twoServices, "---\n")[1], false, true)...)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path, data, err := readVia(t, tc.data)
			if err != nil {
				t.Fatalf("read: %v", err)
			}
			if got := strings.Join(names(t, path, data), ","); got != want {
				t.Errorf("objects %s, want %s", got, want)
			}
		})
	}
	// Standard input is read the same way.
	data, err := resource.ReadAll("<stdin>", strings.NewReader(string(utf16Bytes(twoServices, false, true))),
		resource.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(names(t, "<stdin>", data), ","); got != want {
		t.Errorf("stdin: objects %s, want %s", got, want)
	}
}

func TestReadRefusesBinary(t *testing.T) {
	for _, tc := range []struct {
		name string
		data []byte
		want string // after "PATH"
	}{
		{"utf-16 without BOM", utf16Bytes(twoServices, false, false),
			": the file looks like UTF-16 text without a byte-order mark; save it as UTF-8 (or " +
				"UTF-16 with a BOM) and try again"},
		{"gzip", []byte{0x1f, 0x8b, 0x08, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x03, 0xff, 0xee},
			":1: byte 0x8B at offset 1 is not UTF-8: this is not UTF-8 or UTF-16 text (a binary file, or Latin-1?); " +
				"save it as UTF-8 and try again"},
		{"nul on line 3", []byte("apiVersion: v1\nkind: Service\nmeta\x00data: {}\n"),
			":3: a NUL byte: this is not a text file (YAML or JSON in UTF-8 or UTF-16)"},
		{"latin-1", []byte("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: caf\xe9}\n"),
			":3: byte 0xE9 at offset 51 is not UTF-8: this is not UTF-8 or UTF-16 text (a binary file, or Latin-1?); " +
				"save it as UTF-8 and try again"},
		{"utf-32", []byte{0xFF, 0xFE, 0, 0, 'a', 0, 0, 0},
			": the file is UTF-32 text; save it as UTF-8 (or UTF-16) and try again"},
		{"odd utf-16", append(utf16Bytes("a: b\n", false, true), 'x'),
			": the file starts with a UTF-16 byte-order mark but has an odd number of bytes (it is cut short, or not UTF-16)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path, _, err := readVia(t, tc.data)
			if err == nil || err.Error() != path+tc.want {
				t.Errorf("got  %v\nwant %s", err, path+tc.want)
			}
		})
	}
}

func TestReadRefusesNonRegular(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	hint := "; only regular files are read (to read a pipe or a command's output, give it on standard input with -f -)"
	for _, tc := range []struct{ path, what string }{
		{fifo, "a named pipe (FIFO)"},
		{"/dev/null", "a character device"},
	} {
		done := make(chan error, 1)
		go func() { _, err := resource.ReadFile(tc.path, resource.Limits{}); done <- err }()
		select {
		case err := <-done:
			if want := tc.path + ": is " + tc.what + hint; err == nil || err.Error() != want {
				t.Errorf("%s:\n got  %v\n want %s", tc.path, err, want)
			}
		case <-time.After(5 * time.Second):
			t.Fatalf("reading %s blocked", tc.path)
		}
	}
	if _, err := resource.ReadFile(dir, resource.Limits{}); err == nil ||
		err.Error() != dir+": is a directory; only regular files are read (name a file in it)" {
		t.Errorf("a directory: %v", err)
	}
}

// kubectl get … -o json, once per kind, appended to one file.
func TestDecodeJSONStream(t *testing.T) {
	svc := func(name string) string {
		b, _ := json.MarshalIndent(map[string]any{"apiVersion": "v1", "kind": "Service",
			"metadata": map[string]any{"name": name, "namespace": "ns"}}, "", "    ")
		return string(b)
	}
	list := `{
    "apiVersion": "v1",
    "kind": "List",
    "items": [` + svc("c") + `, ` + svc("d") + `]
}`
	text := svc("a") + "\n" + svc("b") + svc("x") + "\n\n" + list + "\n"
	got := strings.Join(names(t, "in.json", []byte(text)), ",")
	if want := "Service/ns/a,Service/ns/b,Service/ns/x,Service/ns/c,Service/ns/d"; got != want {
		t.Errorf("objects %s\nwant    %s", got, want)
	}
	// Errors name the line of the value they are in.
	bad := svc("a") + "\n" + strings.Replace(svc("b"), `"namespace": "ns"`, `"namespace": "ns", "bogus": 1`, 1) + "\n"
	_, err := resource.Decode("in.json", []byte(bad), resource.Options{})
	if err == nil || !strings.HasPrefix(err.Error(), "in.json:14: Service ns/b:") ||
		!strings.Contains(err.Error(), "bogus") {
		t.Errorf("unknown field in the second value: %v", err)
	}
	// A broken value after good ones is reported on its own line, the good ones kept.
	broken := svc("a") + "\n{\n  \"apiVersion\": \"v1\",\n  \"kind\": \n"
	dec, err := resource.Decode("in.json", []byte(broken), resource.Options{})
	if len(dec.Objects) != 1 || err == nil || !strings.HasPrefix(err.Error(), "in.json:") ||
		strings.HasPrefix(err.Error(), "in.json:1:") {
		t.Errorf("broken second value: %d objects, %v", len(dec.Objects), err)
	}
	// JSON then YAML after a separator.
	mixed := svc("a") + "\n---\n" + "apiVersion: v1\nkind: Service\nmetadata: {name: yy, namespace: ns}\n"
	if got := strings.Join(names(t, "in.yaml", []byte(mixed)), ","); got != "Service/ns/a,Service/ns/yy" {
		t.Errorf("JSON then YAML: %s", got)
	}
}

// A JSON array of objects is refused with how to make it a List.
func TestDecodeJSONArrayHint(t *testing.T) {
	_, err := resource.Decode("in.json", []byte(`[{"apiVersion": "v1", "kind": "Service", "metadata": {"name": "a"}}]`),
		resource.Options{})
	if err == nil ||
		!strings.Contains(err.Error(),
			`are read once wrapped as a List: {"apiVersion": "v1", "kind": "List", "items": [...]}`) {
		t.Errorf("%v", err)
	}
}
