package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"
)

const invalidDir = "../../scenarios/invalid"

// execute runs the command in process as main would and returns its exit code, standard
// output and the message main prints after "egharness: ".
func execute(t *testing.T, stdin string, args ...string) (code int, stdout, msg string) {
	t.Helper()
	root := newRoot()
	var out, errOut bytes.Buffer
	root.SetArgs(args)
	root.SetOut(&out)
	root.SetErr(&errOut)
	root.SetIn(strings.NewReader(stdin))
	err := root.Execute()
	if err == nil {
		return 0, out.String(), ""
	}
	var ee *exitError
	if errors.As(err, &ee) {
		return ee.code, out.String(), ee.err.Error()
	}
	return exitBad, out.String(), err.Error()
}

// Each scenarios/invalid/<case>.resources.yaml is a raw object file that translate must
// refuse with exit code 2 and exactly the message in <case>.resources.error (the file's
// path written FILE); the message names the file and, when the file has lines, the line.
// A case with a <case>.resources.refused file instead is input the API server reads and
// refuses (a field of the wrong type in a CRD's kind): translate prints the result, and
// the object's admission verdict is that message, word for word.
func TestTranslateInvalidInputs(t *testing.T) {
	files, err := filepath.Glob(filepath.Join(invalidDir, "*.resources.yaml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no raw-object cases under %s (%v)", invalidDir, err)
	}
	for _, f := range files {
		name := strings.TrimSuffix(filepath.Base(f), ".resources.yaml")
		t.Run(name, func(t *testing.T) {
			if refused, err := os.ReadFile(strings.TrimSuffix(f, ".yaml") + ".refused"); err == nil {
				code, stdout, msg := execute(t, "", "translate", "-f", f, "-o", "json")
				var out struct {
					Admission []struct {
						Allowed bool   `json:"allowed"`
						Message string `json:"message"`
					} `json:"admission"`
				}
				if code != 0 || json.Unmarshal([]byte(stdout), &out) != nil {
					t.Fatalf("exit %d (%q), output %.300s: want the translation with a refusal", code, msg, stdout)
				}
				if len(out.Admission) != 1 || out.Admission[0].Allowed ||
					out.Admission[0].Message != strings.TrimRight(string(refused), "\n") {
					t.Errorf("admission %+v, want one refusal:\n%s", out.Admission, refused)
				}
				return
			}
			want, err := os.ReadFile(strings.TrimSuffix(f, ".yaml") + ".error")
			if err != nil {
				t.Fatalf("every case needs its .error file: %v", err)
			}
			code, stdout, msg := execute(t, "", "translate", "-f", f, "-o", "json")
			if code != exitBad {
				t.Errorf("exit code %d, want %d (bad input); stdout %.300s", code, exitBad, stdout)
			}
			if stdout != "" {
				t.Errorf("printed a result for bad input: %.300s", stdout)
			}
			got := strings.ReplaceAll(msg, f, "FILE")
			if w := strings.TrimRight(string(want), "\n"); got != w {
				t.Errorf("message\n%s\nwant\n%s", got, w)
			}
			where := regexp.MustCompile(`^FILE:[0-9]+: `)
			if data, _ := os.ReadFile(f); len(data) == 0 {
				where = regexp.MustCompile(`^FILE: `)
			}
			if !where.MatchString(got) {
				t.Errorf("message %q does not start with %s", got, where)
			}
		})
	}
}

func TestTranslateStdinNamesIt(t *testing.T) {
	code, _, msg := execute(t, "apiVersion: v1\nkind: Service\nmetadata: {name: [x}\n", "translate", "-f", "-")
	if code != exitBad || msg != "<stdin>:3: malformed YAML: did not find expected ',' or ']'" {
		t.Errorf("exit %d, message %q", code, msg)
	}
}

func TestTranslateLimitFlags(t *testing.T) {
	three := strings.Repeat("---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: c%d}\n", 1)
	var objs []string
	for i := 0; i < 3; i++ {
		objs = append(objs, strings.Replace(three, "%d", string(rune('a'+i)), 1))
	}
	input := strings.Join(objs, "")
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"--max-objects", "2"}, "<stdin>:10: object 3 is over the object limit of 2 (raise it with --max-objects)"},
		{[]string{"--max-file-size", "64B"},
			"<stdin>: the file is over the file size limit of 64 bytes (raise it with --max-file-size)"},
		{[]string{"--max-depth", "1"},
			"<stdin>:4: mappings and sequences nest deeper than the depth limit of 1 level (raise it with --max-depth)\n" +
				"<stdin>:8: mappings and sequences nest deeper than the depth limit of 1 level (raise it with --max-depth)\n" +
				"<stdin>:12: mappings and sequences nest deeper than the depth limit of 1 level (raise it with --max-depth)"},
	}
	for _, tt := range tests {
		code, _, msg := execute(t, input, append([]string{"translate", "-f", "-"}, tt.args...)...)
		if code != exitBad || msg != tt.want {
			t.Errorf("%v: exit %d, message %q, want %q", tt.args, code, msg, tt.want)
		}
	}
	// The same input within its limits translates.
	if code, out, msg := execute(t, input, "translate", "-f", "-", "--max-objects", "3", "--max-file-size", "1KiB",
		"--max-depth", "2"); code != 0 || out == "" {
		t.Errorf("within limits: exit %d, message %q", code, msg)
	}
	// -1 lifts a limit.
	if code, _, msg := execute(t, input, "translate", "-f", "-", "--max-objects", "-1", "--max-file-size",
		"-1"); code != 0 {
		t.Errorf("no limits: exit %d, message %q", code, msg)
	}
	if code, _, msg := execute(t, input, "translate", "-f", "-", "--max-file-size", "lots"); code != exitBad ||
		!strings.Contains(msg, `size "lots"`) {
		t.Errorf("bad size: exit %d, message %q", code, msg)
	}
}

func TestTranslateAliasFlag(t *testing.T) {
	input := "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\ndata:\n  a: &a \"0123456789\"\n  b: *a\n  c: *a\n"
	code, _, msg := execute(t, input, "translate", "-f", "-", "--max-alias-expansion", "20")
	if want := "<stdin>:7: YAML aliases expand past the alias expansion limit of 20 bytes (raise " +
		"it with --max-alias-expansion)"; code != exitBad ||
		msg != want {
		t.Errorf("exit %d, message %q, want %q", code, msg, want)
	}
	if code, _, msg := execute(t, input, "translate", "-f", "-"); code != 0 {
		t.Errorf("default limit: exit %d, message %q", code, msg)
	}
}

// run skips scenarios/invalid when it walks the scenarios folder, and loads it (and fails
// with exit 2) when it is named.
func TestRunSkipsInvalidUnlessNamed(t *testing.T) {
	t.Chdir("../..") // run reads scenarios/ and golden/ from the repository root
	code, out, msg := execute(t, "", "run", "--profile", "v1.9", "--label", "naming", "scenarios")
	if code != 0 || strings.Contains(out, "invalid") {
		t.Errorf("run scenarios: exit %d (%s)\n%s", code, msg, out)
	}
	code, out, _ = execute(t, "", "run", "scenarios/invalid")
	if code != exitBad || !strings.Contains(out, "scenarios/invalid/truncated-yaml.yaml:5: malformed YAML") {
		t.Errorf("run scenarios/invalid: exit %d\n%s", code, out)
	}
	code, out, _ = execute(t, "", "run", "--max-depth", "3", "scenarios/routing/weighted-canary.yaml")
	if code != exitBad ||
		!strings.Contains(out, "nest deeper than the depth limit of 3 levels (raise it with --max-depth)") {
		t.Errorf("run --max-depth 3: exit %d\n%s", code, out)
	}
}

// -f naming a named pipe is refused at once (it used to block forever); stdin still reads.
func TestTranslateRefusesFIFO(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "objects.yaml")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		code, _, msg := execute(t, "", "translate", "-f", fifo)
		if want := fifo + ": is a named pipe (FIFO); only regular files are read (to read a pipe or a command's output, " +
			"give it on standard input with -f -)"; code != exitBad ||
			msg != want {
			t.Errorf("exit %d, %q\nwant 2, %q", code, msg, want)
		}
	}()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("translate -f FIFO blocked")
	}
}
