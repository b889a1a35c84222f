package main

import (
	"fmt"
	"os"
	"runtime/pprof"
)

// startProfile writes a CPU profile of the whole process to the file EGHARNESS_CPUPROFILE
// names, for `go tool pprof bin/egharness FILE` (docs/performance.md): the benchmarks show
// what a command costs, a profile of the user's own input shows where. The returned stop
// flushes it; without the variable it does nothing.
func startProfile() (stop func()) {
	path := os.Getenv("EGHARNESS_CPUPROFILE")
	if path == "" {
		return func() {}
	}
	f, err := os.Create(path)
	if err != nil {
		fmt.Fprintln(os.Stderr, "egharness: EGHARNESS_CPUPROFILE:", err)
		return func() {}
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		fmt.Fprintln(os.Stderr, "egharness: EGHARNESS_CPUPROFILE:", err)
		f.Close()
		return func() {}
	}
	return func() {
		pprof.StopCPUProfile()
		f.Close()
	}
}
