// Package policy is the policy stage of the reference translator: it attaches EG's
// SecurityPolicy, BackendTrafficPolicy, ClientTrafficPolicy and EnvoyExtensionPolicy to
// the routes and listeners the Gateway API stage built, by targetRef(s) and
// targetSelectors, most specific scope first (POL-01..03), merges route policies that ask
// for it with their closest parent (MRG-02..05), writes each policy's status.ancestors
// (POL-04, POL-05) and records the result on the IR (ir.Applied) for the feature
// translators. Policies only ever change the xDS IR (POL-07).
package policy

import (
	"errors"
	"fmt"
	"sort"
	"time"

	egv1a1 "github.com/envoyproxy/gateway/api/v1alpha1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/egharness/egharness/translator/config"
	"github.com/egharness/egharness/translator/gatewayapi"
	"github.com/egharness/egharness/translator/ir"
	"github.com/egharness/egharness/translator/profile"
	"github.com/egharness/egharness/translator/refgrant"
	"github.com/egharness/egharness/translator/resource"
	"github.com/egharness/egharness/translator/result"
)

// Translator runs the stage under one profile and configuration.
type Translator struct {
	Profile profile.Profile
	Config  config.Config
	// Now is the clock client-validation CAs are judged valid at (time.Now when nil).
	Now func() time.Time
}

// Output is the policies' statuses; the IR is changed in place.
type Output struct {
	Statuses []result.ObjectStatus
	Warnings []string

	// unmerge undoes, per kind, the merges of policies whose features fail; render
	// writes the statuses again from the policies' state.
	unmerge []func(FeatureErrors)
	render  func() []result.ObjectStatus
}

// FeaturesFailed takes the policies whose features could not be built (ResolveFeatures,
// which runs after attachment): a merge of such a policy is undone, as EG records a merge
// only once the merged policy translates, and every ancestor it has turns Accepted=False.
func (o *Output) FeaturesFailed(errs FeatureErrors) {
	if len(errs) == 0 {
		return
	}
	for _, u := range o.unmerge {
		u(errs)
	}
	if o.render != nil {
		o.Statuses = o.render()
	}
	MarkFeatureErrors(o.Statuses, errs)
}

// Translate attaches every policy of the four kinds among objs to the IR x, whose origin
// topo describes.
func (t Translator) Translate(objs []resource.Object, x *ir.XDS, topo *gatewayapi.Topology) Output {
	var (
		ctps []*pol[egv1a1.ClientTrafficPolicySpec]
		btps []*pol[egv1a1.BackendTrafficPolicySpec]
		sps  []*pol[egv1a1.SecurityPolicySpec]
		eeps []*pol[egv1a1.EnvoyExtensionPolicySpec]
	)
	for _, o := range objs {
		switch v := o.Obj.(type) {
		case *egv1a1.ClientTrafficPolicy:
			ctp := newPol("ClientTrafficPolicy", v, v.Spec.PolicyTargetReferences, nil, &v.Spec)
			ctp.added = o.Added
			ctps = append(ctps, ctp)
		case *egv1a1.BackendTrafficPolicy:
			btps = append(btps, newPol("BackendTrafficPolicy", v, v.Spec.PolicyTargetReferences, v.Spec.MergeType, &v.Spec))
		case *egv1a1.SecurityPolicy:
			sps = append(sps, newPol("SecurityPolicy", v, v.Spec.PolicyTargetReferences, v.Spec.MergeType, &v.Spec))
		case *egv1a1.EnvoyExtensionPolicy:
			eeps = append(eeps, newPol("EnvoyExtensionPolicy", v, v.Spec.PolicyTargetReferences, v.Spec.MergeType, &v.Spec))
		}
	}
	if topo == nil {
		topo = &gatewayapi.Topology{Grants: refgrant.New(objs)}
	}
	w := newWorld(topo)
	var out Output

	// EG's order: ClientTraffic, BackendTraffic, Security, EnvoyExtension.
	sortByAge(ctps)
	now := time.Now
	if t.Now != nil {
		now = t.Now
	}
	ce := &ctpEngine{w: w, pols: ctps, objs: newCTPObjects(objs, topo.Grants, now()), merged: t.Config.MergeGateways}
	ce.run()

	sortByAge(btps)
	refObjs := NewRefObjects(objs, topo.Grants)
	newEngine(w, kindInfo[egv1a1.BackendTrafficPolicySpec]{
		kind: "BackendTrafficPolicy", plural: "backendTrafficPolicies", routeOverride: "backendTrafficPolicy",
		slot: func(r *ir.RoutePolicies) **ir.Applied[egv1a1.BackendTrafficPolicySpec] { return &r.BackendTraffic },
		deprecated: func(s *egv1a1.BackendTrafficPolicySpec) map[string]string {
			if s.Compression != nil {
				return map[string]string{"spec.compression": "spec.compressor"}
			}
			return nil
		},
		validate: func(a *ir.Applied[egv1a1.BackendTrafficPolicySpec], _ string) error {
			s := a.Spec
			// The responseOverride bodies' ConfigMaps are EG's translation of the policy
			// too: a missing one makes a Gateway policy Invalid where no route is in its
			// force, and a route policy's merge with it fails (EG's testdata:
			// backendtrafficpolicy-with-response-override-merged-invalid-valueref).
			_, bodiesErr := responseBodies(a, refObjs)
			return errors.Join(validateRateLimit(s, t.Config.GlobalRateLimitOn()), validateBandwidthLimit(s),
				validateRequestBuffer(s), validateQuantities(s), bodiesErr)
		},
	}, btps).run()
	btpByRef := make(map[ir.PolicyRef]*pol[egv1a1.BackendTrafficPolicySpec], len(btps))
	for _, p := range btps {
		btpByRef[p.ref] = p
	}
	resolveRateLimits(x, btpByRef, t.Config.GlobalRateLimitOn())

	sortByAge(sps)
	se := newEngine(w, kindInfo[egv1a1.SecurityPolicySpec]{
		kind: "SecurityPolicy", plural: "securityPolicies", routeOverride: "securityPolicies",
		slot: func(r *ir.RoutePolicies) **ir.Applied[egv1a1.SecurityPolicySpec] { return &r.Security },
		deprecated: func(s *egv1a1.SecurityPolicySpec) map[string]string {
			m := map[string]string{}
			if s.ExtAuth != nil && s.ExtAuth.GRPC != nil && s.ExtAuth.GRPC.BackendRef != nil {
				m["spec.extAuth.grpc.backendRef"] = "spec.extAuth.grpc.backendRefs"
			}
			if s.ExtAuth != nil && s.ExtAuth.HTTP != nil && s.ExtAuth.HTTP.BackendRef != nil {
				m["spec.extAuth.http.backendRef"] = "spec.extAuth.http.backendRefs"
			}
			return m
		},
	}, sps)
	se.run()

	sortByAge(eeps)
	ee := newEngine(w, kindInfo[egv1a1.EnvoyExtensionPolicySpec]{
		kind: "EnvoyExtensionPolicy", plural: "envoyExtensionPolicies", routeOverride: "envoyExtensionPolicies",
		slot: func(r *ir.RoutePolicies) **ir.Applied[egv1a1.EnvoyExtensionPolicySpec] { return &r.Extension },
		// The Lua gate is EG's verdict on the policy itself, also where no route is in
		// its force (a Gateway policy every route overrides: EG's testdata
		// envoyextensionpolicy-lua-feature-disabled); the routes it is in force on fail
		// closed through the feature resolution.
		validate: func(a *ir.Applied[egv1a1.EnvoyExtensionPolicySpec], _ string) error {
			if s := a.Spec; len(s.Lua) > 0 && !t.Config.LuaEnabled(t.Profile.LuaDefaultOn) {
				return fmt.Errorf("Lua: %w", errLuaDisabled)
			}
			return nil
		},
	}, eeps)
	ee.run()

	// Features are resolved later (ResolveFeatures): only SecurityPolicies and
	// EnvoyExtensionPolicies can fail there.
	out.unmerge = []func(FeatureErrors){se.unmerge, ee.unmerge}
	out.render = func() []result.ObjectStatus {
		var all []result.ObjectStatus
		all = append(all, statuses(ctps, "ClientTrafficPolicy")...)
		all = append(all, statuses(btps, "BackendTrafficPolicy")...)
		all = append(all, statuses(sps, "SecurityPolicy")...)
		return append(all, statuses(eeps, "EnvoyExtensionPolicy")...)
	}
	out.Statuses = out.render()
	return out
}

func newPol[T any](kind string, obj metav1.Object, refs egv1a1.PolicyTargetReferences, mt *egv1a1.MergeType,
	spec *T) *pol[T] {
	return &pol[T]{
		ref:  ir.PolicyRef{Kind: kind, Namespace: obj.GetNamespace(), Name: obj.GetName()},
		meta: obj, refs: refs, mergeType: mt, spec: spec,
		usesTargetRef: refs.TargetRef != nil,
	}
}

// sortByAge is EG's policy order: oldest first, then namespace/name (POL-03).
func sortByAge[T any](ps []*pol[T]) {
	sort.SliceStable(ps, func(i, j int) bool {
		a, b := ps[i].meta.GetCreationTimestamp(), ps[j].meta.GetCreationTimestamp()
		if !a.Equal(&b) {
			return a.Before(&b)
		}
		if ps[i].ref.Namespace != ps[j].ref.Namespace {
			return ps[i].ref.Namespace < ps[j].ref.Namespace
		}
		return ps[i].ref.Name < ps[j].ref.Name
	})
}

func objectStatus(kind string, m metav1.Object, parents []result.ParentStatus) result.ObjectStatus {
	return result.ObjectStatus{
		Object:  resource.Ref{Kind: kind, Namespace: m.GetNamespace(), Name: m.GetName()},
		Parents: parents,
	}
}
