package runner_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/egharness/egharness/harness/catalog"
	"github.com/egharness/egharness/harness/impl"
	"github.com/egharness/egharness/harness/runner"
	"github.com/egharness/egharness/harness/scenario"
	"github.com/egharness/egharness/internal/testutil"
	"github.com/egharness/egharness/translator/result"
)

// appRoute is HTTPRoute default/<name>, created at created, sending every request to app.
func appRoute(name, created string) string {
	return fmt.Sprintf(`apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: %s, namespace: default, creationTimestamp: %q}
spec:
  parentRefs: [{name: eg}]
  rules: [{backendRefs: [{name: app, port: 8080}]}]
`, name, created)
}

// older and newer are two identical routes; the reference puts the older first.
var peerScenario = `name: peer-demo
covers: [RT-10]
resources: |
` + testutil.Indent(testutil.GatewayAndApp+"---\n"+appRoute("newer", "2025-03-01T00:00:00Z")+
	"---\n"+appRoute("older", "2025-02-01T00:00:00Z")) + `  ---
  apiVersion: gateway.networking.k8s.io/v1
  kind: HTTPRoute
  metadata: {name: refused, namespace: default}
  spec:
    hostnames: ["bad:8080"]
    parentRefs: [{name: eg}]
expect:
  admission:
  - {object: HTTPRoute/default/refused, allowed: false}
  traffic:
  - request: {port: 80, host: x.example.com, path: /}
    expect: {cluster: httproute/default/older/rule/0}
`

// swapping is a peer that orders equal routes by name, as if it ignored creationTimestamp;
// it records the objects it was given.
type swapping struct {
	caps impl.Capabilities
	skip string
	got  []string
}

func (*swapping) Name() string                      { return "swapping" }
func (s *swapping) Capabilities() impl.Capabilities { return s.caps }
func (s *swapping) Translate(ctx context.Context, req impl.Request) (*result.Result, error) {
	if s.skip != "" {
		return nil, &impl.SkipError{Reason: s.skip}
	}
	for _, o := range req.Objects {
		s.got = append(s.got, o.Ref().String())
	}
	res, err := impl.Reference{}.Translate(ctx, req)
	if err != nil {
		return nil, err
	}
	for _, rc := range res.XDS.Routes {
		for _, vh := range rc.GetVirtualHosts() {
			slices.Reverse(vh.Routes)
		}
	}
	return res, nil
}

func loadPeerScenario(t *testing.T, extra string) *scenario.Scenario {
	t.Helper()
	cat, err := catalog.Load()
	if err != nil {
		t.Fatal(err)
	}
	s, err := scenario.Loader{Catalog: cat}.Load("peer-demo.yaml", []byte(peerScenario+extra))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func runPeer(t *testing.T, s *scenario.Scenario, im impl.Implementation) *runner.Outcome {
	t.Helper()
	return runner.RunOne(context.Background(), runner.Job{Scenario: s, Profile: "v1.9"}, runner.Options{Impl: im})
}

func TestPeerDifferenceFails(t *testing.T) {
	o := runPeer(t, loadPeerScenario(t, ""), &swapping{})
	if o.Passed() || !o.Compared {
		t.Fatalf("a peer that orders routes differently passed: %+v", o)
	}
	var checks []string
	for _, f := range o.Failures {
		checks = append(checks, f.Check+" "+f.Where)
	}
	// The fact (route order) and the traffic expectation that follows from it.
	for _, want := range []string{"facts ", "traffic expect.traffic[0]"} {
		if !slices.ContainsFunc(checks, func(c string) bool { return strings.HasPrefix(c, want) }) {
			t.Errorf("no failure %q among %q", want, checks)
		}
	}
	for _, f := range o.Failures {
		if f.Check == "facts" && !strings.Contains(f.Msg, "routes default/eg/http default/eg/http/*") {
			t.Errorf("fact failure does not name the routes fact: %s", f.Msg)
		}
	}
}

func TestPeerDivergenceExplains(t *testing.T) {
	div := `divergences:
- impl: swapping
  reason: orders equal routes by name
  facts: ["routes default/eg/http *", "expect.traffic[0]"]
`
	im := &swapping{caps: impl.Capabilities{NoAdmission: true}}
	o := runPeer(t, loadPeerScenario(t, div), im)
	if !o.Passed() || o.Agrees() || len(o.Explained) != 1 {
		t.Fatalf("want a pass explained by one divergence, got failures %v, err %v, explained %+v", o.Failures, o.Err,
			o.Explained)
	}
	if got := o.Explained[0].Items; len(got) != 2 {
		t.Errorf("explained %q, want the routes fact and the traffic expectation", got)
	}
	// NoAdmission: the peer was not given the object the reference refuses.
	if slices.Contains(im.got, "HTTPRoute/default/refused") || !slices.Contains(im.got, "HTTPRoute/default/older") {
		t.Errorf("objects given to a NoAdmission peer: %v", im.got)
	}
	// The same divergence recorded for another implementation explains nothing.
	other := strings.Replace(div, "impl: swapping", "impl: egctl@v1.9.1", 1)
	if o := runPeer(t, loadPeerScenario(t, other), &swapping{caps: impl.Capabilities{NoAdmission: true}}); o.Passed() {
		t.Errorf("a divergence of another implementation explained this one")
	}
}

func TestPeerStaleDivergenceFails(t *testing.T) {
	div := `divergences:
- impl: reference-copy
  reason: used to differ
  facts: ["routes *"]
`
	o := runPeer(t, loadPeerScenario(t, div), refCopy{})
	if len(o.Failures) != 1 || o.Failures[0].Check != "divergence" ||
		!strings.Contains(o.Failures[0].Msg, "not observed") {
		t.Fatalf("want one stale-divergence failure, got %+v (err %v)", o.Failures, o.Err)
	}
	if o.Failures[0].Line == 0 {
		t.Errorf("the failure has no line in the scenario file")
	}
}

func TestPeerSkip(t *testing.T) {
	o := runPeer(t, loadPeerScenario(t, ""), &swapping{skip: "cannot say this"})
	if o.Skipped != "cannot say this" || o.Agrees() || len(o.Failures) > 0 {
		t.Fatalf("want a skip, got %+v", o)
	}
}

// refCopy is the reference under another name: every fact agrees.
type refCopy struct{ impl.Reference }

func (refCopy) Name() string { return "reference-copy" }

// Capabilities: the whole result, judged against the reference (not Reference's goldens).
func (refCopy) Capabilities() impl.Capabilities { return impl.Capabilities{} }

func TestPeerAgreement(t *testing.T) {
	o := runPeer(t, loadPeerScenario(t, ""), refCopy{})
	if !o.Agrees() {
		t.Fatalf("the reference under another name disagrees with itself: %v %v", o.Failures, o.Err)
	}
}
