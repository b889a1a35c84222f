// Package upgrade computes the impact of an Envoy Gateway upgrade on a user's own objects:
// it translates them on both sides of the upgrade (two version profiles of the reference
// translator, or any two implementations) and reports, as findings, every difference a user
// would feel: objects the API server starts to refuse, objects and policies that stop being
// processed or accepted, status changes, xDS resources and keys that are renamed or moved
// (matched by what they are, not by their names), and EnvoyPatchPolicy operations that hit
// before and miss after.
//
// It works on result.Result only, so every behavior the translator learns (policies, TLS,
// patches) shows up here without code of its own; rules.go maps each kind of difference to a
// behavior ID and a severity.
package upgrade

import (
	"sort"

	"github.com/egharness/egharness/translator/resource"
)

// Severity says how much a finding matters to the user.
type Severity string

// Severities, most severe first.
const (
	// Breaking: traffic or configuration stops working as before (a refused object, a
	// policy no longer in force, a patch that no longer applies).
	Breaking Severity = "breaking"
	// Warning: behavior is the same but something users address changes (names, keys,
	// conditions), or a new condition warns about the configuration.
	Warning Severity = "warning"
	// Info: a change for the better or a cosmetic one.
	Info Severity = "info"
)

func (s Severity) rank() int {
	switch s {
	case Breaking:
		return 0
	case Warning:
		return 1
	}
	return 2
}

// Unmapped is the ID of a difference no rule explains yet: it is reported all the same,
// so nothing is lost silently.
const Unmapped = "UNMAPPED"

// Finding is one difference between the two sides.
type Finding struct {
	ID       string       `json:"id"`
	Object   resource.Ref `json:"object"`
	Severity Severity     `json:"severity"`
	Summary  string       `json:"summary"`
	Before   string       `json:"before"`
	After    string       `json:"after"`
	// Context names the objects the finding affects besides Object, the one to change:
	// the route and Gateway whose xDS a policy's change shows in.
	Context []resource.Ref `json:"context,omitempty"`
	// XDS names the xDS resource the finding is about on each side, for a side-by-side
	// view; nil when the finding is not about xDS.
	XDS *XDSRef `json:"-"`
	// Change is the kind of difference (see rules.go).
	Change Change `json:"-"`
}

// XDSRef names one xDS resource on each side of the upgrade ("" where it does not exist).
type XDSRef struct {
	Type   string // Listener, RouteConfiguration, Cluster, ClusterLoadAssignment, Secret
	Before string
	After  string
}

// Report is the outcome of an upgrade check.
type Report struct {
	From     string    `json:"from"`
	To       string    `json:"to"`
	Findings []Finding `json:"findings"`
	// Notes are things said about the input (skipped kinds, where the configuration came
	// from); they are not findings.
	Notes []string `json:"-"`

	sides [2]*sideResult
}

// Breaking reports whether any finding is breaking.
func (r *Report) Breaking() bool {
	for _, f := range r.Findings {
		if f.Severity == Breaking {
			return true
		}
	}
	return false
}

// Count returns the number of findings of each severity.
func (r *Report) Count() map[Severity]int {
	out := map[Severity]int{}
	for _, f := range r.Findings {
		out[f.Severity]++
	}
	return out
}

// sortFindings orders findings by object, then severity, then ID and text, and drops exact
// duplicates: the same input always prints the same report.
func sortFindings(fs []Finding) []Finding {
	sort.SliceStable(fs, func(i, j int) bool {
		a, b := fs[i], fs[j]
		if a.Object != b.Object {
			return a.Object.Less(b.Object)
		}
		if a.Severity != b.Severity {
			return a.Severity.rank() < b.Severity.rank()
		}
		if a.ID != b.ID {
			return a.ID < b.ID
		}
		if a.Summary != b.Summary {
			return a.Summary < b.Summary
		}
		if a.Before != b.Before {
			return a.Before < b.Before
		}
		return a.After < b.After
	})
	out := fs[:0]
	for i, f := range fs {
		if i > 0 {
			p := out[len(out)-1]
			if p.Object == f.Object && p.ID == f.ID && p.Severity == f.Severity && p.Summary == f.Summary &&
				p.Before == f.Before && p.After == f.After {
				continue
			}
		}
		out = append(out, f)
	}
	if out == nil {
		out = []Finding{}
	}
	return out
}
