package admission

import (
	"fmt"

	egv1a1 "github.com/envoyproxy/gateway/api/v1alpha1"
	gwapiv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/egharness/egharness/translator/profile"
	"github.com/egharness/egharness/translator/resource"
)

// The EG policy CRDs' rules (EG v1.9 api/v1alpha1 kubebuilder markers, and v1.8's where
// the profile says so): which kinds a policy may target (SP-01, BTP-01, CTP-01, EEP-01),
// mergeType only with xRoute targets and never Replace (MRG-01, BTP-04),
// clientIPDetection's one-of (CTP-04) and apiKeyAuth.extractFrom (UPG-03).

// policyKinds is what one policy kind may target, per CRD version.
type policyKinds struct {
	targets, targetsV18 []string
	// label words the kinds in the rule's message ("Gateway/HTTPRoute/..." or "Gateway or
	// ListenerSet").
	label, labelV18 string
	// mergeTargets are the kinds mergeType allows; nil when the kind has no mergeType.
	mergeTargets []string
}

var (
	securityKinds = policyKinds{
		targets:      []string{"Gateway", "ListenerSet", "HTTPRoute", "GRPCRoute", "TCPRoute"},
		targetsV18:   []string{"Gateway", "HTTPRoute", "GRPCRoute", "TCPRoute"},
		label:        "Gateway/ListenerSet/HTTPRoute/GRPCRoute/TCPRoute",
		labelV18:     "Gateway/HTTPRoute/GRPCRoute/TCPRoute",
		mergeTargets: []string{"HTTPRoute", "GRPCRoute", "TCPRoute"},
	}
	// BackendTrafficPolicy and EnvoyExtensionPolicy take the same kinds.
	trafficKinds = policyKinds{
		targets:      []string{"Gateway", "ListenerSet", "HTTPRoute", "GRPCRoute", "UDPRoute", "TCPRoute", "TLSRoute"},
		targetsV18:   []string{"Gateway", "HTTPRoute", "GRPCRoute", "UDPRoute", "TCPRoute", "TLSRoute"},
		label:        "Gateway/ListenerSet/HTTPRoute/GRPCRoute/TCPRoute/UDPRoute/TLSRoute",
		labelV18:     "Gateway/HTTPRoute/GRPCRoute/TCPRoute/UDPRoute/TLSRoute",
		mergeTargets: []string{"HTTPRoute", "GRPCRoute", "UDPRoute", "TCPRoute", "TLSRoute"},
	}
	clientKinds = policyKinds{
		targets:    []string{"Gateway", "ListenerSet"},
		targetsV18: []string{"Gateway"},
		label:      "Gateway or ListenerSet",
		labelV18:   "Gateway",
	}
)

// policyProblems checks a policy object against its CRD's rules under the profile.
func policyProblems(o resource.Object, p profile.Profile) []problem {
	switch v := o.Obj.(type) {
	case *egv1a1.SecurityPolicy:
		out := targetProblems(v.Spec.PolicyTargetReferences, v.Spec.MergeType, securityKinds, "SecurityPolicy", p)
		if a := v.Spec.APIKeyAuth; a != nil && a.ExtractFrom == nil {
			// A required field in both versions' schema.
			out = append(out, problem{path: "spec.apiKeyAuth.extractFrom", tooMany: "spec.apiKeyAuth.extractFrom: Required value"})
		}
		if v.Spec.APIKeyAuth != nil && p.APIKeyExtractFromRules {
			out = append(out, apiKeyProblems(v.Spec.APIKeyAuth)...)
		}
		return out
	case *egv1a1.BackendTrafficPolicy:
		return targetProblems(v.Spec.PolicyTargetReferences, v.Spec.MergeType, trafficKinds, "BackendTrafficPolicySpec", p)
	case *egv1a1.EnvoyExtensionPolicy:
		return targetProblems(v.Spec.PolicyTargetReferences, v.Spec.MergeType, trafficKinds, "EnvoyExtensionPolicy", p)
	case *egv1a1.ClientTrafficPolicy:
		out := targetProblems(v.Spec.PolicyTargetReferences, nil, clientKinds, "", p)
		return append(out, clientIPProblems(v.Spec.ClientIPDetection, p)...)
	}
	return nil
}

func in(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// targetProblems are the spec-level CEL rules every policy CRD carries on its targets,
// and mergeType's. mergeName is how the Replace rule names the type.
func targetProblems(refs egv1a1.PolicyTargetReferences, mt *egv1a1.MergeType, k policyKinds, mergeName string, p profile.Profile) []problem {
	kinds, label := k.targets, k.label
	if !p.PolicyListenerSetTargets {
		kinds, label = k.targetsV18, k.labelV18
	}
	var out []problem
	tr, trs := refs.TargetRef != nil, len(refs.TargetRefs) > 0
	if !((tr && !trs) || (!tr && trs) || len(refs.TargetSelectors) > 0) {
		out = append(out, celProblem("spec", "either targetRef or targetRefs must be used"))
	}
	if tr && string(refs.TargetRef.Group) != gwapiv1.GroupName {
		out = append(out, celProblem("spec", "this policy can only have a targetRef.group of gateway.networking.k8s.io"))
	}
	if tr && !in(kinds, string(refs.TargetRef.Kind)) {
		out = append(out, celProblem("spec", "this policy can only have a targetRef.kind of "+label))
	}
	groupOK, kindOK := true, true
	for _, r := range refs.TargetRefs {
		groupOK = groupOK && string(r.Group) == gwapiv1.GroupName
		kindOK = kindOK && in(kinds, string(r.Kind))
	}
	if !groupOK {
		out = append(out, celProblem("spec", "this policy can only have a targetRefs[*].group of gateway.networking.k8s.io"))
	}
	if !kindOK {
		out = append(out, celProblem("spec", "this policy can only have a targetRefs[*].kind of "+label))
	}
	if mt != nil && k.mergeTargets != nil && p.MergeTypeXRouteOnly {
		ok := !tr || in(k.mergeTargets, string(refs.TargetRef.Kind))
		for _, r := range refs.TargetRefs {
			ok = ok && in(k.mergeTargets, string(r.Kind))
		}
		for _, s := range refs.TargetSelectors {
			ok = ok && in(k.mergeTargets, string(s.Kind))
		}
		if !ok {
			out = append(out, celProblem("spec", "mergeType can only be used with xRoute targets"))
		}
	}
	if mt != nil && *mt == "Replace" {
		out = append(out, problem{path: "spec.mergeType", value: "string", detail: "Replace is not a valid MergeType for " + mergeName})
	}
	for i, s := range refs.TargetSelectors {
		if s.Group != nil && string(*s.Group) != gwapiv1.GroupName {
			out = append(out, celProblem(fmt.Sprintf("spec.targetSelectors[%d]", i), "group must be gateway.networking.k8s.io"))
		}
		if s.Namespaces != nil && s.Namespaces.From == egv1a1.TargetNamespaceFromSelector && s.Namespaces.Selector == nil {
			out = append(out, celProblem(fmt.Sprintf("spec.targetSelectors[%d].namespaces", i), "selector must be specified when from is Selector"))
		}
	}
	return out
}

// clientIPProblems: v1.9 wants exactly one way of finding the client address (CTP-04);
// v1.8 only refused xForwardedFor with customHeader. Both refuse numTrustedHops with
// trustedCIDRs.
func clientIPProblems(c *egv1a1.ClientIPDetectionSettings, p profile.Profile) []problem {
	if c == nil {
		return nil
	}
	var out []problem
	n := 0
	for _, set := range []bool{c.XForwardedFor != nil, c.CustomHeader != nil, p.ClientIPDetectionExactlyOne && c.DirectSourceIP != nil} {
		if set {
			n++
		}
	}
	switch {
	case p.ClientIPDetectionExactlyOne && n != 1:
		out = append(out, celProblem("spec.clientIPDetection", "exactly one of xForwardedFor, customHeader, or directSourceIP must be set"))
	case !p.ClientIPDetectionExactlyOne && c.XForwardedFor != nil && c.CustomHeader != nil:
		out = append(out, celProblem("spec.clientIPDetection", "customHeader cannot be used in conjunction with xForwardedFor"))
	}
	if x := c.XForwardedFor; x != nil && (x.NumTrustedHops != nil) == (len(x.TrustedCIDRs) > 0) {
		out = append(out, celProblem("spec.clientIPDetection.xForwardedFor", "only one of numTrustedHops or trustedCIDRs must be set"))
	}
	return out
}

// apiKeyProblems are v1.9's rules on apiKeyAuth.extractFrom (UPG-03): at least one entry;
// in each, exactly one of headers, params and cookies, as a non-empty list of non-empty
// names. The schema's own checks (list sizes, name lengths) come before the CEL rule.
func apiKeyProblems(a *egv1a1.APIKeyAuth) []problem {
	const base = "spec.apiKeyAuth.extractFrom"
	var schema, cel []problem
	if a.ExtractFrom != nil && len(a.ExtractFrom) == 0 {
		schema = append(schema, problem{path: base, tooMany: fmt.Sprintf("%s: Invalid value: 0: %s in body should have at least 1 items", base, base)})
	}
	for i, e := range a.ExtractFrom {
		if e == nil {
			continue
		}
		p := fmt.Sprintf("%s[%d]", base, i)
		set := 0
		for _, l := range []struct {
			name  string
			names []string
		}{{"headers", e.Headers}, {"params", e.Params}, {"cookies", e.Cookies}} {
			if l.names == nil {
				continue
			}
			set++
			lp := p + "." + l.name
			if len(l.names) == 0 {
				schema = append(schema, problem{path: lp, tooMany: fmt.Sprintf("%s: Invalid value: 0: %s in body should have at least 1 items", lp, lp)})
			}
			for k, n := range l.names {
				if n == "" {
					np := fmt.Sprintf("%s[%d]", lp, k)
					schema = append(schema, problem{path: np, tooMany: fmt.Sprintf("%s: Invalid value: \"\": %s in body should be at least 1 chars long", np, np)})
				}
			}
		}
		if set != 1 {
			cel = append(cel, celProblem(p, "exactly one of headers, params, or cookies must be specified"))
		}
	}
	return append(schema, cel...)
}
