// Package admission is the first stage of the reference translator: what the Kubernetes API
// server would refuse on create (schema patterns and CEL rules of the CRDs), with its
// message. A refused object never reaches translation.
package admission

import (
	"fmt"
	"regexp"
	"strings"

	egv1a1 "github.com/envoyproxy/gateway/api/v1alpha1"
	gwapiv1 "sigs.k8s.io/gateway-api/apis/v1"
	gwapiv1a3 "sigs.k8s.io/gateway-api/apis/v1alpha3"

	"github.com/egharness/egharness/translator/profile"
	"github.com/egharness/egharness/translator/resource"
	"github.com/egharness/egharness/translator/result"
)

// hostnamePattern is Gateway API's Hostname schema pattern. It refuses ports and upper
// case but, as written, lets IPv4 addresses through (RT-02).
const hostnamePattern = `^(\*\.)?[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`

var hostnameRE = regexp.MustCompile(hostnamePattern)

// Review decides every object; the allowed ones are returned for translation.
func Review(objs []resource.Object, p profile.Profile) ([]result.Admission, []resource.Object) {
	verdicts := make([]result.Admission, 0, len(objs))
	admitted := make([]resource.Object, 0, len(objs))
	for _, o := range objs {
		problems := append(check(o), policyProblems(o, p)...)
		v := result.Admission{Object: o.Ref(), Allowed: len(problems) == 0}
		if !v.Allowed {
			v.Message = invalidMessage(o, problems)
		} else {
			admitted = append(admitted, o)
		}
		verdicts = append(verdicts, v)
	}
	return verdicts, admitted
}

// problem is one refusal: a schema pattern (with the offending value) or a CEL rule
// (value empty: the message is the rule's own).
type problem struct {
	path, value, detail string
	tooMany             string // a structural refusal (list too long, required field), already worded
}

func check(o resource.Object) []problem {
	var out []problem
	hostname := func(path, h string) {
		if !hostnameRE.MatchString(h) {
			out = append(out, problem{path: path, value: h, detail: fmt.Sprintf("%s in body should match '%s'", path, hostnamePattern)})
		}
	}
	switch v := o.Obj.(type) {
	case *gwapiv1.HTTPRoute:
		for i, h := range v.Spec.Hostnames {
			hostname(fmt.Sprintf("spec.hostnames[%d]", i), string(h))
		}
		out = append(out, httpRouteRuleProblems(v)...)
	case *gwapiv1.GRPCRoute:
		for i, rule := range v.Spec.Rules {
			for k, br := range rule.BackendRefs {
				out = append(out, backendPortProblems(fmt.Sprintf("spec.rules[%d].backendRefs[%d]", i, k), br.BackendObjectReference)...)
			}
		}
	case *egv1a1.EnvoyPatchPolicy:
		out = append(out, envoyPatchPolicyProblems(v)...)
	case *gwapiv1.BackendTLSPolicy:
		out = append(out, backendTLSPolicyProblems(v)...)
	case *gwapiv1a3.BackendTLSPolicy:
		p := gwapiv1.BackendTLSPolicy(*v)
		out = append(out, backendTLSPolicyProblems(&p)...)
	case *egv1a1.Backend:
		out = append(out, backendProblems(v)...)
	case *gwapiv1.TCPRoute:
		out = append(out, maxItems("spec.rules", len(v.Spec.Rules), 1)...)
	case *gwapiv1.UDPRoute:
		out = append(out, maxItems("spec.rules", len(v.Spec.Rules), 1)...)
	case *gwapiv1.TLSRoute:
		// TLSRoute v1 routes by SNI only: it must name at least one hostname.
		if len(v.Spec.Hostnames) == 0 {
			out = append(out, problem{path: "spec.hostnames", tooMany: "spec.hostnames: Required value"})
		}
		for i, h := range v.Spec.Hostnames {
			hostname(fmt.Sprintf("spec.hostnames[%d]", i), string(h))
		}
	case *gwapiv1.Gateway:
		type key struct {
			port  int32
			proto string
			host  string
		}
		names := map[string]bool{}
		combos := map[key]bool{}
		var dupName, dupCombo bool
		for i, l := range v.Spec.Listeners {
			if l.Hostname != nil {
				hostname(fmt.Sprintf("spec.listeners[%d].hostname", i), string(*l.Hostname))
			}
			k := key{int32(l.Port), string(l.Protocol), ""}
			if l.Hostname != nil {
				k.host = string(*l.Hostname)
			}
			dupName = dupName || names[string(l.Name)]
			dupCombo = dupCombo || combos[k]
			names[string(l.Name)], combos[k] = true, true
		}
		// The Gateway CRD's CEL rules over the listener list.
		var tlsOnPlain, httpsNotTerminate, tlsNoMode, hostOnL4 bool
		for _, l := range v.Spec.Listeners {
			switch l.Protocol {
			case gwapiv1.HTTPProtocolType, gwapiv1.TCPProtocolType, gwapiv1.UDPProtocolType:
				tlsOnPlain = tlsOnPlain || l.TLS != nil
			case gwapiv1.HTTPSProtocolType:
				httpsNotTerminate = httpsNotTerminate || l.TLS != nil && l.TLS.Mode != nil && *l.TLS.Mode != "" && *l.TLS.Mode != gwapiv1.TLSModeTerminate
			case gwapiv1.TLSProtocolType:
				tlsNoMode = tlsNoMode || l.TLS == nil || l.TLS.Mode == nil || *l.TLS.Mode == ""
			}
			if (l.Protocol == gwapiv1.TCPProtocolType || l.Protocol == gwapiv1.UDPProtocolType) && l.Hostname != nil && *l.Hostname != "" {
				hostOnL4 = true
			}
		}
		for _, rule := range []struct {
			broken bool
			msg    string
		}{
			{tlsOnPlain, "tls must not be specified for protocols ['HTTP', 'TCP', 'UDP']"},
			{httpsNotTerminate, "tls mode must be Terminate for protocol HTTPS"},
			{tlsNoMode, "tls mode must be set for protocol TLS"},
			{hostOnL4, "hostname must not be specified for protocols ['TCP', 'UDP']"},
		} {
			if rule.broken {
				out = append(out, problem{path: "spec.listeners", detail: rule.msg})
			}
		}
		if dupName {
			out = append(out, problem{path: "spec.listeners", detail: "Listener name must be unique within the Gateway"})
		}
		if dupCombo {
			out = append(out, problem{path: "spec.listeners", detail: "Combination of port, protocol and hostname must be unique for each listener"})
		}
	}
	return out
}

// maxItems is the schema's list length limit.
func maxItems(path string, n, limit int) []problem {
	if n <= limit {
		return nil
	}
	return []problem{{path: path, tooMany: fmt.Sprintf("%s: Too many: %d: must have at most %d item", path, n, limit)}}
}

// invalidMessage writes the refusal the way the API server words it.
func invalidMessage(o resource.Object, ps []problem) string {
	group := ""
	if i := strings.Index(o.APIVersion, "/"); i > 0 {
		group = "." + o.APIVersion[:i]
	}
	parts := make([]string, 0, len(ps))
	for _, p := range ps {
		if p.tooMany != "" {
			parts = append(parts, p.tooMany)
			continue
		}
		if p.value == "" {
			parts = append(parts, fmt.Sprintf("%s: Invalid value: %s", p.path, p.detail))
			continue
		}
		parts = append(parts, fmt.Sprintf("%s: Invalid value: %q: %s", p.path, p.value, p.detail))
	}
	body := parts[0]
	if len(parts) > 1 {
		body = "[" + strings.Join(parts, ", ") + "]"
	}
	return fmt.Sprintf("%s%s %q is invalid: %s", o.Kind, group, o.Obj.GetName(), body)
}
