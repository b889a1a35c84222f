package gwconformance

import (
	"encoding/xml"
	"fmt"
	"os"
)

// WriteJUnit writes the tests run as one JUnit test suite (what CI systems read).
func WriteJUnit(path string, results []TestResult) error {
	type failure struct {
		Message string `xml:"message,attr"`
	}
	type skipped struct {
		Message string `xml:"message,attr"`
	}
	type testcase struct {
		Name      string   `xml:"name,attr"`
		Classname string   `xml:"classname,attr"`
		Time      string   `xml:"time,attr"`
		Failure   *failure `xml:"failure,omitempty"`
		Skipped   *skipped `xml:"skipped,omitempty"`
	}
	type testsuite struct {
		XMLName  xml.Name   `xml:"testsuite"`
		Name     string     `xml:"name,attr"`
		Tests    int        `xml:"tests,attr"`
		Failures int        `xml:"failures,attr"`
		Skipped  int        `xml:"skipped,attr"`
		Time     string     `xml:"time,attr"`
		Cases    []testcase `xml:"testcase"`
	}
	ts := testsuite{Name: "gateway-api-conformance (" + Mode + ")", Tests: len(results)}
	var total float64
	for _, r := range results {
		c := testcase{Name: r.Name, Classname: "gateway-api-conformance", Time: fmt.Sprintf("%.3f", r.Duration.Seconds())}
		total += r.Duration.Seconds()
		switch r.Outcome {
		case "failed":
			c.Failure = &failure{Message: r.Name + " failed; the run's log has its messages"}
			ts.Failures++
		case "skipped":
			c.Skipped = &skipped{Message: "skipped"}
			ts.Skipped++
		}
		ts.Cases = append(ts.Cases, c)
	}
	ts.Time = fmt.Sprintf("%.3f", total)
	b, err := xml.MarshalIndent(ts, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, append([]byte(xml.Header), append(b, '\n')...), 0o644)
}
