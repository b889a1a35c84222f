// Package report turns a run's outcomes into reports for people and machines: a Gateway
// API style ConformanceReport (profiles are behavior areas), JUnit XML for CI systems, and
// the table of agreement per behavior ID between an implementation and the reference.
package report

import (
	"encoding/xml"
	"fmt"
	"io"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/onsi/ginkgo/v2/reporters"
	confv1 "sigs.k8s.io/gateway-api/conformance/apis/v1"

	"github.com/egharness/egharness/harness/catalog"
	"github.com/egharness/egharness/harness/runner"
)

// Test names one outcome in reports: the scenario, with its profile when it runs under
// several.
func Test(o *runner.Outcome) string {
	if len(o.Scenario.ProfilesOrDefault()) > 1 {
		return o.Scenario.Name + " [" + o.Profile + "]"
	}
	return o.Scenario.Name
}

// coreKinds are the kinds of Gateway API and core Kubernetes: a scenario made only of these
// tests core behavior; one that uses Envoy Gateway's own kinds (Backend, HTTPRouteFilter,
// the policies, EnvoyPatchPolicy...) tests extended behavior.
var coreKinds = map[string]bool{
	"GatewayClass": true, "Gateway": true, "ListenerSet": true, "HTTPRoute": true, "GRPCRoute": true,
	"TLSRoute": true, "TCPRoute": true, "UDPRoute": true, "ReferenceGrant": true, "BackendTLSPolicy": true,
	"Namespace": true, "Service": true, "EndpointSlice": true, "Secret": true, "ConfigMap": true,
}

// ExtensionKinds lists the Envoy Gateway kinds a scenario uses (empty for a core scenario).
func ExtensionKinds(o *runner.Outcome) []string {
	var out []string
	for _, obj := range o.Scenario.Objects {
		if !coreKinds[obj.Kind] && !slices.Contains(out, obj.Kind) {
			out = append(out, obj.Kind)
		}
	}
	sort.Strings(out)
	return out
}

// Implementation describes the implementation under test in a ConformanceReport.
type Implementation = confv1.Implementation

// Conformance builds a ConformanceReport: one profile per behavior area, core results from
// scenarios of Gateway API kinds only, extended results from scenarios that use Envoy
// Gateway's kinds. Those kinds are the features: supported when every scenario run of them
// passed without a recorded divergence, unsupported when one failed (a skipped run says
// nothing either way). A run that passes only through recorded divergences is counted as
// skipped, its reasons in SkippedTests, and keeps its features out of SupportedFeatures
// (the summary names them).
func Conformance(outcomes []*runner.Outcome, im Implementation, date time.Time,
	gatewayAPIVersion string) *confv1.ConformanceReport {
	rep := &confv1.ConformanceReport{
		Implementation:    im,
		Date:              date.UTC().Format(time.RFC3339),
		GatewayAPIVersion: gatewayAPIVersion,
		Mode:              "default",
		GatewayAPIChannel: "experimental",
	}
	rep.APIVersion, rep.Kind = "gateway.networking.k8s.io/v1", "ConformanceReport"
	type area struct {
		core, ext         confv1.Status
		hasExt            bool
		supported, broken map[string]bool
		diverged          map[string]bool // features with a run that diverges for a recorded reason
		scenarios         int
		envoy, envoyFail  int // runs through real Envoy, and those that failed there
	}
	areas := map[string]*area{}
	var names []string
	for _, o := range outcomes {
		a := areas[o.Scenario.Area]
		if a == nil {
			a = &area{supported: map[string]bool{}, broken: map[string]bool{}, diverged: map[string]bool{}}
			areas[o.Scenario.Area] = a
			names = append(names, o.Scenario.Area)
		}
		a.scenarios++
		if o.Envoy != "" {
			a.envoy++
			for _, f := range o.Failures {
				if f.Check == "envoy" {
					a.envoyFail++
					break
				}
			}
		}
		st := &a.core
		kinds := ExtensionKinds(o)
		if len(kinds) > 0 {
			st, a.hasExt = &a.ext, true
		}
		diverged := o.Skipped == "" && o.Passed() && len(o.Explained) > 0
		switch {
		case o.Skipped != "":
			st.Skipped++
			st.SkippedTests = append(st.SkippedTests, Test(o))
		case !o.Passed():
			st.Failed++
			st.FailedTests = append(st.FailedTests, Test(o))
		case diverged:
			// A recorded divergence is the implementation not doing what the reference
			// does, for a known reason: not a pass. It counts as skipped, with the reason.
			st.Skipped++
			st.SkippedTests = append(st.SkippedTests, Test(o)+" (known divergence: "+divergenceReasons(o)+")")
		default:
			st.Passed++
		}
		for _, k := range kinds {
			switch {
			case o.Skipped != "": // not run: says nothing of the feature
			case diverged:
				a.diverged[k] = true
			case o.Passed():
				a.supported[k] = true
			default:
				a.broken[k] = true
			}
		}
	}
	sort.Strings(names)
	for _, n := range names {
		a := areas[n]
		a.core.Result = result(a.core)
		pr := confv1.ProfileReport{Name: n, Core: a.core,
			Summary: fmt.Sprintf("%d scenario runs of area %s: core %s, %d passed, %d failed, %d skipped", a.scenarios, n,
				a.core.Result, a.core.Passed, a.core.Failed, a.core.Skipped)}
		if a.hasExt {
			a.ext.Result = result(a.ext)
			ext := &confv1.ExtendedStatus{Status: a.ext}
			for k := range a.broken {
				ext.UnsupportedFeatures = append(ext.UnsupportedFeatures, k)
			}
			for k := range a.supported {
				if !a.broken[k] && !a.diverged[k] {
					ext.SupportedFeatures = append(ext.SupportedFeatures, k)
				}
			}
			var diverged []string
			for k := range a.diverged {
				if !a.broken[k] {
					diverged = append(diverged, k)
				}
			}
			sort.Strings(ext.SupportedFeatures)
			sort.Strings(ext.UnsupportedFeatures)
			sort.Strings(diverged)
			pr.Extended = ext
			pr.Summary += fmt.Sprintf("; extended %s, %d passed, %d failed, %d skipped", a.ext.Result, a.ext.Passed,
				a.ext.Failed, a.ext.Skipped)
			if len(diverged) > 0 {
				pr.Summary += "; not reported supported, known divergences: " + strings.Join(diverged, ", ")
			}
		}
		if a.envoy > 0 {
			pr.Summary += fmt.Sprintf("; through real Envoy: %d runs, %d failed", a.envoy, a.envoyFail)
		}
		rep.ProfileReports = append(rep.ProfileReports, pr)
	}
	return rep
}

// result follows Gateway API's rule: failure when a test failed, partial when one was
// skipped, success otherwise.
func result(s confv1.Status) confv1.Result {
	switch {
	case s.Failed > 0:
		return confv1.Failure
	case s.Skipped > 0:
		return confv1.Partial
	}
	return confv1.Success
}

// JUnit writes the outcomes as JUnit XML: one test suite per area, one test case per
// scenario run (classname the area, the implementation as a property). Failures carry each
// failed check; skips their reason; explained divergences are passes whose system-out
// names them.
func JUnit(w io.Writer, outcomes []*runner.Outcome, impl string) error {
	suites := reporters.JUnitTestSuites{}
	byArea := map[string]*reporters.JUnitTestSuite{}
	var order []string
	for _, o := range outcomes {
		s := byArea[o.Scenario.Area]
		if s == nil {
			s = &reporters.JUnitTestSuite{Name: o.Scenario.Area, Package: "scenarios/" + o.Scenario.Area,
				Properties: reporters.JUnitProperties{Properties: []reporters.JUnitProperty{{Name: "implementation", Value: impl}}}}
			byArea[o.Scenario.Area] = s
			order = append(order, o.Scenario.Area)
		}
		tc := reporters.JUnitTestCase{Name: Test(o), Classname: o.Scenario.Area, Time: o.Duration.Seconds(), Status: "passed"}
		switch {
		case o.Skipped != "":
			tc.Status, tc.Skipped = "skipped", &reporters.JUnitSkipped{Message: o.Skipped}
			s.Skipped++
		case o.Err != nil:
			tc.Status, tc.Error = "error",
				&reporters.JUnitError{Message: firstLine(o.Err.Error()), Type: "error", Description: o.Err.Error()}
			s.Errors++
		case len(o.Failures) > 0:
			var b strings.Builder
			for _, f := range o.Failures {
				fmt.Fprintf(&b, "%s: %s\n", f.Check, f.String())
			}
			tc.Status = "failed"
			tc.Failure = &reporters.JUnitFailure{Message: fmt.Sprintf("%d check(s) failed (%s)", len(o.Failures),
				o.Scenario.File), Type: "failed", Description: b.String()}
			s.Failures++
		}
		for _, e := range o.Explained {
			tc.SystemOut += fmt.Sprintf("known divergence: %s\nexplains: %s\n", strings.TrimSpace(e.Divergence.Reason),
				strings.Join(e.Items, "; "))
		}
		if o.Envoy != "" {
			tc.SystemOut += "real Envoy: " + o.Envoy + "\n"
		}
		s.Tests++
		s.Time += tc.Time
		s.TestCases = append(s.TestCases, tc)
	}
	for _, a := range order {
		s := byArea[a]
		suites.Tests += s.Tests
		suites.Failures += s.Failures
		suites.Errors += s.Errors
		suites.Time += s.Time
		suites.TestSuites = append(suites.TestSuites, *s)
	}
	if _, err := io.WriteString(w, xml.Header); err != nil {
		return err
	}
	enc := xml.NewEncoder(w)
	enc.Indent("", "  ")
	if err := enc.Encode(suites); err != nil {
		return err
	}
	_, err := io.WriteString(w, "\n")
	return err
}

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}

// Agreement writes a Markdown table: for each behavior ID some scenario covers, how many of
// its scenario runs agree with the reference, diverge for a recorded reason, are skipped
// (the implementation cannot express them) or fail; then each divergence and skip with its
// reason. It holds no date, so a refresh changes it only when results change.
func Agreement(w io.Writer, cat *catalog.Catalog, outcomes []*runner.Outcome, impl string) {
	rows := map[string]*row{}
	total := row{}
	for _, o := range outcomes {
		for _, id := range o.Scenario.Covers {
			r := rows[id]
			if r == nil {
				r = &row{}
				rows[id] = r
			}
			r.add(o)
		}
		total.add(o)
	}
	fmt.Fprintf(w,
		"Agreement of `%s` with the reference translator (`egharness report --format agreement --impl %s`): %d scenario "+
			"runs, %d agree, %d diverge for a recorded reason, %d skipped, %d fail.\n\n",
		impl, impl, total.runs, total.agree, total.diverge, total.skip, total.fail)
	fmt.Fprintln(w, "| behavior | area | runs | agree | known divergence | skipped | fail |")
	fmt.Fprintln(w, "|---|---|---:|---:|---:|---:|---:|")
	for _, id := range cat.IDs() {
		r := rows[id]
		if r == nil {
			continue
		}
		fmt.Fprintf(w, "| %s | %s | %d | %d | %d | %d | %d |\n", id, cat.Get(id).Area, r.runs, r.agree, r.diverge, r.skip,
			r.fail)
	}
	var notes []string
	for _, o := range outcomes {
		for _, e := range o.Explained {
			notes = append(notes,
				fmt.Sprintf("- **%s** [%s], known divergence: %s", o.Scenario.Name, o.Profile, oneLine(e.Divergence.Reason)))
		}
		if o.Skipped != "" {
			notes = append(notes, fmt.Sprintf("- **%s** [%s], skipped: %s", o.Scenario.Name, o.Profile, oneLine(o.Skipped)))
		}
		if o.Skipped == "" && !o.Passed() {
			notes = append(notes, fmt.Sprintf("- **%s** [%s], FAILS: not explained yet", o.Scenario.Name, o.Profile))
		}
	}
	if len(notes) > 0 {
		fmt.Fprintf(w, "\n%s\n", strings.Join(notes, "\n"))
	}
}

// row counts scenario runs by how they compare with the reference.
type row struct{ runs, agree, diverge, skip, fail int }

func (r *row) add(o *runner.Outcome) {
	r.runs++
	switch {
	case o.Skipped != "":
		r.skip++
	case !o.Passed():
		r.fail++
	case len(o.Explained) > 0:
		r.diverge++
	default:
		r.agree++
	}
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// divergenceReasons is the reasons of the divergences a run's differences were explained by,
// each on one line, joined.
func divergenceReasons(o *runner.Outcome) string {
	var out []string
	for _, e := range o.Explained {
		if r := oneLine(e.Divergence.Reason); !slices.Contains(out, r) {
			out = append(out, r)
		}
	}
	return strings.Join(out, "; ")
}
