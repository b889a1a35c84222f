package patch

import (
	"fmt"

	egv1a1 "github.com/envoyproxy/gateway/api/v1alpha1"
	gwapiv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/egharness/egharness/translator/conditions"
	"github.com/egharness/egharness/translator/resource"
	"github.com/egharness/egharness/translator/result"
)

// targets are what an EnvoyPatchPolicy can attach to: the Gateways EG translates (their
// GatewayClass is EG's and accepted) and, with mergeGateways, the GatewayClasses that have
// at least one such Gateway (EG keys the merged proxy's xDS by the class name).
type targets struct {
	gateways map[resource.Ref]bool // Gateway/ns/name
	classes  map[string]bool
}

func targetsOf(objs []resource.Object, statuses []result.ObjectStatus) targets {
	accepted := map[string]bool{}
	for _, st := range statuses {
		if st.Object.Kind != "GatewayClass" {
			continue
		}
		for _, c := range st.Conditions {
			if c.Type == string(gwapiv1.GatewayClassConditionStatusAccepted) && c.Status == "True" {
				accepted[st.Object.Name] = true
			}
		}
	}
	t := targets{gateways: map[resource.Ref]bool{}, classes: map[string]bool{}}
	for _, o := range objs {
		gw, ok := o.Obj.(*gwapiv1.Gateway)
		if !ok || !accepted[string(gw.Spec.GatewayClassName)] {
			continue
		}
		t.gateways[resource.Ref{Kind: "Gateway", Namespace: gw.Namespace, Name: gw.Name}] = true
		t.classes[string(gw.Spec.GatewayClassName)] = true
	}
	return t
}

// decision is what EG decides about one policy before any patch runs.
type decision struct {
	accepted bool
	// why a policy that is not accepted applies nothing, for its operations' records.
	why string
	// ancestor is the status entry EG writes; nil when EG writes none (a Gateway target
	// that EG does not translate).
	ancestor   *result.ParentRef
	conditions []result.Condition
}

// controllerName is EG's controller, which writes the policy's ancestor entries.
const controllerName = "gateway.envoyproxy.io/gatewayclass-controller"

// Accepted condition messages and reasons, as EG v1.9 writes them.
const (
	msgAccepted = "Policy has been accepted."
	msgDisabled = "EnvoyPatchPolicy is disabled in the EnvoyGateway configuration"
)

// decide applies EG's target rules (EPP-02) and the gate (EPP-01), in EG's order: an
// unknown target first (a Gateway: no status at all; a GatewayClass under mergeGateways:
// Invalid), then the gate, then the target's group and kind.
func (s Stage) decide(p *egv1a1.EnvoyPatchPolicy, t targets) decision {
	ref := p.Spec.TargetRef
	var d decision
	kind := "Gateway"
	if s.MergeGateways {
		kind = "GatewayClass"
		d.ancestor = &result.ParentRef{Kind: kind, Name: string(ref.Name)}
		if !t.classes[string(ref.Name)] {
			msg := fmt.Sprintf(
				"TargetRef.Group:%s TargetRef.Kind:%s TargetRef.Namespace:%s TargetRef.Name:%s not found or not "+
					"accepted (MergeGateways=%t).",
				ref.Group, ref.Kind, p.Namespace, ref.Name, s.MergeGateways)
			d.why = "with mergeGateways the target must be an accepted GatewayClass: " + msg
			d.conditions = []result.Condition{accepted("False", string(gwapiv1.PolicyReasonInvalid), msg)}
			return d
		}
	} else {
		gw := resource.Ref{Kind: "Gateway", Namespace: p.Namespace, Name: string(ref.Name)}
		if !t.gateways[gw] {
			d.why = fmt.Sprintf(
				"no Gateway %s/%s that EG translates (the target is looked up by name in the policy's namespace); "+
					"EG gives the policy no status",
				p.Namespace, ref.Name)
			return d
		}
		d.ancestor = &result.ParentRef{Kind: kind, Namespace: p.Namespace, Name: string(ref.Name)}
	}
	if !s.Enabled {
		d.why = "EnvoyPatchPolicy is disabled (extensionApis.enableEnvoyPatchPolicy is not true)"
		d.conditions = []result.Condition{accepted("False", string(egv1a1.PolicyReasonDisabled), msgDisabled)}
		return d
	}
	if string(ref.Group) != gwapiv1.GroupName || string(ref.Kind) != kind {
		msg := fmt.Sprintf(
			"TargetRef.Group:%s TargetRef.Kind:%s, only TargetRef.Group:%s and TargetRef.Kind:%s is supported.",
			ref.Group, ref.Kind, gwapiv1.GroupName, kind)
		d.why = "wrong target: " + msg
		d.conditions = []result.Condition{accepted("False", string(gwapiv1.PolicyReasonInvalid), msg)}
		return d
	}
	d.accepted = true
	d.conditions = []result.Condition{accepted("True", string(gwapiv1.PolicyReasonAccepted), msgAccepted)}
	return d
}

func accepted(status, reason, msg string) result.Condition {
	return result.Condition{Type: string(gwapiv1.PolicyConditionAccepted), Status: status, Reason: reason,
		Message: conditions.Truncate(msg)}
}

func policyStatus(ref resource.Ref, ancestor result.ParentRef, conds []result.Condition) result.ObjectStatus {
	return result.ObjectStatus{Object: ref, Conditions: []result.Condition{},
		Parents: []result.ParentStatus{{Ref: ancestor, ControllerName: controllerName, Conditions: conds}}}
}
