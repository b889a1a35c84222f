package corpus

import (
	"fmt"
	"os"
	"sort"
	"strings"

	"sigs.k8s.io/yaml"
)

// KnownFile is where the project records why cases disagree (relative to its root).
const KnownFile = "corpus/known.yaml"

// Known is the file of recorded disagreements: groups of cases with one reason each. A
// recorded case that disagrees is reported with its reason instead of failing; a recorded
// case that agrees (or is refused by the CRDs) is stale and fails, so the record stays
// true, as a scenario's divergences do.
type Known struct {
	File   string
	Groups []KnownGroup
	byCase map[string]*KnownGroup // key: impl + " " + case
}

// KnownGroup is one reason and the cases it explains.
type KnownGroup struct {
	// Reason says what differs and why (a feature not translated, a setting we cannot be
	// given, a fact of EG's we do not follow yet).
	Reason string `json:"reason"`
	// Impl is the implementation the reason is about (as --impl names it); "" is the
	// reference translator.
	Impl  string   `json:"impl,omitempty"`
	Cases []string `json:"cases"`
	// Facts, when set, scope the reason to the differences it explains: xDS fact keys as
	// -v prints them after "xDS " ("cluster ratelimit_cluster"), status keys ("ListenerSet/
	// ns/name: Accepted"), or "error" for a translation that fails; '*' matches any text.
	// Only matching differences are explained (any other still disagrees), and a case none
	// of whose differences a pattern matches is stale, so a reason that stops matching
	// fails. A case whose every difference is explained, xDS ones among them, is
	// left out of the xDS fact tally (the implementation cannot represent it faithfully).
	Facts []string `json:"facts,omitempty"`
	// Cause says whose the differences are, for a reason scoped to facts: "implementation"
	// (the default: the implementation cannot represent the case faithfully, as an
	// offline tool that reads its input otherwise than EG in a cluster does; the case is
	// left out of the xDS fact tally) or "reference" (a gap of the reference translator:
	// the case stays in the tally, as a disagreement, without failing the run).
	Cause string `json:"cause,omitempty"`
}

// LoadKnown reads a known-reasons file. A missing file is an empty record.
func LoadKnown(file string) (*Known, error) {
	k := &Known{File: file, byCase: map[string]*KnownGroup{}}
	data, err := os.ReadFile(file)
	if os.IsNotExist(err) {
		return k, nil
	}
	if err != nil {
		return nil, err
	}
	return ParseKnown(file, data)
}

// ParseKnown reads a known-reasons file's content: a list of groups, every group with a
// reason and at least one case, no case twice for one implementation.
func ParseKnown(file string, data []byte) (*Known, error) {
	k := &Known{File: file, byCase: map[string]*KnownGroup{}}
	if err := yaml.UnmarshalStrict(data, &k.Groups); err != nil {
		return nil, fmt.Errorf("%s: %v", file, err)
	}
	var errs []string
	for i := range k.Groups {
		g := &k.Groups[i]
		if strings.TrimSpace(g.Reason) == "" {
			errs = append(errs, fmt.Sprintf("group %d: no reason", i+1))
		}
		switch g.Cause {
		case "", CauseImplementation, CauseReference:
		default:
			errs = append(errs,
				fmt.Sprintf("group %d (%s): cause must be %q or %q, not %q", i+1, short(g.Reason), CauseImplementation,
					CauseReference, g.Cause))
		}
		if g.Cause != "" && len(g.Facts) == 0 {
			errs = append(errs, fmt.Sprintf("group %d (%s): a cause needs facts", i+1, short(g.Reason)))
		}
		for _, f := range g.Facts {
			if strings.TrimSpace(f) == "" {
				errs = append(errs, fmt.Sprintf("group %d (%s): an empty fact pattern", i+1, short(g.Reason)))
			}
		}
		if len(g.Cases) == 0 {
			errs = append(errs, fmt.Sprintf("group %d (%s): no cases", i+1, short(g.Reason)))
		}
		for _, c := range g.Cases {
			key := g.Impl + " " + c
			if prev, dup := k.byCase[key]; dup {
				errs = append(errs, fmt.Sprintf("case %s is recorded twice (%q and %q)", c, short(prev.Reason), short(g.Reason)))
				continue
			}
			k.byCase[key] = g
		}
	}
	if len(errs) > 0 {
		return nil, fmt.Errorf("%s: %s", file, strings.Join(errs, "; "))
	}
	return k, nil
}

// Reason is the recorded reason for a case under an implementation ("" for the
// reference), or "".
func (k *Known) Reason(impl, name string) string {
	if k == nil {
		return ""
	}
	if g := k.byCase[implKey(impl)+" "+name]; g != nil {
		return g.Reason
	}
	return ""
}

// Causes of a reason scoped to facts (KnownGroup.Cause).
const (
	CauseImplementation = "implementation"
	CauseReference      = "reference"
)

// Group is the recorded group for a case under an implementation, or nil.
func (k *Known) Group(impl, name string) *KnownGroup {
	if k == nil {
		return nil
	}
	return k.byCase[implKey(impl)+" "+name]
}

// Unknown lists recorded cases of impl that are not in names (a case EG renamed or
// removed, or a typo).
func (k *Known) Unknown(impl string, names []string) []string {
	if k == nil {
		return nil
	}
	have := map[string]bool{}
	for _, n := range names {
		have[n] = true
	}
	var out []string
	for _, g := range k.Groups {
		if g.Impl != implKey(impl) {
			continue
		}
		for _, c := range g.Cases {
			if !have[c] {
				out = append(out, c)
			}
		}
	}
	sort.Strings(out)
	return out
}

func implKey(impl string) string {
	if impl == "reference" {
		return ""
	}
	return impl
}

func short(s string) string {
	if len(s) > 60 {
		return s[:57] + "..."
	}
	return s
}
