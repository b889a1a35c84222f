// Package translator is the reference translator: Kubernetes objects in, EG v1.9's
// admission verdicts, statuses and xDS out. It runs the stages in order
// (admission → gatewayapi → policy → ir → xds → patch); each stage is a package of its own.
package translator

import (
	"errors"
	"fmt"
	"runtime/debug"

	egv1a1 "github.com/envoyproxy/gateway/api/v1alpha1"

	"github.com/egharness/egharness/internal/stagetime"
	"github.com/egharness/egharness/translator/admission"
	"github.com/egharness/egharness/translator/config"
	"github.com/egharness/egharness/translator/fields"
	"github.com/egharness/egharness/translator/gatewayapi"
	"github.com/egharness/egharness/translator/patch"
	"github.com/egharness/egharness/translator/policy"
	"github.com/egharness/egharness/translator/profile"
	"github.com/egharness/egharness/translator/resource"
	"github.com/egharness/egharness/translator/result"
	"github.com/egharness/egharness/translator/xds"
)

// Input is one translation's objects and settings.
type Input struct {
	Objects []resource.Object
	Config  config.Config
	Profile profile.Profile
	// AdmissionMemo, when not nil, carries the API server's verdicts from one translation
	// to the next of mostly the same objects (serve --watch).
	AdmissionMemo *admission.Memo
	// Stages, when not nil, is told as each stage begins (translate --timings).
	Stages stagetime.Stages
}

func (in Input) begin(stage string) { stagetime.Begin(in.Stages, stage) }

// Translate runs the pipeline. A panic in a stage is returned as an error with its stack,
// so one bad input fails alone.
func Translate(in Input) (res *result.Result, err error) {
	defer func() {
		if r := recover(); r != nil {
			res, err = nil, fmt.Errorf("translator panic: %v\n%s", r, debug.Stack())
		}
	}()
	if err := in.Config.Validate(); err != nil {
		return nil, fmt.Errorf("EnvoyGateway config: %w", err)
	}
	res = &result.Result{}
	res.Warnings = append(res.Warnings, in.Config.Warnings()...)
	in.begin("admission")
	verdicts, admitted, admissionWarnings, err := admission.Review(in.Objects, in.Profile, in.AdmissionMemo)
	if err != nil {
		return nil, err
	}
	res.Admission = verdicts
	res.Warnings = append(res.Warnings, admissionWarnings...)
	// The fields the admitted objects set that the translator does not translate (the
	// registry of translator/fields), one warning per object and field.
	res.Warnings = append(res.Warnings, fields.Warnings(admitted)...)

	in.begin("gatewayapi")
	gw := gatewayapi.Translator{Profile: in.Profile, Config: in.Config}.Translate(admitted)
	res.Statuses = gw.Statuses
	res.IR = &gw.IR // for serve's /snapshots; later stages fill it in place
	res.Warnings = append(res.Warnings, gw.Warnings...)

	in.begin("policy")
	pol := policy.Translator{Profile: in.Profile, Config: in.Config}.Translate(admitted, &gw.IR, gw.Topology)
	// Overlapping routes are compared once BackendTrafficPolicies are on them (RT-11).
	res.Statuses = gw.RouteOverlaps.Mark(res.Statuses)
	// The features of the policies in force read their Secrets and ConfigMaps; a policy
	// whose features cannot be built is Invalid and its routes fail closed (EEP-02...).
	featureErrs := policy.ResolveFeatures(&gw.IR,
		policy.NewRefObjects(admitted, gw.Topology.Grants).WithBackends(gw.PolicyBackends),
		in.Config.LuaEnabled(in.Profile.LuaDefaultOn))
	pol.FeaturesFailed(featureErrs)
	// EnvoyProxy mergeBackends: routes of a Gateway share the clusters of their backends
	// where EG deems it safe (the policies in force decide).
	policy.MergeBackends(&gw.IR, gw.Topology, admitted)
	// The policies' own backends may have added BackendTLSPolicy ancestors (the policy).
	res.Statuses = gw.PolicyBackends.BackendTLSStatuses(res.Statuses)
	res.Statuses = append(res.Statuses, pol.Statuses...)
	res.Warnings = append(res.Warnings, pol.Warnings...)

	in.begin("xds")
	naming := xds.Naming{V2: in.Profile.FlagOn(egv1a1.XDSNameSchemeV2, in.Config.RuntimeFlags)}
	res.XDS, err = xds.Translator{Naming: naming, DNSClusterExtension: in.Profile.DNSClusterExtension,
		MergeGateways: in.Config.MergeGateways, Features: xds.Features{
			JWTStableNames:   in.Profile.JWTStableNames,
			LuaPolicyFilters: in.Profile.LuaPolicyFilters,
			// BTP-03
			RateLimitPerDomain: in.Profile.RateLimitPerDomain,
		}, RateLimit: rateLimitService(in.Config)}.Translate(&gw.IR)
	var skipped *xds.RoutesSkipped
	if errors.As(err, &skipped) {
		// One route's problem stays that route's: the rest is translated and printed.
		for _, p := range skipped.Problems {
			res.Warnings = append(res.Warnings, p+" (left out of the xDS)")
		}
		err = nil
	}
	if err != nil {
		return nil, err
	}
	in.begin("patch")
	// patch: EnvoyPatchPolicies last, on the finished xDS (EPP-03).
	patched := patch.Stage{
		Enabled:       in.Config.ExtensionAPIs != nil && in.Config.ExtensionAPIs.EnableEnvoyPatchPolicy,
		MergeGateways: in.Config.MergeGateways,
		NameSchemeV2:  naming.V2,
	}.Apply(admitted, res.Statuses, &res.XDS)
	res.Statuses = append(res.Statuses, patched.Statuses...)
	res.Patches = patched.Patches
	res.Warnings = append(res.Warnings, patched.Warnings...)
	res.Normalize()
	return res, nil
}

// rateLimitService is where Envoy reaches EG's rate limit service, when the configuration
// runs one (BTP-03).
func rateLimitService(c config.Config) *xds.RateLimitService {
	if !c.GlobalRateLimitOn() {
		return nil
	}
	timeout, _ := c.RateLimitTimeout() // Validate refused a bad one
	return &xds.RateLimitService{Host: config.RateLimitServiceHost, Port: config.RateLimitServicePort, Timeout: timeout,
		FailClosed: c.RateLimit.FailClosed}
}
