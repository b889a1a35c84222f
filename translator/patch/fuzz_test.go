package patch_test

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	egv1a1 "github.com/envoyproxy/gateway/api/v1alpha1"
	"google.golang.org/protobuf/proto"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	gwapiv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/egharness/egharness/harness/scenario"
	"github.com/egharness/egharness/harness/scenario/scenariotest"
	"github.com/egharness/egharness/translator"
	"github.com/egharness/egharness/translator/patch"
	"github.com/egharness/egharness/translator/profile"
	"github.com/egharness/egharness/translator/resource"
	"github.com/egharness/egharness/translator/result"
)

// base is one scenario's translation without its EnvoyPatchPolicies: what patches apply to.
type base struct {
	objs     []resource.Object
	statuses []result.ObjectStatus
	xds      result.XDS // cloned before every run, so that each patches a fresh copy
	gateway  resource.Ref
	class    string
	v2       bool
}

// bases translates every scenario that has a Gateway, under its first profile.
func bases(f *testing.F) ([]base, []*scenario.Scenario) {
	set := scenariotest.Load(f, "../../scenarios")
	var out []base
	var from []*scenario.Scenario
	for _, s := range set.Scenarios {
		prof, err := profile.Get(s.ProfilesOrDefault()[0])
		if err != nil {
			f.Fatal(err)
		}
		var objs []resource.Object
		for _, o := range s.Objects {
			if o.Kind != egv1a1.KindEnvoyPatchPolicy {
				objs = append(objs, o)
			}
		}
		cfg := s.Settings
		cfg.ExtensionAPIs = nil // no patches in the base
		res, err := translator.Translate(translator.Input{Objects: objs, Config: cfg, Profile: prof})
		if err != nil {
			f.Fatal(err)
		}
		b := base{objs: objs, statuses: res.Statuses, v2: prof.FlagOn(egv1a1.XDSNameSchemeV2, cfg.RuntimeFlags)}
		for _, o := range objs {
			if gw, ok := o.Obj.(*gwapiv1.Gateway); ok && res.Status(o.Ref()) != nil {
				b.gateway, b.class = o.Ref(), string(gw.Spec.GatewayClassName)
				break
			}
		}
		if b.gateway.Name == "" {
			continue
		}
		b.xds = res.XDS
		out = append(out, b)
		from = append(from, s)
	}
	return out, from
}

// FuzzApplyPatch applies mutated JSON-patch operation lists to the xDS of every scenario.
// Seeds are the operations of the scenarios' own EnvoyPatchPolicies (applied to their own
// scenario's xDS and to others'). Whatever the operations, the stage must not panic, must
// give exactly one record per operation in order, a reason for every miss (one of the
// documented kinds) and none for a hit, Programmed on an accepted policy, a snapshot that
// still prints, and the same bytes for the same input.
func FuzzApplyPatch(f *testing.F) {
	bs, from := bases(f)
	if len(bs) == 0 {
		f.Fatal("no scenario with a Gateway")
	}
	for i, s := range from {
		for _, o := range s.Objects {
			p, ok := o.Obj.(*egv1a1.EnvoyPatchPolicy)
			if !ok {
				continue
			}
			ops, err := json.Marshal(p.Spec.JSONPatches)
			if err != nil {
				f.Fatal(err)
			}
			f.Add(uint8(i), ops, uint8(1))
			f.Add(uint8(i+1), ops, uint8(3))
		}
	}
	f.Add(uint8(0),
		[]byte(
			`[{"type":"type.googleapis.com/envoy.config.listener.v3.Listener","name":"x","operation":{"op":"add","path":""}}]`),
		uint8(1))
	f.Add(uint8(0), []byte(`[{"type":"bogus","name":"","operation":{"op":"copy","from":"/a","jsonPath":"$..*"}}]`),
		uint8(0))

	f.Fuzz(func(t *testing.T, which uint8, opsJSON []byte, flags uint8) {
		var ops []egv1a1.EnvoyJSONPatchConfig
		if json.Unmarshal(opsJSON, &ops) != nil || len(ops) > 64 {
			return
		}
		b := bs[int(which)%len(bs)]
		stage := patch.Stage{Enabled: flags&1 != 0, MergeGateways: flags&2 != 0, NameSchemeV2: b.v2}
		target := gwapiv1.LocalPolicyTargetReference{Group: gwapiv1.GroupName, Kind: "Gateway",
			Name: gwapiv1.ObjectName(b.gateway.Name)}
		if stage.MergeGateways {
			target.Kind, target.Name = "GatewayClass", gwapiv1.ObjectName(b.class)
		}
		policy := &egv1a1.EnvoyPatchPolicy{
			ObjectMeta: metav1.ObjectMeta{Name: "fuzz", Namespace: b.gateway.Namespace},
			Spec:       egv1a1.EnvoyPatchPolicySpec{Type: egv1a1.JSONPatchEnvoyPatchType, TargetRef: target, JSONPatches: ops},
		}
		objs := append(append([]resource.Object(nil), b.objs...),
			resource.Object{Obj: policy, Kind: egv1a1.KindEnvoyPatchPolicy})

		run := func() (patch.Output, []byte) {
			x := cloneXDS(b.xds)
			out := stage.Apply(objs, b.statuses, &x)
			printed, err := json.Marshal(x)
			if err != nil {
				t.Fatalf("the patched snapshot does not print: %v", err)
			}
			return out, printed
		}
		out, printed := run()
		if len(out.Patches) != len(ops) {
			t.Fatalf("%d records for %d operations", len(out.Patches), len(ops))
		}
		kinds := []string{patch.ReasonNotApplied, patch.ReasonNoResource, patch.ReasonNoPath, patch.ReasonTestFailed,
			patch.ReasonInvalidResult, patch.ReasonInvalidOperation, patch.ReasonRefused}
		for i, rec := range out.Patches {
			if rec.Operation != i || rec.Policy.Name != "fuzz" {
				t.Fatalf("record %d is %+v", i, rec)
			}
			if rec.Hit != (rec.Reason == "") {
				t.Fatalf("record %d: hit=%t with reason %q", i, rec.Hit, rec.Reason)
			}
			if !rec.Hit && !hasKind(rec.Reason, kinds) {
				t.Fatalf("record %d: reason of no known kind: %q", i, rec.Reason)
			}
		}
		for _, st := range out.Statuses {
			for _, ps := range st.Parents {
				if len(ps.Conditions) == 0 || ps.Conditions[0].Type != "Accepted" {
					t.Fatalf("ancestor without Accepted first: %+v", ps)
				}
				accepted := ps.Conditions[0].Status == "True"
				if accepted != (len(ps.Conditions) == 2 && ps.Conditions[1].Type == "Programmed") {
					t.Fatalf("Programmed must follow exactly an accepted policy: %+v", ps.Conditions)
				}
			}
		}
		out2, printed2 := run()
		if !bytes.Equal(printed, printed2) {
			t.Fatal("the same operations patched the snapshot differently twice")
		}
		r1, _ := json.Marshal(out)
		r2, _ := json.Marshal(out2)
		if !bytes.Equal(r1, r2) {
			t.Fatal("the same operations gave different records or statuses twice")
		}
	})
}

func hasKind(reason string, kinds []string) bool {
	for _, k := range kinds {
		if strings.HasPrefix(reason, k+": ") {
			return true
		}
	}
	return false
}

func cloneXDS(x result.XDS) result.XDS {
	return result.XDS{Listeners: cloneAll(x.Listeners), Routes: cloneAll(x.Routes), Clusters: cloneAll(x.Clusters),
		Endpoints: cloneAll(x.Endpoints), Secrets: cloneAll(x.Secrets)}
}

func cloneAll[T proto.Message](list []T) []T {
	out := make([]T, len(list))
	for i, m := range list {
		out[i] = proto.Clone(m).(T)
	}
	return out
}
