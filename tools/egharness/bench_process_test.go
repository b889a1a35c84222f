package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// processCost is one run of the egharness binary as a user runs it: wall time, CPU time
// (user + system) and peak resident memory, from the process's own accounting.
type processCost struct {
	wall, cpu time.Duration
	peakMB    float64
	stderr    string
}

// buildBinary builds egharness once into the benchmark's temporary folder.
func buildBinary(b *testing.B) string {
	b.Helper()
	bin := filepath.Join(b.TempDir(), "egharness")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		b.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// runProcess runs the binary with args, its output discarded; exit code 1 (a breaking
// upgrade finding) is a result, not a failure.
func runProcess(b *testing.B, bin string, args ...string) processCost {
	b.Helper()
	cmd := exec.Command(bin, args...)
	// The binary tunes its own collector (gc.go) unless these are set: measure that.
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "GOGC=") && !strings.HasPrefix(kv, "GOMEMLIMIT=") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	devnull, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
	if err != nil {
		b.Fatal(err)
	}
	defer devnull.Close()
	var stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = devnull, &stderr
	start := time.Now()
	err = cmd.Run()
	wall := time.Since(start)
	if ee, ok := err.(*exec.ExitError); err != nil && (!ok || ee.ExitCode() != 1) {
		b.Fatalf("%s %v: %v\n%s", bin, args, err, lastLines(stderr.String(), 20))
	}
	ru := cmd.ProcessState.SysUsage().(*syscall.Rusage)
	return processCost{
		wall:   wall,
		cpu:    time.Duration(ru.Utime.Nano() + ru.Stime.Nano()),
		peakMB: float64(ru.Maxrss) / 1024, // kilobytes on Linux
		stderr: stderr.String(),
	}
}

// lastLines is the end of a command's standard error, for a failure's message.
func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	return strings.Join(lines[max(len(lines)-n, 0):], "\n")
}

// stageCPU reads the CPU seconds of each stage from the --timings table at the end of a
// command's standard error, keyed as benchmark units ("admission-cpu-s"...): where a whole
// command's time goes, in the benchmark's own output.
func stageCPU(stderr string) map[string]float64 {
	out := map[string]float64{}
	table := stderr[max(strings.LastIndex(stderr, "\nstage "), 0):]
	for _, line := range strings.Split(table, "\n") {
		// name  1.23 s  2.34 s  456 MB: the stage name may hold spaces
		f := strings.Fields(line)
		if len(f) < 7 || f[len(f)-1] != "MB" || f[len(f)-3] != "s" {
			continue
		}
		cpu, err := strconv.ParseFloat(f[len(f)-4], 64)
		if err != nil {
			continue
		}
		name := strings.NewReplacer(" ", "-", "(", "", ")", "").Replace(strings.Join(f[:len(f)-6], " "))
		out[name+"-cpu-s"] = cpu
	}
	return out
}

func (c processCost) report(b *testing.B) {
	b.ReportMetric(c.wall.Seconds(), "wall-s")
	b.ReportMetric(c.cpu.Seconds(), "cpu-s")
	b.ReportMetric(c.peakMB, "peak-MB")
}

// BenchmarkMixCommands runs every command users run on a dump, as a process, on the
// realistic mix (routegen -mix) of 1,000 and 10,000 routes: translate in both formats and
// upgrade-check v1.8 → v1.9 in every format. Each reports wall and CPU seconds and the
// peak resident memory of the last run (translate -o json also each stage's CPU seconds,
// from its --timings table), and each command's growth from 1k to 10k routes
// (at most 11 times the CPU time and the peak memory, as issue 21 asks).
func BenchmarkMixCommands(b *testing.B) {
	bin := buildBinary(b)
	files := map[int]string{1000: routesFile(b, 1000, "-mix"), 10000: routesFile(b, 10000, "-mix")}
	commands := []struct {
		name string
		args []string
	}{
		{"translate-json", []string{"translate", "-o", "json", "--timings"}},
		{"translate-yaml", []string{"translate"}},
		{"upgrade-check-text", []string{"upgrade-check", "--from", "v1.8", "--to", "v1.9"}},
		{"upgrade-check-json", []string{"upgrade-check", "--from", "v1.8", "--to", "v1.9", "-o", "json"}},
		{"upgrade-check-markdown", []string{"upgrade-check", "--from", "v1.8", "--to", "v1.9", "-o", "markdown"}},
		{"upgrade-check-html", []string{"upgrade-check", "--from", "v1.8", "--to", "v1.9", "-o", "html"}},
	}
	last := map[string]processCost{}
	for _, n := range []int{1000, 10000} {
		for _, c := range commands {
			name := fmt.Sprintf("%s-%dk", c.name, n/1000)
			b.Run(name, func(b *testing.B) {
				var cost processCost
				for b.Loop() {
					cost = runProcess(b, bin, append(c.args, "-f", files[n])...)
				}
				cost.report(b)
				for unit, v := range stageCPU(cost.stderr) {
					b.ReportMetric(v, unit)
				}
				last[name] = cost
			})
		}
	}
	// Growth: ten times the routes may cost at most eleven times the CPU time and the peak
	// memory, for every command (CPU rather than wall time: it does not follow what else
	// the machine runs).
	for _, c := range commands {
		small, large := last[c.name+"-1k"], last[c.name+"-10k"]
		if small.cpu <= 0 || large.cpu <= 0 {
			continue
		}
		b.Run(c.name+"-growth", func(b *testing.B) {
			for b.Loop() {
			}
			cpu, mem := large.cpu.Seconds()/small.cpu.Seconds(), large.peakMB/small.peakMB
			b.ReportMetric(large.wall.Seconds()/small.wall.Seconds(), "10x-wall-ratio")
			b.ReportMetric(cpu, "10x-cpu-ratio")
			b.ReportMetric(mem, "10x-peak-ratio")
			if cpu > 11 || mem > 11 {
				b.Errorf("10x the routes took %.1fx the CPU time and %.1fx the memory (at most 11x)", cpu, mem)
			}
		})
	}
}

// BenchmarkRouteCommands is the admission issue's measure: `translate -o json` as a process
// on one Gateway with 1,000 and 10,000 HTTPRoutes (routegen -n), every object admitted by
// the real CRDs, the collector as the binary sets it (GOGC and GOMEMLIMIT unset). Targets:
// under 1 s and under 5 s on a quiet 2-core machine.
func BenchmarkRouteCommands(b *testing.B) {
	bin := buildBinary(b)
	for _, n := range []int{1000, 10000} {
		file := routesFile(b, n)
		b.Run(fmt.Sprintf("translate-json-%dk", n/1000), func(b *testing.B) {
			var cost processCost
			for b.Loop() {
				cost = runProcess(b, bin, "translate", "-o", "json", "-f", file)
			}
			cost.report(b)
		})
	}
}
