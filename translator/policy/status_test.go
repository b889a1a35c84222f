package policy

import (
	"fmt"
	"testing"

	"github.com/egharness/egharness/translator/result"
)

// The ancestor list never grows past the soft cap while it is built, and the final
// truncation keeps rejected ancestors first and marks the 16th Aggregated.
func TestAncestorsBoundedWhileBuilt(t *testing.T) {
	var a ancestors
	for i := 0; i < 1000; i++ {
		ref := result.ParentRef{Kind: "Gateway", Namespace: "default", Name: fmt.Sprintf("g%04d", i)}
		if i == 999 {
			a.reject(ref, reasonConflicted, "taken")
		} else {
			a.accept(ref)
		}
		if len(a.list) > softCap {
			t.Fatalf("after %d ancestors the list holds %d, more than %d", i+1, len(a.list), softCap)
		}
	}
	a.truncate()
	if len(a.list) != maxAncestors {
		t.Fatalf("truncated to %d ancestors, want %d", len(a.list), maxAncestors)
	}
	if a.list[0].Ref.Name != "g0999" {
		t.Errorf("first ancestor is %s, want the rejected g0999", a.list[0].Ref.Name)
	}
	if a.list[1].Ref.Name != "g0000" || a.list[15].Ref.Name != "g0014" {
		t.Errorf("accepted ancestors kept are %s..%s, want g0000..g0014", a.list[1].Ref.Name, a.list[15].Ref.Name)
	}
	last := a.list[maxAncestors-1].Conditions
	if c := last[len(last)-1]; c.Type != condAggregated || c.Message != msgAggregated {
		t.Errorf("16th ancestor's last condition is %+v, want Aggregated", c)
	}
	for _, p := range a.list[:maxAncestors-1] {
		for _, c := range p.Conditions {
			if c.Type == condAggregated {
				t.Errorf("%s is Aggregated; only the 16th should be", p.Ref.Name)
			}
		}
	}
}

// Scope lists read as EG words them: grouped by kind in a fixed order, each sorted.
func TestScopeDescribe(t *testing.T) {
	s := scopeSet{
		{kind: scopeRoute, namespace: "b", name: "r2"}:                                    {},
		{kind: scopeRoute, namespace: "a", name: "r1"}:                                    {},
		{kind: scopeGatewayListener, namespace: "a", name: "eg", section: "http"}:         {},
		{kind: scopeListenerSetListener, namespace: "a", name: "ls", section: "listener"}: {},
	}
	want := "these gateway listeners: [a/eg/http] and these listenerset listeners: [a/ls/listener] " +
		"and these routes: [a/r1 b/r2]"
	if got := s.describe(); got != want {
		t.Errorf("describe() = %q, want %q", got, want)
	}
	if got := (scopeSet{}).describe(); got != "" {
		t.Errorf("empty set describes as %q", got)
	}
}
