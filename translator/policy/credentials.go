package policy

import (
	egv1a1 "github.com/envoyproxy/gateway/api/v1alpha1"

	"github.com/egharness/egharness/translator/ir"
)

// A SecurityPolicy's basicAuth and apiKeyAuth settings (EG v1.9), resolved into
// ir.BasicAuth and ir.APIKeyAuth; their Secrets are read into PolicyData by
// resolveSecurity.

func resolveBasicAuth(a *ir.Applied[egv1a1.SecurityPolicySpec]) *ir.BasicAuth {
	b := a.Spec.BasicAuth
	if b == nil {
		return nil
	}
	out := &ir.BasicAuth{Owner: a.OwnerOf("basicAuth")}
	if b.ForwardUsernameHeader != nil {
		out.ForwardUsernameHeader = *b.ForwardUsernameHeader
	}
	return out
}

// resolveAPIKeyAuth keeps the key sources in EG's order: per extractFrom entry, its
// headers, then its query parameters, then its cookies.
func resolveAPIKeyAuth(k *egv1a1.APIKeyAuth) *ir.APIKeyAuth {
	if k == nil {
		return nil
	}
	out := &ir.APIKeyAuth{Sanitize: k.Sanitize != nil && *k.Sanitize}
	if k.ForwardClientIDHeader != nil {
		out.ForwardClientIDHeader = *k.ForwardClientIDHeader
	}
	for _, e := range k.ExtractFrom {
		if e == nil {
			continue
		}
		for _, h := range e.Headers {
			out.KeySources = append(out.KeySources, ir.APIKeySource{Header: h})
		}
		for _, p := range e.Params {
			out.KeySources = append(out.KeySources, ir.APIKeySource{Query: p})
		}
		for _, c := range e.Cookies {
			out.KeySources = append(out.KeySources, ir.APIKeySource{Cookie: c})
		}
	}
	return out
}
