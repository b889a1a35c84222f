package envoytier

import (
	"fmt"
	"strings"
	"time"
)

// Outcome is one scenario (under one profile) through real Envoy.
type Outcome struct {
	Scenario, Profile, File string
	// Version is the snapshot version served.
	Version string
	// Acked: Envoy accepted every type of the version. Nack is Envoy's error_detail
	// when it refused one ("<type>: <message>").
	Acked bool
	Nack  string
	// NackRecorded is the reason of the scenario's recorded divergence for real Envoy
	// (impl envoy@<version>, fact "nack") that explains the NACK: a refusal the machine
	// cannot avoid (a dynamic module's file that only EG's image ships).
	NackRecorded string
	// Err is a failure of the tier itself for this scenario (no ACK in time, Envoy
	// exited, a stand-in that did not start).
	Err      error
	Requests []Request
	Duration time.Duration
	// Notes are things the run met that do not change the verdict (Envoy started again).
	Notes []string
}

// Request is one traffic expectation sent (or not) through Envoy.
type Request struct {
	Index int
	Name  string
	// NotReplayed says why the request was not sent ("" when it was).
	NotReplayed string
	// Live is what Envoy answered; Offline what the route checker says.
	Live, Offline string
	// VsChecker and VsScenario are the differences of the live answer from the route
	// checker's answer and from the scenario's expectation.
	VsChecker, VsScenario []string
	// Recorded is the reason of the scenario's recorded divergence for real Envoy that
	// explains a disagreement (fact expect.traffic[i]); it still counts as a disagreement.
	Recorded string
}

// Replayed reports whether the request was sent.
func (r *Request) Replayed() bool { return r.NotReplayed == "" }

// Agrees reports whether a replayed request's answer matched both.
func (r *Request) Agrees() bool {
	return r.Replayed() && len(r.VsChecker) == 0 && len(r.VsScenario) == 0
}

// Served reports whether the translation went to Envoy.
func (o *Outcome) Served() bool { return o.Version != "" }

// Passed: no tier error, no NACK that a divergence does not record, and every replayed
// request agreed (or its disagreement is recorded).
func (o *Outcome) Passed() bool {
	if o.Err != nil || (o.Nack != "" && o.NackRecorded == "") {
		return false
	}
	for i := range o.Requests {
		if r := &o.Requests[i]; r.Replayed() && !r.Agrees() && r.Recorded == "" {
			return false
		}
	}
	return true
}

// Verdict is a one-word outcome: pass, FAIL, NACK, ERROR or "not served".
func (o *Outcome) Verdict() string {
	switch {
	case o.Err != nil:
		return "ERROR"
	case o.Nack != "" && o.NackRecorded != "":
		return "NACK (recorded)"
	case o.Nack != "":
		return "NACK"
	case !o.Passed():
		return "FAIL"
	case !o.Served():
		return "not served"
	}
	return "pass"
}

// Describe is the outcome in a few lines: what was served, each request that disagreed (the
// live answer and both references), and with verbose each request not replayed and why.
// It holds no timing, so reports that carry it stay the same run after run.
func (o *Outcome) Describe(verbose bool) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s [%s]: %s", o.Scenario, o.Profile, o.Verdict())
	switch {
	case o.Served():
		agree, sent := 0, 0
		for i := range o.Requests {
			if o.Requests[i].Replayed() {
				sent++
				if o.Requests[i].Agrees() {
					agree++
				}
			}
		}
		fmt.Fprintf(&b, " (version %s, %d of %d requests replayed, %d agree)", o.Version, sent, len(o.Requests), agree)
	}
	if o.Err != nil {
		fmt.Fprintf(&b, "\n    error: %s", indent(o.Err.Error()))
	}
	for _, n := range o.Notes {
		fmt.Fprintf(&b, "\n    note: %s", indent(n))
	}
	if o.Nack != "" {
		fmt.Fprintf(&b, "\n    Envoy refused the xDS: %s", indent(o.Nack))
		if o.NackRecorded != "" {
			fmt.Fprintf(&b, "\n    recorded divergence: %s", indent(strings.TrimSpace(o.NackRecorded)))
		}
	}
	for i := range o.Requests {
		r := &o.Requests[i]
		name := fmt.Sprintf("traffic[%d]", r.Index)
		if r.Name != "" {
			name += " " + r.Name
		}
		switch {
		case !r.Replayed():
			if verbose {
				fmt.Fprintf(&b, "\n    %s not replayed: %s", name, r.NotReplayed)
			}
		case !r.Agrees():
			if r.Recorded != "" && !verbose {
				fmt.Fprintf(&b, "\n    %s disagrees (recorded divergence)", name)
				continue
			}
			fmt.Fprintf(&b, "\n    %s disagrees\n      live Envoy:    %s\n      route checker: %s", name, r.Live, r.Offline)
			if r.Recorded != "" {
				fmt.Fprintf(&b, "\n      recorded divergence: %s", indent(strings.TrimSpace(r.Recorded)))
			}
			for _, d := range r.VsChecker {
				fmt.Fprintf(&b, "\n      vs route checker: %s", d)
			}
			for _, d := range r.VsScenario {
				fmt.Fprintf(&b, "\n      vs scenario:      %s", d)
			}
		}
	}
	return b.String()
}

func indent(s string) string { return strings.ReplaceAll(s, "\n", "\n      ") }

// Summary counts a run's outcomes.
type Summary struct {
	Version                                string
	Served, Acked, Nacked                  int
	Replayed, Agree, Disagree, NotReplayed int
	Failed                                 int
}

// Summarize counts outcomes.
func Summarize(version string, outs []*Outcome) Summary {
	s := Summary{Version: version}
	for _, o := range outs {
		if o.Served() {
			s.Served++
			if o.Acked {
				s.Acked++
			}
			if o.Nack != "" {
				s.Nacked++
			}
		}
		if !o.Passed() {
			s.Failed++
		}
		for i := range o.Requests {
			r := &o.Requests[i]
			switch {
			case !r.Replayed():
				s.NotReplayed++
			case r.Agrees():
				s.Replayed++
				s.Agree++
			default:
				s.Replayed++
				s.Disagree++
			}
		}
	}
	return s
}

// String is the summary line `egharness run --envoy` prints before its totals.
func (s Summary) String() string {
	return fmt.Sprintf(
		"real Envoy %s: %d scenarios served (%d ACKed, %d NACKed), %d requests replayed (%d agree, "+
			"%d disagree), %d not replayed",
		s.Version, s.Served, s.Acked, s.Nacked, s.Replayed, s.Agree, s.Disagree, s.NotReplayed)
}
