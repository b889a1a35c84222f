package stagetime

import (
	"bytes"
	"testing"
	"time"
)

// fakeClock advances by one step per sample: a second of wall, two of CPU, 10 MB more peak.
func fakeClock() func() sample {
	var s sample
	s.at = time.Unix(0, 0)
	return func() sample {
		s.at = s.at.Add(time.Second)
		s.cpu += 2 * time.Second
		s.peakRSS += 10_000_000
		return s
	}
}

func TestStagesEndWhereTheNextBegins(t *testing.T) {
	r := &Recorder{now: fakeClock()}
	r.opened = r.now()
	r.Begin("decode")
	r.Begin("admission")
	r.Begin("print json")
	got := r.Done()
	want := []string{"decode", "admission", "print json"}
	if len(got) != len(want) {
		t.Fatalf("stages %+v, want %v", got, want)
	}
	for i, s := range got {
		if s.Name != want[i] || s.Wall != time.Second || s.CPU != 2*time.Second {
			t.Errorf("stage %d = %+v, want %s of 1 s wall and 2 s CPU", i, s, want[i])
		}
	}
	if got[2].PeakRSS != 50_000_000 {
		t.Errorf("peak at the last stage's end = %d, want 50 MB", got[2].PeakRSS)
	}
}

func TestWritePrintsEveryStageAndTheTotal(t *testing.T) {
	r := &Recorder{now: fakeClock()}
	r.opened = r.now()
	r.Begin("read and decode")
	r.Begin("admission")
	var out bytes.Buffer
	if err := r.Write(&out); err != nil {
		t.Fatal(err)
	}
	want := "" +
		"stage                 wall        CPU  peak memory\n" +
		"read and decode     1.00 s     2.00 s        30 MB\n" +
		"admission           1.00 s     2.00 s        40 MB\n" +
		"total               2.00 s     4.00 s        40 MB\n"
	if out.String() != want {
		t.Errorf("got\n%s\nwant\n%s", out.String(), want)
	}
}

func TestNilRecorderRecordsNothing(t *testing.T) {
	var r *Recorder
	r.Begin("admission")
	if got := r.Done(); got != nil {
		t.Errorf("nil recorder returned %v", got)
	}
	var out bytes.Buffer
	if err := r.Write(&out); err != nil || out.Len() != 0 {
		t.Errorf("nil recorder wrote %q, %v", out.String(), err)
	}
}

func TestProcessSampleCountsCPU(t *testing.T) {
	before := processSample()
	deadline := time.Now().Add(50 * time.Millisecond)
	for n := 0; time.Now().Before(deadline); n++ {
		_ = n * n
	}
	after := processSample()
	if after.cpu <= before.cpu {
		t.Errorf("CPU time did not grow over 50 ms of work: %v then %v", before.cpu, after.cpu)
	}
	if after.peakRSS <= 0 {
		t.Errorf("peak resident memory %d, want more than 0", after.peakRSS)
	}
}
