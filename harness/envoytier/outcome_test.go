package envoytier

import (
	"errors"
	"testing"
)

var errTest = errors.New("envoy did not ACK")

func TestSummaryLine(t *testing.T) {
	outs := []*Outcome{
		{Scenario: "a", Version: "1-x", Acked: true,
			Requests: []Request{{}, {VsChecker: []string{"d"}}, {NotReplayed: "why"}}},
		{Scenario: "b", Version: "2-x", Nack: "Listener: bad"},
		{Scenario: "c", Err: errTest, Requests: []Request{{NotReplayed: "Envoy did not accept the xDS"}}},
		{Scenario: "d", Version: "3-x", Nack: "Listener: no module", NackRecorded: "no module file"},
		{Scenario: "e", Version: "4-x", Acked: true, Requests: []Request{{VsScenario: []string{"x"}, Recorded: "known"}}},
	}
	s := Summarize("1.39.3", outs)
	want := "real Envoy 1.39.3: 4 scenarios served (2 ACKed, 2 NACKed), 3 requests replayed (1 " +
		"agree, 2 disagree), 2 not replayed"
	if s.String() != want {
		t.Errorf("got  %s\nwant %s", s, want)
	}
	for i, passed := range []bool{false, false, false, true, true} {
		if outs[i].Passed() != passed {
			t.Errorf("%s: Passed() = %v", outs[i].Scenario, !passed)
		}
	}
	if s.Failed != 3 {
		t.Errorf("failed %d", s.Failed)
	}
	if v := outs[3].Verdict(); v != "NACK (recorded)" {
		t.Errorf("verdict %q", v)
	}
}
