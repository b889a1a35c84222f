package main

import (
	"bufio"
	"os"
	"runtime/debug"
	"runtime/metrics"
	"strconv"
	"strings"
	"time"
)

// batchGCPercent is the garbage collector's target for the batch commands. Admission by the
// API server's validators allocates several times an object's size for every object and
// keeps almost none of it, so with Go's default (100) a 10,000-route file spends a third of
// its CPU collecting (docs/performance.md). A short-lived process can let the heap grow
// further between collections while it is small.
const batchGCPercent = 400

// batchHeapFloor is the heap the batch commands may grow to at batchGCPercent: past it
// the soft memory limit keeps the heap at about twice what is live, which is where Go's
// default puts it. GOGC=400 alone let the 10k-route mix peak at 2.2 GB where the default
// peaks at 1.4 GB; a fixed 1 GiB limit made upgrade-check of that mix (1.8 GB live on two
// translations) collect without end, 1.5 times slower than the default.
const batchHeapFloor = 1 << 30

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
		avail := availableMemory()
		debug.SetMemoryLimit(memoryLimitFor(0, avail))
		go followLiveHeap(avail)
	}
}

// memoryLimitFor is the soft memory limit for a live heap: the floor, or twice the live
// heap once that is more (never a limit the live heap fills, where the collector would
// run without end), and at most half the memory the process may use when that is known
// and larger than the floor.
func memoryLimitFor(live, avail int64) int64 {
	limit := int64(batchHeapFloor)
	if 2*live > limit {
		limit = 2 * live
	}
	if avail > 0 && avail/2 < limit && avail/2 >= 2*live {
		limit = avail / 2
	}
	return limit
}

// followLiveHeap moves the memory limit with the live heap every 50 ms for the life of the
// process (a batch command ends with it).
func followLiveHeap(avail int64) {
	sample := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	last := int64(-1)
	for range time.Tick(50 * time.Millisecond) {
		metrics.Read(sample)
		if sample[0].Value.Kind() != metrics.KindUint64 {
			return
		}
		if limit := memoryLimitFor(int64(sample[0].Value.Uint64()), avail); limit != last {
			debug.SetMemoryLimit(limit)
			last = limit
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
