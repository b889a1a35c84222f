package corpus

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/egharness/egharness/harness/facts"
	"github.com/egharness/egharness/harness/impl"
	"github.com/egharness/egharness/translator/admission"
	"github.com/egharness/egharness/translator/profile"
	"github.com/egharness/egharness/translator/resource"
	"github.com/egharness/egharness/translator/result"
)

// Verdict is what became of one case.
type Verdict string

const (
	// Agree: every compared unit agrees with EG's recorded statuses.
	Agree Verdict = "agree"
	// Disagree: some unit differs and no reason is recorded: a failure.
	Disagree Verdict = "disagree"
	// Recorded: some unit differs, for the reason recorded in the known file.
	Recorded Verdict = "recorded"
	// Refused: the API server (admission with the real CRDs) refuses an object EG's unit
	// test takes; not compared, neither agreement nor failure.
	Refused Verdict = "refused"
	// Error: the case could not be read or translated: a failure unless recorded.
	Error Verdict = "error"
	// Stale: a reason is recorded but the case agrees (or is refused): a failure, so that
	// the record is kept true.
	Stale Verdict = "stale"
	// Skipped: the implementation cannot run the case as EG's test does (--impl only).
	Skipped Verdict = "skipped"
)

// Failed says whether the verdict fails a run.
func (v Verdict) Failed() bool { return v == Disagree || v == Error || v == Stale }

// CaseResult is one case's outcome.
type CaseResult struct {
	Name    string  `json:"name"`
	Prefix  string  `json:"prefix"`
	Verdict Verdict `json:"verdict"`
	// Reason is the recorded reason (recorded, stale).
	Reason string `json:"reason,omitempty"`
	// Unmatched are the fact patterns of the recorded reason that match no difference
	// (stale).
	Unmatched []string `json:"unmatchedFacts,omitempty"`
	// Unexplained are the keys of the differences a recorded reason scoped to facts does
	// not explain (the case still disagrees for them).
	Unexplained []string `json:"unexplained,omitempty"`
	// Refusals are the API server's messages (refused).
	Refusals []string `json:"refusals,omitempty"`
	// Error is why the case could not be read or translated (error).
	Error string `json:"error,omitempty"`
	// Inexpressible are EG's test settings for the case that our translator cannot be given.
	Inexpressible []string `json:"inexpressible,omitempty"`
	// Units, Agree and MessagesAgree count the compared conditions (see Comparison).
	Units         int          `json:"units"`
	Agree         int          `json:"agree"`
	MessagesAgree int          `json:"messagesAgree"`
	Differences   []Difference `json:"differences,omitempty"`
	// Facts compares an implementation's xDS with the reference's (--impl), when both
	// translate the case.
	Facts *FactsResult `json:"facts,omitempty"`
}

// FactsResult is the xDS fact comparison of one case.
type FactsResult struct {
	Total       int      `json:"total"`
	Agree       int      `json:"agree"`
	Differences []string `json:"differences,omitempty"`
	// Excluded: every difference is explained by a recorded reason scoped to facts (the
	// implementation cannot represent the case faithfully), so the case is left out of the
	// xDS fact tally.
	Excluded bool `json:"excluded,omitempty"`
	// Gap: the differences are explained as a gap of the reference translator; the case
	// stays in the tally as a disagreement.
	Gap bool `json:"referenceGap,omitempty"`
}

// Options tune a run.
type Options struct {
	// Impl runs the inputs; nil is the reference translator.
	Impl impl.Implementation
	// Known holds the recorded reasons (nil: none).
	Known *Known
	// Messages makes a message that differs a disagreement (by default type, status and
	// reason decide; messages are counted apart).
	Messages bool
	// Progress, when set, gets a line every so many cases (long runs).
	Progress io.Writer
}

// Run runs cases in order.
func Run(ctx context.Context, cases []Case, o Options) []CaseResult {
	p, _ := profile.Get("v1.9")
	base, baseErr := BaseObjects(cases)
	out := make([]CaseResult, 0, len(cases))
	for i, c := range cases {
		if ctx.Err() != nil {
			break
		}
		r := runCase(ctx, c, p, base, baseErr, o)
		out = append(out, r)
		if o.Progress != nil && ((i+1)%50 == 0 || i+1 == len(cases)) {
			fmt.Fprintf(o.Progress, "corpus: %d of %d cases\n", i+1, len(cases))
		}
	}
	return out
}

// BaseObjects reads the testdata's base/base.yaml (Secrets every case gets).
func BaseObjects(cases []Case) ([]resource.Object, error) {
	if len(cases) == 0 {
		return nil, nil
	}
	file := filepath.Join(filepath.Dir(cases[0].In), "base", "base.yaml")
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, fmt.Errorf("the testdata's shared objects: %v", err)
	}
	in, err := DecodeInput(file, data)
	if err != nil {
		return nil, err
	}
	for i := range in.Objects {
		in.Objects[i].File = file
	}
	return in.Objects, nil
}

// Prepared is one case as objects and settings, ready to translate.
type Prepared struct {
	Objects  []resource.Object
	Settings Settings
	// Own marks the case's own objects (not fixtures), by ref.
	Own map[resource.Ref]bool
	// Notes are what the decoder skipped (kinds the translator does not read).
	Notes []string
	// Refusals are the case's objects the API server refuses as it decodes them.
	Refusals []string
}

// Prepare reads a case's input and adds what EG's test adds.
func Prepare(c Case, base []resource.Object) (Prepared, error) {
	data, err := os.ReadFile(c.In)
	if err != nil {
		return Prepared{}, err
	}
	in, err := DecodeInput(c.In, data)
	if err != nil {
		return Prepared{}, err
	}
	s := settingsFor(c.Name, in)
	own := map[resource.Ref]bool{}
	for _, o := range in.Objects {
		own[o.Ref()] = true
	}
	// Base objects are copied: a translation may not change the next case's.
	baseCopy := make([]resource.Object, len(base))
	for i, b := range base {
		baseCopy[i] = b
		baseCopy[i].Obj = b.Obj.DeepCopyObject().(resource.KObject)
	}
	objs := append(in.Objects, fixtures(c.Name, in, s.Config.MergeGateways, baseCopy)...)
	withClassProxy(objs, in.ClassProxy)
	// File order is processing order: EG's test hands its translator the lists as written.
	resource.AssignTimestamps(objs, resource.DefaultEpoch)
	for i := range objs {
		if err := stampRaw(&objs[i]); err != nil {
			return Prepared{}, err
		}
	}
	return Prepared{Objects: objs, Settings: s, Own: own, Notes: in.Notes, Refusals: in.Refusals}, nil
}

func runCase(ctx context.Context, c Case, p profile.Profile, base []resource.Object, baseErr error,
	o Options) (r CaseResult) {
	r = CaseResult{Name: c.Name, Prefix: c.Prefix}
	implName := "reference"
	if o.Impl != nil {
		implName = o.Impl.Name()
	}
	group := o.Known.Group(implName, c.Name)
	defer func() {
		if group == nil {
			return
		}
		r.Reason = group.Reason
		if len(group.Facts) > 0 {
			explainFacts(&r, group.Facts, group.Cause == CauseReference, o.Messages)
			return
		}
		switch r.Verdict {
		case Disagree, Error:
			r.Verdict = Recorded
		case Agree, Refused:
			r.Verdict = Stale
		}
	}()
	fail := func(err error) CaseResult {
		r.Verdict, r.Error = Error, err.Error()
		return r
	}
	if baseErr != nil {
		return fail(baseErr)
	}
	prep, err := Prepare(c, base)
	if err != nil {
		return fail(err)
	}
	r.Inexpressible = prep.Settings.Inexpressible
	outData, err := os.ReadFile(c.Out)
	if err != nil {
		return fail(err)
	}
	want, err := DecodeOutput(c.Out, outData)
	if err != nil {
		return fail(err)
	}
	req := impl.Request{Scenario: c.Name, Objects: prep.Objects, Config: prep.Settings.Config, Profile: p}
	ref, err := impl.Reference{}.Translate(ctx, req)
	if err != nil {
		return fail(fmt.Errorf("reference translator: %v", err))
	}
	r.Refusals = append(r.Refusals, prep.Refusals...)
	for _, a := range ref.Admission {
		if !a.Allowed && prep.Own[a.Object] {
			// One order every run: admission sorts the field errors it reports
			// (translator/crds).
			r.Refusals = append(r.Refusals, a.Object.String()+": "+a.Message)
		}
	}
	if len(r.Refusals) > 0 {
		r.Verdict = Refused
		return r
	}
	got := ref
	if caps := impl.CapabilitiesOf(o.Impl); o.Impl != nil && !caps.Golden {
		if caps.NoAdmission {
			// The harness plays the API server: the implementation gets what a cluster
			// holds, the admitted objects in their stored version (egctl v1.9.1 panics on
			// a TLSRoute or UDPRoute it is handed as v1alpha2).
			_, stored, _, err := admission.Review(req.Objects, p, nil)
			if err != nil {
				return fail(fmt.Errorf("admission: %v", err))
			}
			req.Objects = allocateClusterIPs(stored)
		}
		res, err := o.Impl.Translate(ctx, req)
		if why := impl.Skipped(err); why != "" {
			r.Verdict, r.Error = Skipped, why
			return r
		}
		if err != nil {
			return fail(err)
		}
		got = res
		r.Facts = compareFacts(ref, res, caps)
	}
	cmp := Compare(want, got.Statuses)
	r.Units, r.Agree, r.MessagesAgree, r.Differences = cmp.Units, cmp.Agree, cmp.MessagesAgree, cmp.Differences
	r.Verdict = Agree
	if cmp.Differs(o.Messages) || r.Facts != nil && len(r.Facts.Differences) > 0 {
		r.Verdict = Disagree
	}
	return r
}

// explainFacts applies a reason scoped to fact patterns: the differences they match are
// explained; the case is recorded when nothing else differs, stale when no pattern matches a
// difference of the case (or the case agrees or is refused), and still disagrees otherwise. A recorded
// case whose xDS differences are the implementation's is excluded from the xDS tally; one
// whose differences are a gap of the reference's stays in it.
func explainFacts(r *CaseResult, patterns []string, referenceGap, messages bool) {
	if r.Verdict == Agree || r.Verdict == Refused {
		r.Verdict = Stale
		r.Unmatched = append([]string(nil), patterns...)
		return
	}
	if r.Verdict != Disagree && r.Verdict != Error {
		return
	}
	var keys []string
	xdsKeys := 0
	if r.Verdict == Error {
		keys = append(keys, "error")
	}
	for _, d := range r.Differences {
		if !d.OnlyMessage || messages {
			keys = append(keys, d.Key)
		}
	}
	if r.Facts != nil {
		for _, d := range r.Facts.Differences {
			keys = append(keys, strings.SplitN(d, "\n", 2)[0])
			xdsKeys++
		}
	}
	used := make([]bool, len(patterns))
	unexplained, explainedXDS := 0, 0
	for i, k := range keys {
		hit := false
		for j, p := range patterns {
			if facts.Match(p, k) {
				used[j], hit = true, true
			}
		}
		switch {
		case !hit:
			unexplained++
			r.Unexplained = append(r.Unexplained, k)
		case i >= len(keys)-xdsKeys:
			explainedXDS++
		}
	}
	// The reason no longer matches the case when none of its patterns matches a
	// difference of it (a pattern may be about some of the group's cases only).
	if !slices.Contains(used, true) {
		r.Unmatched = append(r.Unmatched, patterns...)
	}
	switch {
	case len(r.Unmatched) > 0:
		r.Verdict = Stale
	case unexplained > 0:
		r.Verdict = Disagree
	default:
		r.Verdict = Recorded
		switch {
		case r.Facts == nil || explainedXDS == 0:
		case referenceGap:
			r.Facts.Gap = true
		default:
			r.Facts.Excluded = true
		}
	}
}

// allocateClusterIPs gives every Service of EG's testdata that has no cluster IP one, as
// the API server allocates one to each ClusterIP, NodePort and LoadBalancer Service it
// stores. EG's test routes to EndpointSlices and never reads the address, so its inputs
// leave it out; egctl x translate routes every Service to its cluster IP instead (it
// disables endpoint routing: EG v1.9.1's internal/cmd/egctl/translate.go), and without one
// it refuses every backend of the Service ("field Address must be a valid IP or FQDN
// address"), which no cluster would show. Services are copied: the reference's objects
// stay as they are.
func allocateClusterIPs(objs []resource.Object) []resource.Object {
	out := make([]resource.Object, len(objs))
	n := 0
	for i, o := range objs {
		out[i] = o
		svc, ok := o.Obj.(*corev1.Service)
		if !ok || svc.Spec.ClusterIP != "" || svc.Spec.Type == corev1.ServiceTypeExternalName {
			continue
		}
		n++
		c := svc.DeepCopy()
		c.Spec.ClusterIP = fmt.Sprintf("10.96.%d.%d", 100+n/250, 1+n%250)
		out[i].Obj = c
	}
	return out
}

// compareFacts compares the xDS facts of an implementation's result with the reference's
// (statuses are compared with EG's own record instead).
func compareFacts(ref, got *result.Result, caps impl.Capabilities) *FactsResult {
	fo := facts.Options{NoAdmission: true, NoSecrets: caps.OmitsPart("secrets"),
		NoPatchStatus: caps.OmitsPart("patch-status")}
	xdsOnly := func(s facts.Set) facts.Set {
		for k := range s {
			if strings.HasPrefix(k, "status ") {
				delete(s, k)
			}
		}
		return s
	}
	want, have := xdsOnly(facts.Of(ref, fo)), xdsOnly(facts.Of(got, fo))
	diffs := facts.Compare(want, have)
	keys := map[string]bool{}
	for k := range want {
		keys[k] = true
	}
	for k := range have {
		keys[k] = true
	}
	fr := &FactsResult{Total: len(keys), Agree: len(keys) - len(diffs)}
	for _, d := range diffs {
		fr.Differences = append(fr.Differences, d.String())
	}
	slices.Sort(fr.Differences)
	return fr
}

// stampRaw writes the object's creation timestamp into its raw document when the document
// has none: admission decodes the stored object from the raw document, so without this
// the timestamp given in file order would be lost and age order fall back to names.
func stampRaw(o *resource.Object) error {
	if o.Raw == nil {
		return nil
	}
	var m map[string]any
	if err := json.Unmarshal(o.Raw, &m); err != nil {
		return fmt.Errorf("%s: %v", o.Where(), err)
	}
	md, _ := m["metadata"].(map[string]any)
	if md == nil {
		return nil
	}
	if ts, ok := md["creationTimestamp"]; ok && ts != nil {
		return nil
	}
	md["creationTimestamp"] = o.Obj.GetCreationTimestamp().UTC().Format(time.RFC3339)
	raw, err := json.Marshal(m)
	if err != nil {
		return fmt.Errorf("%s: %v", o.Where(), err)
	}
	o.Raw = raw
	return nil
}
