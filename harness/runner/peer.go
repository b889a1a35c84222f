package runner

import (
	"context"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/egharness/egharness/harness/check"
	"github.com/egharness/egharness/harness/facts"
	"github.com/egharness/egharness/harness/impl"
	"github.com/egharness/egharness/harness/scenario"
	"github.com/egharness/egharness/translator/profile"
	"github.com/egharness/egharness/translator/resource"
	"github.com/egharness/egharness/translator/result"
)

// comparePeer runs another implementation than the reference on o's scenario: its result is
// checked against the scenario's expectations (what it cannot produce left out) and its
// facts are compared with the reference's. Differences that a divergence recorded on the
// scenario names are explained; the rest fail.
func comparePeer(ctx context.Context, o *Outcome, p profile.Profile, im impl.Implementation) {
	s := o.Scenario
	o.Compared = true
	caps := impl.CapabilitiesOf(im)
	ref, err := impl.Reference{}.Translate(ctx,
		impl.Request{Scenario: s.Name, Objects: s.Objects, Config: s.Settings, Profile: p})
	if err != nil {
		o.Err = fmt.Errorf("the reference translator failed, so there is nothing to compare with: %w", err)
		return
	}
	objects := s.Objects
	if caps.NoAdmission {
		// The harness plays the API server: the implementation sees what a cluster admits.
		objects = admitted(objects, ref)
	}
	res, err := im.Translate(ctx, impl.Request{Scenario: s.Name, Objects: objects, Config: s.Settings, Profile: p})
	if why := impl.Skipped(err); why != "" {
		o.Skipped = why
		return
	}
	type item struct {
		key     string
		failure check.Failure
	}
	var items []item
	if err != nil {
		items = append(items, item{key: "error"})
	} else {
		o.Result = res
		fo := facts.Options{NoAdmission: caps.NoAdmission, NoSecrets: caps.OmitsPart("secrets"),
			NoPatchStatus: caps.OmitsPart("patch-status")}
		for _, d := range facts.Compare(facts.Of(ref, fo), facts.Of(res, fo)) {
			items = append(items, item{key: d.Key, failure: check.Failure{Check: "facts", Msg: d.String()}})
		}
		for _, f := range check.Run(s, p.Name, res) {
			if !cannotProduce(s, p.Name, f, caps) {
				items = append(items, item{key: f.Where, failure: f})
			}
		}
	}
	divs := s.DivergencesFor(im.Name(), p.Name)
	explained := make([]Explained, len(divs))
	for _, it := range items {
		i := explaining(divs, it.key)
		switch {
		case i >= 0:
			what := it.key
			if it.key == "error" {
				what = "error: " + firstLines(err.Error(), 2)
			}
			explained[i].Items = append(explained[i].Items, what)
		case it.key == "error":
			o.Err = err
		default:
			o.Failures = append(o.Failures, it.failure)
		}
	}
	for i, d := range divs {
		if len(explained[i].Items) == 0 {
			at := divergenceIndex(s, d)
			o.Failures = append(o.Failures, check.Failure{Check: "divergence", Where: at, Line: s.Line(at),
				Msg: fmt.Sprintf(
					"recorded for %s but not observed: no difference matches its facts (%q); remove it or correct its facts", d.Impl,
					d.Reason)})
			continue
		}
		explained[i].Divergence = d
		o.Explained = append(o.Explained, explained[i])
	}
}

// explaining returns the first divergence one of whose facts matches key, or -1.
func explaining(divs []scenario.Divergence, key string) int {
	for i, d := range divs {
		for _, pat := range d.Facts {
			if facts.Match(pat, key) {
				return i
			}
		}
	}
	return -1
}

func divergenceIndex(s *scenario.Scenario, d scenario.Divergence) string {
	for i := range s.Divergences {
		if s.Divergences[i].Impl == d.Impl && s.Divergences[i].Reason == d.Reason {
			return fmt.Sprintf("divergences[%d]", i)
		}
	}
	return "divergences"
}

// admitted keeps the objects the reference's admission lets in.
func admitted(objs []resource.Object, ref *result.Result) []resource.Object {
	out := make([]resource.Object, 0, len(objs))
	for _, o := range objs {
		if a := ref.AdmissionOf(o.Ref()); a != nil && !a.Allowed {
			continue
		}
		out = append(out, o)
	}
	return out
}

var (
	xdsIndexRE   = regexp.MustCompile(`\.xds\[(\d+)\]$`)
	statusCondRE = regexp.MustCompile(`\.statuses\[(\d+)\]\.conditions\[(\d+)\]$`)
)

// cannotProduce reports whether f checks a part of the result the implementation declares
// it never produces.
func cannotProduce(s *scenario.Scenario, p string, f check.Failure, caps impl.Capabilities) bool {
	switch f.Check {
	case "admission":
		return caps.NoAdmission
	case "warnings":
		return caps.OmitsPart("warnings")
	case "patches":
		return caps.OmitsPart("patches")
	case "statuses":
		// The Programmed condition of an EnvoyPatchPolicy, set once its patches are applied.
		if m := statusCondRE.FindStringSubmatch(f.Where); m != nil && caps.OmitsPart("patch-status") {
			i, _ := strconv.Atoi(m[1])
			j, _ := strconv.Atoi(m[2])
			if st := s.ExpectFor(p).Statuses; i < len(st) && j < len(st[i].Conditions) {
				return strings.HasPrefix(st[i].Object, "EnvoyPatchPolicy/") && st[i].Conditions[j].Type == "Programmed"
			}
		}
	case "xds":
		if m := xdsIndexRE.FindStringSubmatch(f.Where); m != nil && caps.OmitsPart("secrets") {
			i, _ := strconv.Atoi(m[1])
			if x := s.ExpectFor(p).XDS; i < len(x) {
				return x[i].Kind == scenario.KindSecret
			}
		}
	}
	return false
}

// firstLines is the first n lines of s, joined by " / ".
func firstLines(s string, n int) string {
	lines := strings.SplitN(s, "\n", n+1)
	if len(lines) > n {
		lines = lines[:n]
	}
	return strings.Join(lines, " / ")
}
