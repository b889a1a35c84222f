package upgrade

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"sync"

	"github.com/egharness/egharness/harness/catalog"
	"github.com/egharness/egharness/harness/impl"
	"github.com/egharness/egharness/internal/stagetime"
	"github.com/egharness/egharness/translator/config"
	"github.com/egharness/egharness/translator/fields"
	"github.com/egharness/egharness/translator/profile"
	"github.com/egharness/egharness/translator/resource"
	"github.com/egharness/egharness/translator/result"
)

// Side is one end of an upgrade: what translates, and under which version profile. The
// reference translator under a profile is the usual side; any impl.Implementation (an exec
// adapter, egctl of a given release once an adapter exists) plugs in the same way.
type Side struct {
	// Label names the side in reports ("v1.8", "egctl@v1.9.1").
	Label   string
	Impl    impl.Implementation
	Profile profile.Profile
}

// releaseRE is NAME@vMAJOR.MINOR[.PATCH...]: an implementation of a given release.
var releaseRE = regexp.MustCompile(`^([^@]+)@v?([0-9]+)\.([0-9]+)(\.[0-9A-Za-z.-]+)?$`)

// ParseSide reads a --from or --to value:
//
//   - a profile name (v1.8, v1.9, v1.10-preview): the reference translator under it, or the
//     implementation implName (an --impl value such as exec:COMMAND) under it;
//   - NAME@VERSION (egctl@v1.9.1): the implementation impl.Get knows by that name, under the
//     profile of VERSION's minor release (v1.9). impl.Open refuses names it has no adapter for.
//
// o tunes the implementation (where egctl is installed, output limits).
func ParseSide(spec, implName string, o impl.Options) (Side, error) {
	spec = strings.TrimSpace(spec)
	if spec == "" {
		return Side{}, fmt.Errorf("a side is a version profile (%s) or NAME@VERSION", strings.Join(profile.Names(), ", "))
	}
	if m := releaseRE.FindStringSubmatch(spec); m != nil && implName == "" {
		p, err := profile.Get("v" + m[2] + "." + m[3])
		if err != nil {
			return Side{},
				fmt.Errorf("%s: no version profile for release v%s.%s (known: %s)", spec, m[2], m[3],
					strings.Join(profile.Names(), ", "))
		}
		im, err := impl.Open(spec, o)
		if err != nil {
			return Side{}, fmt.Errorf("%s: %v", spec, err)
		}
		return Side{Label: spec, Impl: im, Profile: p}, nil
	}
	p, err := profile.Get(spec)
	if err != nil {
		return Side{}, err
	}
	im, err := impl.Open(implName, o)
	if err != nil {
		return Side{}, err
	}
	label := p.Name
	if implName != "" && implName != "reference" {
		label = p.Name + " (" + im.Name() + ")"
	}
	return Side{Label: label, Impl: im, Profile: p}, nil
}

// Request is one upgrade check: the user's objects and EG settings, and the two sides.
type Request struct {
	Objects []resource.Object
	Config  config.Config
	From    Side
	To      Side
	// Name names the input for implementations that want one (the exec protocol's
	// EGHARNESS_SCENARIO).
	Name string
	// Stages, when not nil, is told as each step begins (upgrade-check --timings).
	Stages stagetime.Stages
}

// sideResult is one side's translation.
type sideResult struct {
	label string
	res   *result.Result
}

// Check translates the objects on both sides (concurrently) and compares the results.
func Check(ctx context.Context, req Request) (*Report, error) {
	begin := func(stage string) { stagetime.Begin(req.Stages, stage) }
	begin("translate " + req.From.Label + " and " + req.To.Label)
	var res [2]*result.Result
	var errs [2]error
	var wg sync.WaitGroup
	for i, s := range []Side{req.From, req.To} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() {
				if r := recover(); r != nil {
					errs[i] = fmt.Errorf("panic: %v", r)
				}
			}()
			res[i], errs[i] = s.Impl.Translate(ctx,
				impl.Request{Scenario: req.Name, Objects: req.Objects, Config: req.Config, Profile: s.Profile})
		}()
	}
	wg.Wait()
	for i, s := range []Side{req.From, req.To} {
		if errs[i] != nil {
			return nil, fmt.Errorf("translating under %s: %w", s.Label, errs[i])
		}
		if res[i] == nil {
			return nil, fmt.Errorf("translating under %s: no result", s.Label)
		}
	}
	begin("compare")
	rep := Compare(req.From.Label, req.To.Label, res[0], res[1], req.Objects)
	rep.Notes = append(rep.Notes, fieldNotes(req)...)
	return rep, nil
}

// fieldNotes name the fields of the objects that the reference translator does not
// translate, when a side is the reference: both sides' output lacks their effect alike, so
// no finding can show what the upgrade does to them (the registry of translator/fields).
func fieldNotes(req Request) []string {
	if !impl.CapabilitiesOf(req.From.Impl).Golden && !impl.CapabilitiesOf(req.To.Impl).Golden {
		return nil
	}
	var out []string
	for _, g := range fields.Gaps(req.Objects) {
		out = append(out, g.Note())
	}
	return out
}

// Compare computes the findings between two results of the same objects.
func Compare(from, to string, before, after *result.Result, objects []resource.Object) *Report {
	cat, _ := catalog.Load() // embedded; a broken catalog fails every test long before this
	d := newDiffer(cat, before, after, objects)
	d.admission()
	d.statuses()
	d.xds()
	d.patches()
	d.warnings()
	d.inherit()
	return &Report{
		From:     from,
		To:       to,
		Findings: sortFindings(d.findings),
		sides:    [2]*sideResult{{label: from, res: before}, {label: to, res: after}},
	}
}
