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
	const gib = int64(1) << 30
	for _, c := range []struct{ live, avail, want int64 }{
		{0, 64 * gib, gib},               // a small heap grows to the floor
		{gib / 4, 64 * gib, gib},         // still the floor
		{3 * gib / 2, 64 * gib, 3 * gib}, // past it: twice the live heap, never less
		{gib / 4, gib, gib / 2},          // a 1 GiB container: half of it
		{gib / 2, gib, gib},              // ... unless the live heap needs more
		{0, 0, gib},                      // memory unknown
	} {
		if got := memoryLimitFor(c.live, c.avail); got != c.want {
			t.Errorf("live %d, available %d: limit %d, want %d", c.live, c.avail, got, c.want)
		}
	}
	if availableMemory() <= 0 {
		t.Error("no memory figure read from the cgroup or /proc/meminfo")
	}
}
