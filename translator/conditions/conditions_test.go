package conditions

import (
	"errors"
	"strings"
	"testing"

	"github.com/egharness/egharness/translator/result"
)

func TestMessage(t *testing.T) {
	tests := map[string]string{
		"":                            "",
		"service default/x not found": "Service default/x not found.",
		"Already upper.":              "Already upper.",
		"ends with period.":           "Ends with period.",
		"123 starts with a digit":     "123 starts with a digit.",
		"élan":                        "Élan.",
		"x":                           "X.",
		".":                           ".",
	}
	for in, want := range tests {
		if got := Message(in); got != want {
			t.Errorf("Message(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestErrorMessage(t *testing.T) {
	// EG's Error2ConditionMsg works on runes: a first letter outside ASCII is upper-cased
	// whole, never cut in the middle of its bytes.
	if got := ErrorMessage(errors.New("énorme")); got != "Énorme." {
		t.Errorf("ErrorMessage = %q", got)
	}
	if got := ErrorMessage(errors.New("")); got != "" {
		t.Errorf("ErrorMessage of an empty error = %q", got)
	}
}

func TestSetAndHas(t *testing.T) {
	list := []result.Condition{New("Accepted", "True", "Accepted", "a"), New("ResolvedRefs", "True", "ResolvedRefs", "b")}
	list = Set(list, New("Accepted", "False", "NoMatchingParent", "c"))
	list = Set(list, New("RouteRulesOverlap", "True", "RouteRulesOverlap", "d"))
	if len(list) != 3 || list[0].Type != "Accepted" || list[0].Status != "False" || list[0].Message != "c" ||
		list[2].Type != "RouteRulesOverlap" {
		t.Errorf("list = %+v", list)
	}
	if !Has(list, "RouteRulesOverlap") || Has(list, "Programmed") {
		t.Error("Has")
	}
}

func TestRemove(t *testing.T) {
	list := []result.Condition{New("Accepted", "True", "", ""), New("Warning", "True", "", ""),
		New("Merged", "True", "", "")}
	got := Remove(list, "Warning")
	if len(got) != 2 || got[0].Type != "Accepted" || got[1].Type != "Merged" || list[1].Type != "Warning" {
		t.Errorf("Remove: %+v (list now %+v)", got, list)
	}
	if got := Remove(list, "Programmed"); len(got) != 3 {
		t.Errorf("Remove of an absent type: %+v", got)
	}
}

func TestIsTrue(t *testing.T) {
	list := []result.Condition{New("Accepted", "True", "Accepted", ""), New("Programmed", "False", "Invalid", "")}
	if !IsTrue(list, "Accepted") || IsTrue(list, "Programmed") || IsTrue(list, "ResolvedRefs") {
		t.Errorf("IsTrue on %+v", list)
	}
}

func TestTruncate(t *testing.T) {
	if got := Truncate("short"); got != "short" {
		t.Errorf("Truncate(short) = %q", got)
	}
	long := strings.Repeat("x", MaxMessage+1)
	got := Truncate(long)
	if len(got) != MaxMessage || !strings.HasSuffix(got, " (message truncated).") {
		t.Errorf("Truncate: %d bytes, ends %q", len(got), got[len(got)-30:])
	}
}
