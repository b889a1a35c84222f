package admission

import (
	"fmt"
	"regexp"

	gwapiv1 "sigs.k8s.io/gateway-api/apis/v1"
)

// preciseHostnamePattern is Gateway API's PreciseHostname: no wildcard. Like Hostname it
// lets IPv4 addresses through, and EG does not refuse them either.
const preciseHostnamePattern = `^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`

var preciseHostnameRE = regexp.MustCompile(preciseHostnamePattern)

// backendTLSPolicyProblems are the BackendTLSPolicy CRD's rules (BTLS-01): CA refs xor a
// well-known CA, a precise SNI hostname, subjectAltNames that match their type, and
// sectionNames that keep several targetRefs to one object apart.
func backendTLSPolicyProblems(p *gwapiv1.BackendTLSPolicy) []problem {
	var out []problem
	v := p.Spec.Validation
	if h := string(v.Hostname); !preciseHostnameRE.MatchString(h) {
		out = append(out, problem{path: "spec.validation.hostname", value: h,
			detail: fmt.Sprintf("spec.validation.hostname in body should match '%s'", preciseHostnamePattern)})
	}
	for i, san := range v.SubjectAltNames {
		path := fmt.Sprintf("spec.validation.subjectAltNames[%d]", i)
		switch {
		case san.Type == gwapiv1.HostnameSubjectAltNameType && san.Hostname == "":
			out = append(out, celProblem(path, "SubjectAltName element must contain Hostname, if Type is set to Hostname"))
		case san.Type != gwapiv1.HostnameSubjectAltNameType && san.Hostname != "":
			out = append(out, celProblem(path, "SubjectAltName element must not contain Hostname, if Type is not set to Hostname"))
		case san.Type == gwapiv1.URISubjectAltNameType && san.URI == "":
			out = append(out, celProblem(path, "SubjectAltName element must contain URI, if Type is set to URI"))
		case san.Type != gwapiv1.URISubjectAltNameType && san.URI != "":
			out = append(out, celProblem(path, "SubjectAltName element must not contain URI, if Type is not set to URI"))
		}
	}
	wellKnown := v.WellKnownCACertificates != nil && *v.WellKnownCACertificates != ""
	switch {
	case len(v.CACertificateRefs) > 0 && wellKnown:
		out = append(out, celProblem("spec.validation", "must not contain both CACertificateRefs and WellKnownCACertificates"))
	case len(v.CACertificateRefs) == 0 && !wellKnown:
		out = append(out, celProblem("spec.validation", "must specify either CACertificateRefs or WellKnownCACertificates"))
	}
	type target struct{ group, kind, name string }
	sections := map[target][]string{}
	for _, t := range p.Spec.TargetRefs {
		s := ""
		if t.SectionName != nil {
			s = string(*t.SectionName)
		}
		k := target{string(t.Group), string(t.Kind), string(t.Name)}
		sections[k] = append(sections[k], s)
	}
	var mixed, dup bool
	for _, ss := range sections {
		seen := map[string]bool{}
		for _, s := range ss {
			mixed = mixed || (s == "") != (ss[0] == "")
			dup = dup || seen[s]
			seen[s] = true
		}
	}
	if mixed {
		out = append(out, problem{path: "spec.targetRefs", value: "array", detail: "sectionName must be specified when targetRefs includes 2 or more references to the same target"})
	}
	if dup {
		out = append(out, problem{path: "spec.targetRefs", value: "array", detail: "sectionName must be unique when targetRefs includes 2 or more references to the same target"})
	}
	return out
}
