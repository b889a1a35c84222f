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
// further between collections; the soft memory limit (batchMemoryLimit) keeps the peak
// near what Go's default reaches.
const batchGCPercent = 400

// batchMemorySoftCap is the heap size past which the collector of a batch command works as
// hard as Go's default again (and harder): GOGC=400 alone let the 10k-route mix peak at
// 2.2 GB where Go's default peaks at 1.4 GB; with this cap it peaks at 1.15 GB and still
// spends less CPU than the default (docs/performance.md). A larger input's heap goes past
// it; Go then bounds the collector to half of the CPU.
const batchMemorySoftCap = 1 << 30

// batchMemoryLimit is the soft memory limit of a batch command: the cap, or half the
// memory the process may use when that is less (0: unknown).
func batchMemoryLimit(avail int64) int64 {
	if avail > 0 && avail/2 < batchMemorySoftCap {
		return avail / 2
	}
	return batchMemorySoftCap
}

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
		debug.SetMemoryLimit(batchMemoryLimit(availableMemory()))
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
