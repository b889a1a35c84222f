package corpus

import (
	"context"
	"strings"
	"testing"

	"github.com/egharness/egharness/translator/resource"
	"github.com/egharness/egharness/translator/result"
)

func TestDecodeInputKeysAndVersions(t *testing.T) {
	in, err := DecodeInput("x.in.yaml", []byte(`
HTTPRoutes:
- apiVersion: gateway.networking.k8s.io/v1
  metadata: {name: r, namespace: default}
  spec: {}
backendTLSPolicies:
- apiVersion: gateway.networking.k8s.io/v1alpha2
  kind: BackendTLSPolicy
  metadata: {name: p, namespace: default}
  spec: {}
tlsRoutes:
- apiVersion: gateway.networking.k8s.io/v1alpha2
  metadata: {name: t, namespace: default}
  spec: {}
`))
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, o := range in.Objects {
		got[o.Kind+"/"+o.Obj.GetName()] = o.APIVersion
	}
	want := map[string]string{
		"HTTPRoute/r": "gateway.networking.k8s.io/v1", // key matched case-insensitively, kind from the key
		// v1alpha2 BackendTLSPolicy is no longer served: read as the Go type EG decodes into
		"BackendTLSPolicy/p": "gateway.networking.k8s.io/v1",
		// v1alpha2 TLSRoute is served: the API server judges it by its own schema
		"TLSRoute/t": "gateway.networking.k8s.io/v1alpha2",
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s: apiVersion %q, want %q (all: %v)", k, got[k], v, got)
		}
	}
}

func TestDecodeInputErrorsNameTheFile(t *testing.T) {
	_, err := DecodeInput("bad.in.yaml", []byte("gateways: []\nroutes: []\n"))
	if err == nil || !strings.Contains(err.Error(), "bad.in.yaml") || !strings.Contains(err.Error(), "routes") {
		t.Fatalf("unknown key: got %v, want an error naming bad.in.yaml and the key", err)
	}
	_, err = DecodeInput("bad.in.yaml", []byte("gateways: [42]\n"))
	if err == nil || !strings.Contains(err.Error(), "gateways[0]") {
		t.Fatalf("non-object item: got %v, want an error naming gateways[0]", err)
	}
	in, err := DecodeInput("x.in.yaml", []byte("endpointSlices:\n- metadata: {namespace: default}\n  addressType: IPv4\n"))
	if err != nil || len(in.Refusals) != 1 {
		t.Fatalf("an EndpointSlice without a name is the API server's refusal, not a malformed case: %v, %v", err,
			in.Refusals)
	}
}

func TestCompare(t *testing.T) {
	st := func(conds ...result.Condition) []result.ObjectStatus {
		return []result.ObjectStatus{{Object: refOf("HTTPRoute", "r"),
			Parents: []result.ParentStatus{{Ref: result.ParentRef{Kind: "Gateway", Namespace: "default", Name: "g"},
				Conditions: conds}}}}
	}
	acc := result.Condition{Type: "Accepted", Status: "True", Reason: "Accepted", Message: "Route is accepted"}
	accOther := acc
	accOther.Message = "accepted"
	refused := result.Condition{Type: "Accepted", Status: "False", Reason: "NotAllowedByListeners"}
	resolved := result.Condition{Type: "ResolvedRefs", Status: "True", Reason: "ResolvedRefs"}

	if c := Compare(st(acc, resolved), st(acc, resolved)); c.Differs(true) || c.Units != 2 || c.Agree != 2 {
		t.Errorf("same statuses: %+v", c)
	}
	c := Compare(st(acc), st(accOther))
	if c.Differs(false) || !c.Differs(true) || c.Agree != 1 || c.MessagesAgree != 0 {
		t.Errorf("a message alone differs only with messages on: %+v", c)
	}
	c = Compare(st(acc), st(refused, resolved))
	if !c.Differs(false) || c.Units != 2 || c.Agree != 0 || len(c.Differences) != 2 {
		t.Errorf("a reason and an extra condition differ: %+v", c)
	}
	// An EnvoyPatchPolicy's Programmed is set after the xDS, which EG's test never records.
	epp := []result.ObjectStatus{{Object: refOf("EnvoyPatchPolicy", "p"),
		Parents: []result.ParentStatus{{Ref: result.ParentRef{Kind: "Gateway", Namespace: "default", Name: "g"},
			Conditions: []result.Condition{{Type: "Accepted", Status: "True", Reason: "Accepted"},
				{Type: "Programmed", Status: "False", Reason: "ResourceNotFound"}}}}}}
	eppEG := []result.ObjectStatus{{Object: refOf("EnvoyPatchPolicy", "p"),
		Parents: []result.ParentStatus{{Ref: result.ParentRef{Kind: "Gateway", Namespace: "default", Name: "g"},
			Conditions: []result.Condition{{Type: "Accepted", Status: "True", Reason: "Accepted"}}}}}}
	if c := Compare(eppEG, epp); c.Differs(true) {
		t.Errorf("EnvoyPatchPolicy Programmed compared: %+v", c)
	}
}

func TestKnownFile(t *testing.T) {
	if _, err := ParseKnown("k.yaml", []byte("- reason: a\n  cases: [x]\n- reason: b\n  cases: [x]\n")); err == nil ||
		!strings.Contains(err.Error(), "twice") {
		t.Errorf("a case recorded twice: %v", err)
	}
	if _, err := ParseKnown("k.yaml", []byte("- reason: ''\n  cases: [x]\n")); err == nil {
		t.Error("a group without a reason was taken")
	}
	if _, err := ParseKnown("k.yaml", []byte("- reason: a\n  case: [x]\n")); err == nil {
		t.Error("an unknown field was taken")
	}
	k, err := ParseKnown("k.yaml",
		[]byte("- reason: a\n  cases: [x, gone]\n- reason: b\n  impl: egctl@v1.9.1\n  cases: [other]\n"))
	if err != nil {
		t.Fatal(err)
	}
	if k.Reason("reference", "x") != "a" || k.Reason("reference", "other") != "" ||
		k.Reason("egctl@v1.9.1", "other") != "b" {
		t.Error("reasons are not scoped by implementation")
	}
	if u := k.Unknown("reference", []string{"x"}); len(u) != 1 || u[0] != "gone" {
		t.Errorf("unknown recorded cases: %v", u)
	}
}

// TestRunVerdicts runs our own small cases (testdata/cases, in EG's layout) and checks each
// verdict: agreement, a disagreement, the same recorded, a stale record, a malformed case
// failing alone.
func TestRunVerdicts(t *testing.T) {
	cases, err := Cases("testdata/cases")
	if err != nil {
		t.Fatal(err)
	}
	verdicts := func(k *Known) map[string]Verdict {
		out := map[string]Verdict{}
		for _, r := range Run(context.Background(), cases, Options{Known: k}) {
			out[r.Name] = r.Verdict
			if r.Verdict == Error && !strings.Contains(r.Error, "gateway-malformed.in.yaml") {
				t.Errorf("%s: the error does not name the file: %s", r.Name, r.Error)
			}
		}
		return out
	}
	got := verdicts(nil)
	want := map[string]Verdict{"httproute-basic": Agree, "httproute-wrong": Disagree, "gateway-malformed": Error}
	for n, v := range want {
		if got[n] != v {
			t.Errorf("%s: %s, want %s", n, got[n], v)
		}
	}
	k, err := ParseKnown("k.yaml", []byte("- reason: test\n  cases: [httproute-basic, httproute-wrong]\n"))
	if err != nil {
		t.Fatal(err)
	}
	got = verdicts(k)
	if got["httproute-wrong"] != Recorded || got["httproute-basic"] != Stale {
		t.Errorf("with reasons recorded: %v", got)
	}
	if !Stale.Failed() || Recorded.Failed() || Refused.Failed() {
		t.Error("verdicts that fail: disagree, error, stale")
	}
}

func TestHashedName(t *testing.T) {
	// EG's proxy Service for Gateway envoy-gateway/gateway-1, as its testdata's IR names it.
	if got := hashedName("envoy-gateway/gateway-1", 48); got != "envoy-gateway-gateway-1-196ae069" {
		t.Errorf("hashedName: %s", got)
	}
}
func refOf(kind, name string) resourceRef {
	return resourceRef{Kind: kind, Namespace: "default", Name: name}
}

type resourceRef = resource.Ref

// TestExplainFacts checks reasons scoped to facts: matched differences are explained, the
// rest still disagree, a reason none of whose patterns matches is stale, and a case whose
// every difference is the implementation's leaves the xDS figure (a reference gap stays).
func TestExplainFacts(t *testing.T) {
	if _, err := ParseKnown("k.yaml",
		[]byte("- reason: a\n  impl: e\n  cause: nobody\n  facts: [x]\n  cases: [c]\n")); err == nil {
		t.Error("an unknown cause was taken")
	}
	if _, err := ParseKnown("k.yaml", []byte("- reason: a\n  impl: e\n  cause: reference\n  cases: [c]\n")); err == nil {
		t.Error("a cause without facts was taken")
	}
	mk := func() CaseResult {
		return CaseResult{Verdict: Disagree,
			Differences: []Difference{{Key: "ListenerSet/ns/ls: Accepted", Want: "True/Accepted"},
				{Key: "HTTPRoute/ns/r parent Gateway/ns/g: Accepted", OnlyMessage: true}},
			Facts: &FactsResult{Total: 3, Agree: 2,
				Differences: []string{"cluster ratelimit_cluster\n  reference: x\n  got: (none)"}}}
	}
	r := mk()
	explainFacts(&r, []string{"ListenerSet/*", "cluster ratelimit_cluster"}, false, false)
	if r.Verdict != Recorded || !r.Facts.Excluded || r.Facts.Gap {
		t.Errorf("every difference explained: %s excluded=%v gap=%v", r.Verdict, r.Facts.Excluded, r.Facts.Gap)
	}
	r = mk()
	explainFacts(&r, []string{"ListenerSet/*", "cluster ratelimit_cluster"}, true, false)
	if r.Verdict != Recorded || r.Facts.Excluded || !r.Facts.Gap {
		t.Errorf("a reference gap: %s excluded=%v gap=%v", r.Verdict, r.Facts.Excluded, r.Facts.Gap)
	}
	r = mk()
	explainFacts(&r, []string{"ListenerSet/*"}, false, false)
	if r.Verdict != Disagree || r.Facts.Excluded {
		t.Errorf("an unexplained xDS difference: %s excluded=%v", r.Verdict, r.Facts.Excluded)
	}
	r = mk()
	explainFacts(&r, []string{"ListenerSet/*", "cluster ratelimit_cluster"}, false, true)
	if r.Verdict != Disagree {
		t.Errorf("with --messages a message difference is not explained: %s", r.Verdict)
	}
	r = mk()
	explainFacts(&r, []string{"cluster tracing"}, false, false)
	if r.Verdict != Stale || len(r.Unmatched) != 1 {
		t.Errorf("a reason that matches nothing: %s %v", r.Verdict, r.Unmatched)
	}
	r = CaseResult{Verdict: Agree, Facts: &FactsResult{Total: 1, Agree: 1}}
	explainFacts(&r, []string{"cluster tracing"}, false, false)
	if r.Verdict != Stale {
		t.Errorf("a case that agrees: %s", r.Verdict)
	}
	r = CaseResult{Verdict: Error, Error: "egctl: exit status 1"}
	explainFacts(&r, []string{"error"}, false, false)
	if r.Verdict != Recorded {
		t.Errorf("a recorded error: %s", r.Verdict)
	}

	excluded := mk()
	explainFacts(&excluded, []string{"ListenerSet/*", "cluster ratelimit_cluster"}, false, false)
	gap := mk()
	explainFacts(&gap, []string{"ListenerSet/*", "cluster ratelimit_cluster"}, true, false)
	agree := CaseResult{Verdict: Agree, Facts: &FactsResult{Total: 4, Agree: 4}}
	s := Summarize("e", []CaseResult{excluded, gap, agree})
	if tt := s.Total; tt.FactCases != 2 || tt.FactsExcluded != 1 || tt.FactsGaps != 1 || tt.FactsAgree != 1 ||
		tt.Facts != 7 {
		t.Errorf("tally: %+v", tt)
	}
	var b strings.Builder
	WriteText(&b, nil, s, false)
	if want := "xDS facts against the reference: 1 of 2 cases agree (50.0%), 85.7% of 7 facts; not counted: 1 of the 3 " +
		"cases both translate, every difference of theirs recorded as the implementation's; recorded gaps " +
		"of the reference: 1; 0 skipped"; !strings.Contains(
		b.String(), want) {
		t.Errorf("summary line:\n%s\nwant it to contain %q", b.String(), want)
	}
}
