package policy

import (
	"time"

	egv1a1 "github.com/envoyproxy/gateway/api/v1alpha1"

	"github.com/egharness/egharness/translator/ir"
)

// A SecurityPolicy's jwt (EG v1.9), resolved into ir.JWT. What cannot be built (no key
// set, a remote key set through backendRefs) is reported by the xDS stage as it builds the
// providers, as before.

// jwksCacheDefault is remoteJWKS.cacheDuration's CRD default: the API server stores it on
// every policy, so a policy that reaches here without it gets it too.
const jwksCacheDefault = "300s"

func resolveJWT(j *egv1a1.JWT) *ir.JWT {
	if j == nil {
		return nil
	}
	out := &ir.JWT{FailOpen: j.FailOpen != nil && *j.FailOpen, Optional: j.Optional != nil && *j.Optional}
	for _, p := range j.Providers {
		out.Providers = append(out.Providers, jwtProvider(p))
	}
	return out
}

func jwtProvider(p egv1a1.JWTProvider) ir.JWTProvider {
	out := ir.JWTProvider{Name: p.Name, Issuer: p.Issuer, Audiences: p.Audiences,
		RecomputeRoute: p.RecomputeRoute != nil && *p.RecomputeRoute}
	for _, c := range p.ClaimToHeaders {
		out.ClaimToHeaders = append(out.ClaimToHeaders, ir.JWTClaimToHeader{Header: c.Header, Claim: c.Claim})
	}
	if p.LocalJWKS != nil {
		out.LocalJWKS = &ir.JWTLocalJWKS{Inline: p.LocalJWKS.Inline}
	}
	if rj := p.RemoteJWKS; rj != nil {
		cache := jwksCacheDefault
		if rj.CacheDuration != nil {
			cache = string(*rj.CacheDuration)
		}
		remote := &ir.JWTRemoteJWKS{URI: rj.URI, BackendRefs: len(rj.BackendRefs) > 0, CacheDuration: parsedOrNil(cache)}
		if remote.BackendRefs {
			remote.Cluster, remote.Retry = resolveClusterSettings(rj.BackendSettings), resolveServiceRetry(rj.BackendSettings)
		}
		if rj.FailedRefetchDuration != nil {
			remote.FailedRefetchDuration = parsedOrNil(string(*rj.FailedRefetchDuration))
		}
		out.RemoteJWKS = remote
	}
	if e := p.ExtractFrom; e != nil {
		from := &ir.JWTExtractFrom{Cookies: e.Cookies, Params: e.Params}
		for _, h := range e.Headers {
			header := ir.JWTHeader{Name: h.Name}
			if h.ValuePrefix != nil {
				header.ValuePrefix = *h.ValuePrefix
			}
			from.Headers = append(from.Headers, header)
		}
		out.ExtractFrom = from
	}
	return out
}

// parsedOrNil is the duration s, nil when it does not parse.
func parsedOrNil(s string) *time.Duration {
	d, err := time.ParseDuration(s)
	if err != nil {
		return nil
	}
	return &d
}
