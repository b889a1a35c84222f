package main

import (
	"bytes"
	"strings"
	"testing"
)

// --timings adds a table of the stages on standard error and changes nothing on standard
// output: a user can time a real dump without changing what a script reads from it.
func TestTranslateTimingsGoToStderr(t *testing.T) {
	for _, format := range []string{"json", "yaml"} {
		run := func(extra ...string) (string, string) {
			root := newRoot()
			var out, errOut bytes.Buffer
			root.SetOut(&out)
			root.SetErr(&errOut)
			root.SetArgs(append([]string{"translate", "-f", "testdata/route-left-out.yaml", "-o", format}, extra...))
			if err := root.Execute(); err != nil {
				t.Fatalf("translate -o %s %v: %v", format, extra, err)
			}
			return out.String(), errOut.String()
		}
		plain, _ := run()
		timed, table := run("--timings")
		if plain != timed {
			t.Errorf("-o %s: --timings changed standard output", format)
		}
		stages := []string{"read and decode", "admission", "gatewayapi", "policy", "xds", "patch"}
		if format == "json" {
			stages = append(stages, "print json")
		} else {
			stages = append(stages, "print json (for yaml)", "print yaml")
		}
		stages = append(stages, "total")
		lines := strings.Split(strings.TrimSuffix(table, "\n"), "\n")
		if len(lines) != len(stages)+1 || !strings.HasPrefix(lines[0], "stage ") {
			t.Fatalf("-o %s: timings table\n%s\nwant a header and the rows %q", format, table, stages)
		}
		for i, s := range stages {
			row := lines[i+1]
			if !strings.HasPrefix(row, s+"  ") || strings.Count(row, " s ") < 1 || !strings.HasSuffix(row, " MB") {
				t.Errorf("-o %s: row %d is %q, want stage %q with times and memory", format, i+1, row, s)
			}
		}
	}
}

// The mix benchmark reads each stage's CPU seconds from the table, after the warnings.
func TestStageCPUReadsTheTimingsTable(t *testing.T) {
	stderr := "warning: stage 1 s of nothing\n" +
		"stage                    wall        CPU  peak memory\n" +
		"read and decode        0.26 s     0.49 s       160 MB\n" +
		"print json (for yaml)  0.39 s     0.74 s       484 MB\n" +
		"total                  0.65 s     1.23 s       484 MB\n"
	got := stageCPU(stderr)
	want := map[string]float64{"read-and-decode-cpu-s": 0.49, "print-json-for-yaml-cpu-s": 0.74, "total-cpu-s": 1.23}
	if len(got) != len(want) {
		t.Fatalf("got %v, want %v", got, want)
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s = %v, want %v", k, got[k], v)
		}
	}
}
