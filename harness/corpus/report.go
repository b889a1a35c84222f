package corpus

import (
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"sort"
	"strings"
	"text/tabwriter"
)

// Tally counts the verdicts and compared units of a group of cases.
type Tally struct {
	Prefix   string `json:"prefix,omitempty"`
	Cases    int    `json:"cases"`
	Agree    int    `json:"agree"`
	Disagree int    `json:"disagree"`
	Recorded int    `json:"recorded"`
	Refused  int    `json:"refused"`
	Errors   int    `json:"errors"`
	Stale    int    `json:"stale"`
	Skipped  int    `json:"skipped"`
	// Comparable are the cases that translated and were compared (agree, disagree,
	// recorded, stale).
	Comparable int `json:"comparable"`
	// Units, UnitsAgree, MessagesAgree: the compared conditions of comparable cases.
	Units         int `json:"conditions"`
	UnitsAgree    int `json:"conditionsAgree"`
	MessagesAgree int `json:"messagesAgree"`
	// FactCases are the cases both implementations translated (--impl); FactsAgree those
	// whose xDS facts all agree; Facts, FactsSame count the facts.
	// FactsExcluded are cases both translated that are left out of those figures: every
	// difference of theirs is explained by a recorded reason scoped to facts.
	FactCases     int `json:"factCases,omitempty"`
	FactsExcluded int `json:"factCasesExcluded,omitempty"`
	// FactsGaps are the cases of FactCases that disagree for a recorded gap of the
	// reference translator.
	FactsGaps  int `json:"factCasesReferenceGaps,omitempty"`
	FactsAgree int `json:"factCasesAgree,omitempty"`
	Facts      int `json:"facts,omitempty"`
	FactsSame  int `json:"factsAgree,omitempty"`
}

func (t *Tally) add(r CaseResult) {
	t.Cases++
	switch r.Verdict {
	case Agree:
		t.Agree++
	case Disagree:
		t.Disagree++
	case Recorded:
		t.Recorded++
	case Refused:
		t.Refused++
	case Error:
		t.Errors++
	case Stale:
		t.Stale++
	case Skipped:
		t.Skipped++
	}
	// A stale record's case agrees (or is refused); an error recorded has nothing compared.
	if r.Verdict == Agree || r.Verdict == Disagree || (r.Verdict == Recorded || r.Verdict == Stale) && r.Error == "" &&
		len(r.Refusals) == 0 {
		t.Comparable++
		t.Units += r.Units
		t.UnitsAgree += r.Agree
		t.MessagesAgree += r.MessagesAgree
	}
	if r.Facts != nil && r.Facts.Excluded {
		t.FactsExcluded++
	} else if r.Facts != nil {
		t.FactCases++
		if r.Facts.Gap {
			t.FactsGaps++
		}
		if len(r.Facts.Differences) == 0 {
			t.FactsAgree++
		}
		t.Facts += r.Facts.Total
		t.FactsSame += r.Facts.Agree
	}
}

// AgreeingComparable is how many comparable cases agree: agree, plus stale records of
// cases that agree.
func (t Tally) AgreeingComparable() int { return t.Agree + t.Stale }

// Summary is a run's tallies: per prefix, by prefix, and the total.
type Summary struct {
	Impl      string   `json:"impl"`
	EG        string   `json:"egVersion"`
	Prefixes  []Tally  `json:"prefixes"`
	Total     Tally    `json:"total"`
	Failed    bool     `json:"failed"`
	StaleKeys []string `json:"unknownRecordedCases,omitempty"`
}

// Summarize tallies results.
func Summarize(implName string, results []CaseResult) Summary {
	by := map[string]*Tally{}
	s := Summary{Impl: implName, EG: EGVersion()}
	for _, r := range results {
		t := by[r.Prefix]
		if t == nil {
			t = &Tally{Prefix: r.Prefix}
			by[r.Prefix] = t
		}
		t.add(r)
		s.Total.add(r)
		if r.Verdict.Failed() {
			s.Failed = true
		}
	}
	for _, t := range by {
		s.Prefixes = append(s.Prefixes, *t)
	}
	sort.Slice(s.Prefixes, func(i, j int) bool { return s.Prefixes[i].Prefix < s.Prefixes[j].Prefix })
	return s
}

func pct(n, d int) string {
	if d == 0 {
		return "-"
	}
	return fmt.Sprintf("%.1f%%", 100*float64(n)/float64(d))
}

// WriteText prints each case's verdict (agreeing cases only with verbose), then the table
// per prefix and the total.
func WriteText(w io.Writer, results []CaseResult, s Summary, verbose bool) {
	for _, r := range results {
		if r.Verdict == Agree && !verbose {
			continue
		}
		writeCase(w, r, verbose)
	}
	if len(results) > 0 {
		fmt.Fprintln(w)
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "prefix\tcases\tagree\trecorded\tdisagree\trefused\terror\tstale\tagree %\tconditions %\t")
	row := func(t Tally, name string) {
		fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%s\t%s\t\n", name, t.Cases, t.Agree, t.Recorded, t.Disagree,
			t.Refused, t.Errors, t.Stale,
			pct(t.AgreeingComparable(), t.Comparable), pct(t.UnitsAgree, t.Units))
	}
	for _, t := range s.Prefixes {
		row(t, t.Prefix)
	}
	row(s.Total, "total")
	tw.Flush()
	t := s.Total
	fmt.Fprintf(w,
		"\n%s against EG %s's translator testdata: %d cases, %d comparable, %d agree (%s), %s of %d conditions agree on "+
			"type, status and reason (%s with the message too); %d refused by the CRDs, %d recorded, %d "+
			"disagree, %d errors, %d stale\n",
		s.Impl, s.EG, t.Cases, t.Comparable, t.AgreeingComparable(), pct(t.AgreeingComparable(), t.Comparable),
		pct(t.UnitsAgree, t.Units), t.Units, pct(t.MessagesAgree, t.Units),
		t.Refused, t.Recorded, t.Disagree, t.Errors, t.Stale)
	if t.FactCases > 0 || t.FactsExcluded > 0 || t.Skipped > 0 {
		fmt.Fprintf(w,
			"xDS facts against the reference: %d of %d cases agree (%s), %s of %d facts; not counted: %d of the %d cases both "+
				"translate, every difference of theirs recorded as the implementation's; recorded gaps of "+
				"the reference: %d; %d skipped\n",
			t.FactsAgree, t.FactCases, pct(t.FactsAgree, t.FactCases), pct(t.FactsSame, t.Facts), t.Facts, t.FactsExcluded,
			t.FactCases+t.FactsExcluded, t.FactsGaps, t.Skipped)
	}
}

func writeCase(w io.Writer, r CaseResult, verbose bool) {
	fmt.Fprintf(w, "%-9s %s", r.Verdict, r.Name)
	switch r.Verdict {
	case Recorded, Stale:
		fmt.Fprintf(w, ": %s", r.Reason)
	}
	fmt.Fprintln(w)
	if r.Verdict == Stale {
		switch {
		case len(r.Unmatched) > 0 && (r.Units > 0 || r.Facts != nil):
			fmt.Fprintf(w,
				"    the recorded reason no longer matches: no difference matches %s; correct its facts or remove the case\n",
				strings.Join(quoted(r.Unmatched), ", "))
		case r.Error == "" && len(r.Refusals) == 0:
			fmt.Fprintln(w, "    the case agrees now: remove it from the known-reasons file")
		default:
			fmt.Fprintln(w,
				"    the case is refused by the CRDs, which needs no recorded reason: remove it from the known-reasons file")
		}
	}
	if r.Verdict == Disagree && r.Reason != "" {
		fmt.Fprintf(w,
			"    partly explained by its recorded reason (%s); the differences its facts do not match, below, disagree\n",
			short(r.Reason))
	}
	for _, m := range r.Refusals {
		fmt.Fprintf(w, "    refused by the CRDs: %s\n", m)
	}
	if r.Error != "" {
		fmt.Fprintf(w, "    %s\n", strings.ReplaceAll(r.Error, "\n", "\n    "))
	}
	if r.Verdict == Disagree || verbose && r.Verdict != Agree {
		for _, s := range r.Inexpressible {
			fmt.Fprintf(w, "    needs a setting we cannot give: %s\n", s)
		}
		partly := r.Verdict == Disagree && r.Reason != ""
		for _, d := range r.Differences {
			if d.OnlyMessage && !verbose || partly && !slices.Contains(r.Unexplained, d.Key) {
				continue
			}
			fmt.Fprintf(w, "  - %s\n", strings.ReplaceAll(d.String(), "\n", "\n  "))
		}
		if r.Facts != nil {
			for _, d := range r.Facts.Differences {
				if partly && !slices.Contains(r.Unexplained, strings.SplitN(d, "\n", 2)[0]) {
					continue
				}
				fmt.Fprintf(w, "  - xDS %s\n", strings.ReplaceAll(d, "\n", "\n  "))
			}
		}
	}
}

func quoted(ss []string) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = fmt.Sprintf("%q", s)
	}
	return out
}

// WriteJSON prints the results and the summary as one object.
func WriteJSON(w io.Writer, results []CaseResult, s Summary) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	if results == nil {
		results = []CaseResult{}
	}
	return enc.Encode(struct {
		Summary Summary      `json:"summary"`
		Cases   []CaseResult `json:"cases"`
	}{s, results})
}
