// Package runner runs scenarios under their profiles against an implementation, in parallel,
// and gathers outcomes in a deterministic order.
package runner

import (
	"context"
	"fmt"
	"runtime"
	"runtime/debug"
	"slices"
	"sync"
	"time"

	"github.com/egharness/egharness/harness/check"
	"github.com/egharness/egharness/harness/golden"
	"github.com/egharness/egharness/harness/impl"
	"github.com/egharness/egharness/harness/scenario"
	"github.com/egharness/egharness/translator/profile"
	"github.com/egharness/egharness/translator/result"
)

// Options select and tune a run.
type Options struct {
	Impl impl.Implementation
	// Profiles, when set, keeps only these profiles of each scenario.
	Profiles []string
	// Labels, when set, keeps scenarios carrying one of these labels (or area).
	Labels []string
	// Focus, when set, keeps scenarios covering one of these behavior IDs.
	Focus []string
	// GoldenRoot is the golden folder; "" skips golden checks.
	GoldenRoot string
	// Parallel is the number of scenarios run at once (default: GOMAXPROCS).
	Parallel int
	// Progress, when set, is told of each finished outcome (in completion order).
	Progress func(done, total int, o *Outcome)
}

// Outcome is one scenario under one profile.
type Outcome struct {
	Scenario *scenario.Scenario
	Profile  string
	Result   *result.Result
	Failures []check.Failure
	// Err is a translation that did not complete (a panic, an adapter failure).
	Err      error
	Duration time.Duration
	// Skipped is why the implementation could not run the scenario (see impl.SkipError);
	// a skipped outcome neither passes nor fails.
	Skipped string
	// Compared is set for another implementation than the reference: its facts were
	// compared with the reference's (see package facts).
	Compared bool
	// Explained lists the recorded divergences that explain differences of this outcome.
	Explained []Explained
	// Envoy is the outcome of the real Envoy tier for this run, when it ran (see package
	// envoytier; a failure there is also an "envoy" failure).
	Envoy string
}

// Explained is a recorded divergence and the differences it explains.
type Explained struct {
	Divergence scenario.Divergence
	Items      []string
}

// Passed reports whether the outcome is clean (differences explained by a recorded
// divergence do not fail it).
func (o *Outcome) Passed() bool { return o.Err == nil && len(o.Failures) == 0 }

// Agrees reports whether the implementation agreed with the reference on every fact and
// expectation, without a divergence to explain.
func (o *Outcome) Agrees() bool { return o.Skipped == "" && o.Passed() && len(o.Explained) == 0 }

// Job is one scenario and profile to run.
type Job struct {
	Scenario *scenario.Scenario
	Profile  string
}

// Select lists the jobs opts keeps, in scenario then profile order.
func Select(set []*scenario.Scenario, opts Options) []Job {
	var jobs []Job
	for _, s := range set {
		if len(opts.Labels) > 0 && !overlaps(opts.Labels, append([]string{s.Area}, s.Labels...)) {
			continue
		}
		if len(opts.Focus) > 0 && !overlaps(opts.Focus, s.Covers) {
			continue
		}
		for _, p := range s.ProfilesOrDefault() {
			if len(opts.Profiles) > 0 && !slices.Contains(opts.Profiles, p) {
				continue
			}
			jobs = append(jobs, Job{Scenario: s, Profile: p})
		}
	}
	return jobs
}

func overlaps(a, b []string) bool {
	for _, x := range a {
		if slices.Contains(b, x) {
			return true
		}
	}
	return false
}

// Run runs the jobs; outcomes come back in job order whatever the parallelism. When ctx is
// cancelled (Ctrl-C) no further job starts, and Run returns the outcomes of the jobs that
// finished, in job order; a job cut short by the cancellation is left out.
func Run(ctx context.Context, jobs []Job, opts Options) []*Outcome {
	out := make([]*Outcome, len(jobs))
	n := opts.Parallel
	if n <= 0 {
		n = runtime.GOMAXPROCS(0)
	}
	var wg sync.WaitGroup
	var mu sync.Mutex
	done := 0
	next := make(chan int)
	for w := 0; w < n; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				o := RunOne(ctx, jobs[i], opts)
				if ctx.Err() != nil && o.Err != nil {
					continue // cut short by the cancellation: it did not finish
				}
				out[i] = o
				if opts.Progress != nil {
					mu.Lock()
					done++
					opts.Progress(done, len(jobs), o)
					mu.Unlock()
				}
			}
		}()
	}
dispatch:
	for i := range jobs {
		select {
		case next <- i:
		case <-ctx.Done():
			break dispatch
		}
	}
	close(next)
	wg.Wait()
	if ctx.Err() == nil {
		return out
	}
	// Cancelled (Ctrl-C): the outcomes of the jobs that finished, in job order.
	return slices.DeleteFunc(out, func(o *Outcome) bool { return o == nil })
}

// RunOne translates and checks one job. Nothing it meets stops other jobs: a panic becomes
// the outcome's error.
func RunOne(ctx context.Context, job Job, opts Options) (o *Outcome) {
	start := time.Now()
	o = &Outcome{Scenario: job.Scenario, Profile: job.Profile}
	defer func() {
		if r := recover(); r != nil {
			// The stack says where; the run goes on with the other jobs.
			o.Err = fmt.Errorf("panic while translating or checking [%s]: %v\n%s", job.Profile, r, debug.Stack())
		}
		o.Duration = time.Since(start)
	}()
	p, err := profile.Get(job.Profile)
	if err != nil {
		o.Err = err
		return o
	}
	s := job.Scenario
	caps := impl.CapabilitiesOf(opts.Impl)
	if !caps.Golden {
		comparePeer(ctx, o, p, opts.Impl)
		return o
	}
	res, err := opts.Impl.Translate(ctx,
		impl.Request{Scenario: s.Name, Objects: s.Objects, Config: s.Settings, Profile: p})
	if err != nil {
		o.Err = err
		return o
	}
	o.Result = res
	o.Failures = check.Run(s, job.Profile, res)
	if opts.GoldenRoot != "" && caps.Golden {
		files, err := golden.Render(res)
		if err != nil {
			o.Err = fmt.Errorf("rendering goldens: %w", err)
			return o
		}
		for _, d := range golden.Compare(golden.Dir(opts.GoldenRoot, s.Path, job.Profile), files) {
			o.Failures = append(o.Failures, check.Failure{Check: "golden", Where: d.File, Msg: d.Msg})
		}
	}
	return o
}
