package admission

import (
	"fmt"

	egv1a1 "github.com/envoyproxy/gateway/api/v1alpha1"
)

// backendProblems are the CEL rules of EG's Backend CRD: each endpoint is exactly one of
// fqdn, ip or unix; FQDN endpoints are not mixed with others; a DynamicResolver has no
// endpoints and no endpoint-hostname SNI; and spec.tls keeps its trust settings apart (CA
// refs xor well-known CAs, neither with insecureSkipVerify, sni xor
// autoSNIFromEndpointHostname, which needs a hostname on IP and unix endpoints).
func backendProblems(b *egv1a1.Backend) []problem {
	var out []problem
	s := b.Spec
	dynamic := s.Type != nil && *s.Type == egv1a1.BackendTypeDynamicResolver
	autoHostSNI := s.TLS != nil && s.TLS.AutoSNIFromEndpointHostname != nil && *s.TLS.AutoSNIFromEndpointHostname
	if dynamic && s.Endpoints != nil {
		out = append(out, celProblem("spec", "DynamicResolver type cannot have endpoints specified"))
	}
	if dynamic && autoHostSNI {
		out = append(out, celProblem("spec", "DynamicResolver type cannot use autoSNIFromEndpointHostname"))
	}
	if autoHostSNI {
		for _, e := range s.Endpoints {
			if (e.IP != nil || e.Unix != nil) && e.Hostname == nil {
				out = append(out, celProblem("spec", "when autoSNIFromEndpointHostname is enabled, IP and Unix endpoints must define a hostname"))
				break
			}
		}
	}
	fqdn := 0
	for i, e := range s.Endpoints {
		n := 0
		for _, set := range []bool{e.FQDN != nil, e.IP != nil, e.Unix != nil} {
			if set {
				n++
			}
		}
		path := fmt.Sprintf("spec.endpoints[%d]", i)
		switch {
		case n == 0:
			out = append(out, celProblem(path, "one of fqdn, ip or unix must be specified"))
		case n > 1:
			out = append(out, celProblem(path, "only one of fqdn, ip or unix can be specified"))
		}
		if e.FQDN != nil {
			fqdn++
		}
	}
	if fqdn > 0 && fqdn < len(s.Endpoints) {
		out = append(out, problem{path: "spec.endpoints", value: "array", detail: "fqdn addresses cannot be mixed with other address types"})
	}
	if t := s.TLS; t != nil {
		refs := len(t.CACertificateRefs) > 0
		wellKnown := t.WellKnownCACertificates != nil && *t.WellKnownCACertificates != ""
		if refs && wellKnown {
			out = append(out, celProblem("spec.tls", "must not contain both CACertificateRefs and WellKnownCACertificates"))
		}
		if t.InsecureSkipVerify != nil && *t.InsecureSkipVerify && (refs || wellKnown) {
			out = append(out, celProblem("spec.tls", "must not contain either CACertificateRefs or WellKnownCACertificates when InsecureSkipVerify is enabled"))
		}
		if t.SNI != nil && autoHostSNI {
			out = append(out, celProblem("spec.tls", "sni and autoSNIFromEndpointHostname are mutually exclusive"))
		}
	}
	return out
}
