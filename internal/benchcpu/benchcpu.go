// Package benchcpu measures what one call of a benchmark body costs in a steady state, for
// the checks that compare two input sizes (issue: scale and speed: ten times the routes may
// cost at most twelve times the time).
package benchcpu

import (
	"runtime"
	"slices"
	"syscall"
	"testing"
	"time"
)

// Cost is what one call took: elapsed (wall) time and the process's CPU time (user + system,
// the garbage collector's workers on the other cores included).
type Cost struct {
	Wall, CPU time.Duration
}

// Steady measures one call of f in a steady state: after a warm-up call, f runs back to back
// until a second has passed (three calls at least) and the average over those calls is one
// window; the median of three windows counts, so that neither a window slowed by another
// process nor one where the collector happened to run less decides. A window that long makes
// every size pay its share of collections, where timing a single call right after a forced
// collection lets a small input finish before the collector has to run.
func Steady(b *testing.B, f func()) Cost {
	f()
	walls := make([]time.Duration, 3)
	cpus := make([]time.Duration, 3)
	for i := range walls {
		runtime.GC()
		start, startCPU := time.Now(), Used(b)
		runs := 0
		for runs < 3 || time.Since(start) < time.Second {
			f()
			runs++
		}
		walls[i] = time.Since(start) / time.Duration(runs)
		cpus[i] = (Used(b) - startCPU) / time.Duration(runs)
	}
	slices.Sort(walls)
	slices.Sort(cpus)
	return Cost{Wall: walls[1], CPU: cpus[1]}
}

// Used is the CPU time the process has used so far.
func Used(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// CheckRatio reports the ratios of large to small in wall time ("10x-ratio", the issue's
// measure: what a user waits) and in CPU time ("10x-cpu-ratio", which also counts the
// collector's work on an otherwise idle core), with the times themselves, and fails the
// benchmark when ten times the input took more than limit times the wall time.
func CheckRatio(b *testing.B, small, large Cost, limit float64) {
	ratio := float64(large.Wall) / float64(small.Wall)
	b.ReportMetric(ratio, "10x-ratio")
	b.ReportMetric(float64(large.CPU)/float64(small.CPU), "10x-cpu-ratio")
	b.ReportMetric(ms(small.Wall), "ms-small")
	b.ReportMetric(ms(large.Wall), "ms-large")
	b.ReportMetric(ms(small.CPU), "ms-cpu-small")
	b.ReportMetric(ms(large.CPU), "ms-cpu-large")
	if ratio > limit {
		b.Errorf("10x the routes took %.1fx the time (%v against %v; at most %gx)", ratio, large.Wall, small.Wall, limit)
	}
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
