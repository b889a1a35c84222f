package main

import (
	"runtime/debug"
	"testing"
)

// TestTuneGC: batch commands raise the collector's target, serve keeps Go's, and a GOGC
// the user sets wins.
func TestTuneGC(t *testing.T) {
	defer debug.SetGCPercent(debug.SetGCPercent(100))
	defer debug.SetMemoryLimit(debug.SetMemoryLimit(-1))
	cases := []struct {
		gogc string
		args []string
		want int
	}{
		{"", []string{"translate", "-f", "x.yaml"}, batchGCPercent},
		{"", []string{"--profile", "v1.8", "run"}, batchGCPercent},
		{"", []string{"serve", "-f", "x.yaml"}, 100},
		{"150", []string{"translate"}, 100},
	}
	for _, c := range cases {
		t.Setenv("GOGC", c.gogc)
		debug.SetGCPercent(100)
		tuneGC(c.args)
		if got := debug.SetGCPercent(100); got != c.want {
			t.Errorf("GOGC=%q %v: GC percent %d, want %d", c.gogc, c.args, got, c.want)
		}
	}
	if got := batchMemoryLimit(64 << 30); got != batchMemorySoftCap {
		t.Errorf("64 GiB machine: limit %d, want the %d cap", got, batchMemorySoftCap)
	}
	if got := batchMemoryLimit(1 << 30); got != 512<<20 {
		t.Errorf("1 GiB container: limit %d, want half of it", got)
	}
	if got := batchMemoryLimit(0); got != batchMemorySoftCap {
		t.Errorf("unknown memory: limit %d, want the cap", got)
	}
	if availableMemory() <= 0 {
		t.Error("no memory figure read from the cgroup or /proc/meminfo")
	}
}
