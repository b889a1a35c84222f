package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/egharness/egharness/harness/envoytier"
	"github.com/egharness/egharness/harness/golden"
)

var updateDocs = flag.Bool("update-docs", false, "rewrite the sample outputs in README.md and docs/*.md (make docs)")

// sampleRE finds a generated sample in a Markdown file: a marker naming the egharness
// arguments (optionally "| head -N" or "| tail -N"), the output, and an end marker.
var sampleRE = regexp.MustCompile(`(?s)<!-- sample: (.*?) -->\n(.*?)<!-- sample:end -->`)

// Every sample output in the README and docs/ is what the tool prints today: the test runs
// each marked command from the repository root and compares; `make docs` rewrites them.
// So a sample cannot go stale.
func TestDocSamples(t *testing.T) {
	t.Chdir("../..")
	// The samples are of offline runs: an Envoy named by the environment would add the real
	// Envoy tier's lines to them.
	t.Setenv(envoytier.EnvVar, "")
	files, err := filepath.Glob("docs/*.md")
	if err != nil {
		t.Fatal(err)
	}
	files = append([]string{"README.md"}, files...)
	samples := 0
	for _, file := range files {
		data, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		text := string(data)
		var failed bool
		out := sampleRE.ReplaceAllStringFunc(text, func(m string) string {
			sub := sampleRE.FindStringSubmatch(m)
			samples++
			want, err := renderSample(t, sub[1])
			if err != nil {
				t.Errorf("%s: sample %q: %v", file, sub[1], err)
				failed = true
				return m
			}
			if sub[2] != want && !*updateDocs {
				t.Errorf("%s: the sample of `egharness %s` is stale (run make docs):\n--- in the file\n%s\n--- the tool prints\n%s",
					file, sub[1], sub[2], want)
			}
			return "<!-- sample: " + sub[1] + " -->\n" + want + "<!-- sample:end -->"
		})
		if *updateDocs && !failed && out != text {
			if err := golden.WriteFileAtomic(file, []byte(out)); err != nil {
				t.Fatal(err)
			}
			t.Logf("updated %s", file)
		}
	}
	if samples == 0 {
		t.Error("no generated samples in README.md or docs/: the sample markers are gone")
	}
}

// renderSample runs egharness with spec's arguments in process and fences what it prints.
func renderSample(t *testing.T, spec string) (string, error) {
	args, filter, _ := strings.Cut(spec, " | ")
	fields := strings.Fields(args)
	code, stdout, msg := execute(t, "", fields...)
	lines := strings.Split(strings.TrimRight(stdout, "\n"), "\n")
	if filter != "" {
		f := strings.Fields(filter)
		if len(f) != 2 || (f[0] != "head" && f[0] != "tail") || !strings.HasPrefix(f[1], "-") {
			return "", fmt.Errorf("filter %q: want head -N or tail -N", filter)
		}
		n, err := strconv.Atoi(f[1][1:])
		if err != nil || n <= 0 {
			return "", fmt.Errorf("filter %q: want head -N or tail -N", filter)
		}
		if len(lines) > n {
			if f[0] == "head" {
				lines = append(lines[:n], "…")
			} else {
				lines = append([]string{"…"}, lines[len(lines)-n:]...)
			}
		}
	}
	var b strings.Builder
	b.WriteString("```text\n$ egharness " + spec + "\n")
	b.WriteString(strings.Join(lines, "\n") + "\n")
	if msg != "" {
		b.WriteString("egharness: " + msg + "\n")
	}
	if code != 0 {
		fmt.Fprintf(&b, "(exit status %d)\n", code)
	}
	b.WriteString("```\n")
	return b.String(), nil
}
