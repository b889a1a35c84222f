package report_test

import (
	"bytes"
	"encoding/xml"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/onsi/ginkgo/v2/reporters"
	confv1 "sigs.k8s.io/gateway-api/conformance/apis/v1"

	"github.com/egharness/egharness/harness/catalog"
	"github.com/egharness/egharness/harness/check"
	"github.com/egharness/egharness/harness/report"
	"github.com/egharness/egharness/harness/runner"
	"github.com/egharness/egharness/harness/scenario"
	"github.com/egharness/egharness/translator/resource"
)

func outcome(name, area, kind string, covers []string) *runner.Outcome {
	s := &scenario.Scenario{Name: name, Area: area, Covers: covers, File: "scenarios/" + area + "/" + name + ".yaml"}
	s.Objects = []resource.Object{{Kind: "Gateway"}, {Kind: kind}}
	return &runner.Outcome{Scenario: s, Profile: "v1.9", Duration: time.Second}
}

func outcomes() []*runner.Outcome {
	pass := outcome("a-pass", "routing", "HTTPRoute", []string{"RT-01"})
	fail := outcome("b-fail", "routing", "HTTPRoute", []string{"RT-01", "RT-02"})
	fail.Failures = []check.Failure{{Check: "facts", Where: "routes x", Msg: "differs"}}
	skip := outcome("c-skip", "routing", "Backend", []string{"RT-07"})
	skip.Skipped = "cannot say it"
	ext := outcome("d-ext", "routing", "HTTPRouteFilter", []string{"RT-12"})
	div := outcome("e-div", "tls", "HTTPRoute", []string{"TLS-01"})
	div.Explained = []runner.Explained{{Divergence: scenario.Divergence{Reason: "drops timestamps"},
		Items: []string{"routes y"}}}
	errd := outcome("f-err", "tls", "HTTPRoute", []string{"TLS-02"})
	errd.Err = errors.New("exit status 2\npanic")
	return []*runner.Outcome{pass, fail, skip, ext, div, errd}
}

func TestConformance(t *testing.T) {
	rep := report.Conformance(outcomes(), report.Implementation{Project: "p"}, time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC),
		"v1.6.1")
	if rep.Kind != "ConformanceReport" || rep.Date != "2026-01-02T03:04:05Z" || len(rep.ProfileReports) != 2 {
		t.Fatalf("report: %+v", rep)
	}
	routing, tls := rep.ProfileReports[0], rep.ProfileReports[1]
	if routing.Name != "routing" || routing.Core.Result != confv1.Failure || routing.Core.Passed != 1 ||
		routing.Core.Failed != 1 ||
		strings.Join(routing.Core.FailedTests, ",") != "b-fail" {
		t.Errorf("routing core: %+v", routing.Core)
	}
	ext := routing.Extended
	if ext == nil || ext.Result != confv1.Partial || ext.Passed != 1 || ext.Skipped != 1 ||
		strings.Join(ext.SupportedFeatures, ",") != "HTTPRouteFilter" || len(ext.UnsupportedFeatures) != 0 {
		t.Errorf("routing extended: %+v", ext)
	}
	// A known divergence is no pass: skipped with its reason; an error fails.
	if tls.Core.Passed != 0 || tls.Core.Skipped != 1 || tls.Core.Failed != 1 || tls.Core.Result != confv1.Failure ||
		tls.Extended != nil ||
		strings.Join(tls.Core.SkippedTests, ",") != "e-div (known divergence: drops timestamps)" {
		t.Errorf("tls: %+v", tls)
	}
}

func TestConformanceDivergedFeatureNotSupported(t *testing.T) {
	pass := outcome("a-pass", "policy", "SecurityPolicy", []string{"SP-01"})
	div := outcome("b-div", "policy", "SecurityPolicy", []string{"SP-03"})
	div.Explained = []runner.Explained{{Divergence: scenario.Divergence{Reason: "prints no\nsecrets"},
		Items: []string{"secrets z"}}}
	other := outcome("c-pass", "policy", "HTTPRouteFilter", []string{"RT-12"})
	rep := report.Conformance([]*runner.Outcome{pass, div, other}, report.Implementation{Project: "p"}, time.Unix(0, 0),
		"v1.6.1")
	ext := rep.ProfileReports[0].Extended
	if ext == nil || ext.Result != confv1.Partial || ext.Passed != 2 || ext.Skipped != 1 ||
		strings.Join(ext.SupportedFeatures, ",") != "HTTPRouteFilter" || len(ext.UnsupportedFeatures) != 0 ||
		strings.Join(ext.SkippedTests, ",") != "b-div (known divergence: prints no secrets)" {
		t.Errorf("extended: %+v", ext)
	}
	if !strings.Contains(rep.ProfileReports[0].Summary, "not reported supported, known divergences: SecurityPolicy") {
		t.Errorf("summary: %s", rep.ProfileReports[0].Summary)
	}
}

func TestJUnit(t *testing.T) {
	var buf bytes.Buffer
	if err := report.JUnit(&buf, outcomes(), "egctl@v1.9.1"); err != nil {
		t.Fatal(err)
	}
	var got reporters.JUnitTestSuites
	if err := xml.Unmarshal(buf.Bytes(), &got); err != nil {
		t.Fatalf("not JUnit XML: %v\n%s", err, buf.String())
	}
	if got.Tests != 6 || got.Failures != 1 || got.Errors != 1 || len(got.TestSuites) != 2 {
		t.Fatalf("totals: %+v", got)
	}
	cases := map[string]reporters.JUnitTestCase{}
	for _, s := range got.TestSuites {
		for _, c := range s.TestCases {
			cases[c.Name] = c
		}
	}
	if c := cases["b-fail"]; c.Failure == nil || !strings.Contains(c.Failure.Description, "routes x: differs") {
		t.Errorf("b-fail: %+v", c)
	}
	if c := cases["c-skip"]; c.Skipped == nil || c.Skipped.Message != "cannot say it" {
		t.Errorf("c-skip: %+v", c)
	}
	if c := cases["e-div"]; c.Status != "passed" || !strings.Contains(c.SystemOut, "known divergence: drops timestamps") {
		t.Errorf("e-div: %+v", c)
	}
	if c := cases["f-err"]; c.Error == nil || c.Error.Message != "exit status 2" {
		t.Errorf("f-err: %+v", c)
	}
}

func TestAgreement(t *testing.T) {
	cat, err := catalog.Load()
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	report.Agreement(&buf, cat, outcomes(), "egctl@v1.9.1")
	out := buf.String()
	for _, want := range []string{
		"6 scenario runs, 2 agree, 1 diverge for a recorded reason, 1 skipped, 2 fail",
		"| RT-01 | routing | 2 | 1 | 0 | 0 | 1 |",
		"| RT-07 | routing | 1 | 0 | 0 | 1 | 0 |",
		"| TLS-01 | tls | 1 | 0 | 1 | 0 | 0 |",
		"- **e-div** [v1.9], known divergence: drops timestamps",
		"- **c-skip** [v1.9], skipped: cannot say it",
		"- **b-fail** [v1.9], FAILS",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("agreement lacks %q:\n%s", want, out)
		}
	}
}

// A run's outcome through real Envoy goes into its test case and its area's summary.
func TestEnvoyOutcomeInReports(t *testing.T) {
	outs := outcomes()
	outs[0].Envoy = "a [v1.9]: pass (version 1-x, 2 of 2 requests replayed, 2 agree)"
	outs[1].Envoy = "b [v1.9]: NACK"
	outs[1].Failures = append(outs[1].Failures, check.Failure{Check: "envoy", Msg: "b [v1.9]: NACK"})
	var buf bytes.Buffer
	if err := report.JUnit(&buf, outs, "reference"); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(buf.String(), "real Envoy: a [v1.9]: pass") {
		t.Errorf("JUnit has no real Envoy outcome:\n%s", buf.String())
	}
	rep := report.Conformance(outs, report.Implementation{}, time.Unix(0, 0), "v1.6.1")
	found := false
	for _, p := range rep.ProfileReports {
		found = found || strings.Contains(p.Summary, "through real Envoy: 2 runs, 1 failed")
	}
	if !found {
		t.Errorf("no real Envoy summary: %+v", rep.ProfileReports)
	}
}
