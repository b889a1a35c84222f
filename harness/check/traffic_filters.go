package check

import (
	"fmt"
	"sort"
	"strings"

	"github.com/egharness/egharness/harness/routecheck"
	"github.com/egharness/egharness/harness/scenario"
)

// filterDiffs compares what the HTTP filters did with what the scenario expects.
func filterDiffs(want scenario.TrafficResult, a Answer) []string {
	var diffs []string
	have := map[string]routecheck.FilterEffect{}
	var names []string
	for _, f := range a.Filters {
		if _, dup := have[f.Kind]; !dup {
			names = append(names, f.Kind)
		}
		have[f.Kind] = f
	}
	acting := "none"
	if len(names) > 0 {
		acting = strings.Join(names, ", ")
	}
	for _, k := range want.Filters {
		if _, ok := have[k]; !ok {
			diffs = append(diffs, fmt.Sprintf("filter %s does not act on the request (acting: %s)", k, acting))
		}
	}
	for _, k := range want.FiltersAbsent {
		if _, ok := have[k]; ok {
			diffs = append(diffs, fmt.Sprintf("filter %s acts on the request, expected not to", k))
		}
	}
	answered := a.AnsweredBy
	if answered == "" {
		answered = "none"
	}
	if want.AnsweredBy != "" && want.AnsweredBy != answered {
		diffs = append(diffs, fmt.Sprintf("answered by %s, expected %s", answered, want.AnsweredBy))
	}
	mode := func(kind, field, w string) {
		if w == "" {
			return
		}
		f, ok := have[kind]
		switch {
		case !ok:
			diffs = append(diffs, fmt.Sprintf("%s %q expected, but %s does not act on the request", field, w, kind))
		case f.Mode != w:
			diffs = append(diffs, fmt.Sprintf("%s %q (%s), expected %q", field, f.Mode, f.Outcome, w))
		}
	}
	mode("jwt_authn", "jwt", want.JWT)
	mode("csrf", "csrf", want.CSRF)
	if want.RateLimitDomains != nil {
		var got []string
		for _, f := range a.Filters {
			if f.Kind == "ratelimit" {
				got = append(got, f.Mode)
			}
		}
		w := append([]string(nil), want.RateLimitDomains...)
		sort.Strings(got)
		sort.Strings(w)
		if strings.Join(got, ",") != strings.Join(w, ",") {
			diffs = append(diffs, fmt.Sprintf("counted in rate limit domains %v, expected %v", got, w))
		}
	}
	return diffs
}
