package main

import (
	"bufio"
	"os"
	"runtime/debug"
	"strconv"
	"strings"
)

// batchGCPercent is the garbage collector's target for the batch commands. Admission by the
// API server's validators allocates several times an object's size for every object and
// keeps almost none of it, so with Go's default (100) a 10,000-route file spends a third of
// its CPU collecting (docs/performance.md). A short-lived process can let the heap grow
// further between collections; the memory limit below keeps it from growing past what the
// machine has.
const batchGCPercent = 400

// tuneGC sets the collector for a batch command, unless the user set GOGC or GOMEMLIMIT
// (theirs win) or the command is `serve`, which runs for hours and keeps Go's defaults.
func tuneGC(args []string) {
	for _, a := range args {
		if a == "serve" {
			return
		}
		if !strings.HasPrefix(a, "-") {
			break // the first word that is not a flag is the command
		}
	}
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(batchGCPercent)
	}
	if os.Getenv("GOMEMLIMIT") == "" {
		if avail := availableMemory(); avail > 0 {
			// Half of it: the collector works harder as the heap nears this, well before
			// the machine (or the container) runs out.
			debug.SetMemoryLimit(avail / 2)
		}
	}
}

// availableMemory is the memory this process may use, in bytes: its cgroup's limit when
// it has one (a container, a CI job), else the machine's; 0 when neither can be read.
func availableMemory() int64 {
	if b, err := os.ReadFile("/sys/fs/cgroup/memory.max"); err == nil {
		if n, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64); err == nil && n > 0 {
			return n
		}
	}
	f, err := os.Open("/proc/meminfo")
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) >= 2 && fields[0] == "MemTotal:" {
			if kb, err := strconv.ParseInt(fields[1], 10, 64); err == nil {
				return kb * 1024
			}
		}
	}
	return 0
}
