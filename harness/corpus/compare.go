package corpus

import (
	"fmt"
	"slices"
	"sort"

	"github.com/egharness/egharness/translator/result"
)

// Difference is one compared unit (a condition of an object, listener, parent or
// ancestor, or a listener's attachedRoutes) on which two status sets differ.
type Difference struct {
	// Key names the unit: "HTTPRoute/default/r parent Gateway/envoy-gateway/g: Accepted".
	Key string `json:"key"`
	// Want and Got are "status/reason" (a count for attachedRoutes), "" when absent.
	Want string `json:"want"`
	Got  string `json:"got"`
	// OnlyMessage: type, status and reason agree; the messages differ.
	OnlyMessage bool   `json:"onlyMessage,omitempty"`
	WantMessage string `json:"wantMessage,omitempty"`
	GotMessage  string `json:"gotMessage,omitempty"`
}

func (d Difference) String() string {
	show := func(v string) string {
		if v == "" {
			return "(none)"
		}
		return v
	}
	if d.OnlyMessage {
		return fmt.Sprintf("%s: message\n    EG:   %q\n    ours: %q", d.Key, d.WantMessage, d.GotMessage)
	}
	s := fmt.Sprintf("%s: EG %s, ours %s", d.Key, show(d.Want), show(d.Got))
	if d.WantMessage != "" && d.Want != "" {
		s += fmt.Sprintf("\n    EG says: %q", d.WantMessage)
	}
	if d.GotMessage != "" && d.Got != "" {
		s += fmt.Sprintf("\n    we say:  %q", d.GotMessage)
	}
	return s
}

// Comparison is how two status sets compare unit by unit.
type Comparison struct {
	// Units is the number of units either side has; Agree those with the same type, status
	// and reason (or count); MessagesAgree those that also have the same message.
	Units, Agree, MessagesAgree int
	Differences                 []Difference
}

// Differs says whether the sets disagree: on a type, status or reason, or with messages
// set, on a message too.
func (c Comparison) Differs(messages bool) bool {
	for _, d := range c.Differences {
		if !d.OnlyMessage || messages {
			return true
		}
	}
	return false
}

type unit struct {
	value, message string
}

// Compare compares EG's statuses (want) with an implementation's (got), on the compared
// kinds only: every condition by type, every listener's attachedRoutes.
func Compare(want, got []result.ObjectStatus) Comparison {
	w, g := units(want), units(got)
	keys := make([]string, 0, len(w)+len(g))
	for k := range w {
		keys = append(keys, k)
	}
	for k := range g {
		if _, ok := w[k]; !ok {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	var c Comparison
	for _, k := range keys {
		a, inW := w[k]
		b, inG := g[k]
		c.Units++
		switch {
		case inW && inG && a.value == b.value:
			c.Agree++
			if a.message == b.message {
				c.MessagesAgree++
				continue
			}
			c.Differences = append(c.Differences,
				Difference{Key: k, Want: a.value, Got: b.value, OnlyMessage: true, WantMessage: a.message, GotMessage: b.message})
		default:
			d := Difference{Key: k}
			if inW {
				d.Want, d.WantMessage = a.value, a.message
			}
			if inG {
				d.Got, d.GotMessage = b.value, b.message
			}
			c.Differences = append(c.Differences, d)
		}
	}
	return c
}

// afterXDS says whether a condition is one EG sets only once the xDS is built, which EG's
// TestTranslate (the gateway-api stage alone) never records: an EnvoyPatchPolicy's
// Programmed, set when its patches are applied.
func afterXDS(kind string, c result.Condition) bool {
	return kind == "EnvoyPatchPolicy" && c.Type == "Programmed"
}

// units flattens statuses into compared units by key.
func units(sts []result.ObjectStatus) map[string]unit {
	out := map[string]unit{}
	kind := ""
	add := func(at string, cs []result.Condition) {
		for _, c := range cs {
			if afterXDS(kind, c) {
				continue
			}
			out[at+": "+c.Type] = unit{value: c.Status + "/" + c.Reason, message: c.Message}
		}
	}
	for _, s := range sts {
		if !slices.Contains(ComparedKinds, s.Object.Kind) {
			continue
		}
		obj := s.Object.String()
		kind = s.Object.Kind
		add(obj, s.Conditions)
		for _, l := range s.Listeners {
			at := obj + " listener " + l.Name
			add(at, l.Conditions)
			out[at+": attachedRoutes"] = unit{value: fmt.Sprint(l.AttachedRoutes)}
		}
		for _, p := range s.Parents {
			add(obj+" parent "+p.Ref.String(), p.Conditions)
		}
	}
	return out
}
