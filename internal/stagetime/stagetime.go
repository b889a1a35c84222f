// Package stagetime records where a long command spends its time, stage by stage: the wall
// time, the process's CPU time (user + system, every core and the collector included) and
// the peak resident memory so far. `egharness translate --timings` prints it, so that a user
// with a large dump sees which stage is slow without a profiler, and the mix benchmarks
// report each stage (docs/performance.md).
package stagetime

import (
	"fmt"
	"io"
	"sync"
	"syscall"
	"time"
)

// Stages is what a pipeline tells as each of its stages begins; the one before ends there.
// A *Recorder is one (a nil one too: it records nothing).
type Stages interface{ Begin(stage string) }

// Begin tells s, when there is one, that the stage begins.
func Begin(s Stages, stage string) {
	if s != nil {
		s.Begin(stage)
	}
}

// Recorder is told when each stage begins; a stage ends where the next one begins or at
// Done. A nil *Recorder records nothing, so stages can call Begin without asking.
type Recorder struct {
	mu     sync.Mutex
	now    func() sample // the clock and the process counters; replaced in tests
	open   string
	opened sample
	stages []Stage
}

// Stage is one finished stage.
type Stage struct {
	Name string
	Wall time.Duration
	CPU  time.Duration
	// PeakRSS is the process's peak resident memory at the stage's end, in bytes (it only
	// grows, so the stage that raised it is the one where it first reaches its final value).
	PeakRSS int64
}

type sample struct {
	at      time.Time
	cpu     time.Duration
	peakRSS int64
}

// New starts recording; the first stage begins with the first Begin.
func New() *Recorder {
	r := &Recorder{now: processSample}
	r.opened = r.now()
	return r
}

// Begin ends the stage in progress and begins the named one.
func (r *Recorder) Begin(name string) {
	if r == nil {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.closeOpen(r.now())
	r.open = name
}

// Done ends the stage in progress and returns every stage in order.
func (r *Recorder) Done() []Stage {
	if r == nil {
		return nil
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.closeOpen(r.now())
	r.open = ""
	return append([]Stage(nil), r.stages...)
}

// closeOpen records the stage in progress as ending at s.
func (r *Recorder) closeOpen(s sample) {
	if r.open != "" {
		r.stages = append(r.stages,
			Stage{Name: r.open, Wall: s.at.Sub(r.opened.at), CPU: s.cpu - r.opened.cpu, PeakRSS: s.peakRSS})
	}
	r.opened = s
}

// Write ends the stage in progress and prints a table of the stages and their total.
func (r *Recorder) Write(w io.Writer) error {
	stages := r.Done()
	if r == nil {
		return nil
	}
	width := len("total")
	for _, s := range stages {
		width = max(width, len(s.Name))
	}
	row := func(name, wall, cpu, peak string) error {
		_, err := fmt.Fprintf(w, "%-*s  %9s  %9s  %11s\n", width, name, wall, cpu, peak)
		return err
	}
	if err := row("stage", "wall", "CPU", "peak memory"); err != nil {
		return err
	}
	var wall, cpu time.Duration
	var peak int64
	for _, s := range stages {
		if err := row(s.Name, seconds(s.Wall), seconds(s.CPU), megabytes(s.PeakRSS)); err != nil {
			return err
		}
		wall, cpu, peak = wall+s.Wall, cpu+s.CPU, max(peak, s.PeakRSS)
	}
	return row("total", seconds(wall), seconds(cpu), megabytes(peak))
}

func seconds(d time.Duration) string { return fmt.Sprintf("%.2f s", d.Seconds()) }

func megabytes(b int64) string { return fmt.Sprintf("%d MB", (b+500_000)/1_000_000) }

// processSample reads the clock, the process's CPU time and its peak resident memory
// (getrusage: Linux reports ru_maxrss in KiB). Where getrusage fails the counters read 0
// and only wall times are meaningful.
func processSample() sample {
	s := sample{at: time.Now()}
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err == nil {
		s.cpu = time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
		s.peakRSS = int64(ru.Maxrss) * 1024
	}
	return s
}
