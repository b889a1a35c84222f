package xds

import (
	"fmt"

	egv1a1 "github.com/envoyproxy/gateway/api/v1alpha1"
	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	routev3 "github.com/envoyproxy/go-control-plane/envoy/config/route/v3"
	apikeyauthv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/http/api_key_auth/v3"
	basicauthv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/http/basic_auth/v3"

	"github.com/egharness/egharness/translator/ir"
)

const (
	basicAuthFilterType = ir.FilterBasicAuth
	apiKeyAuthFilter    = ir.FilterAPIKeyAuth
)

// fieldOwner is the policy a top-level spec field came from: the policy itself, or after
// a merge the parent that declared it (MRG-05). EG names per-policy filters after that
// owner, also when parent and child are in the same namespace.
func fieldOwner[T any](a *ir.Applied[T], field string) ir.PolicyRef {
	return a.OwnerOf(field)
}

// addBasicAuth adds one basic_auth filter per owning policy, disabled on the listener, and
// enables it on the route with the users as per-route config (SP-03).
func (s *httpFilterSet) addBasicAuth(out *routev3.Route, r *ir.HTTPRoute, a *ir.Applied[egv1a1.SecurityPolicySpec]) error {
	if r.PolicyData == nil || len(r.PolicyData.BasicAuthUsers) == 0 {
		return fmt.Errorf("basicAuth: users not resolved")
	}
	owner := fieldOwner(a, "basicAuth")
	name := fmt.Sprintf("%s/securitypolicy/%s/%s", basicAuthFilterType, owner.Namespace, owner.Name)
	users := &corev3.DataSource{Specifier: &corev3.DataSource_InlineBytes{InlineBytes: r.PolicyData.BasicAuthUsers}}
	if _, ok := s.named[name]; !ok {
		cfg := &basicauthv3.BasicAuth{Users: users}
		if h := a.Spec.BasicAuth.ForwardUsernameHeader; h != nil {
			cfg.ForwardUsernameHeader = *h
		}
		f := typedFilter(name, cfg)
		f.Disabled = true
		s.named[name] = f
	}
	return setPerRoute(out, name, &basicauthv3.BasicAuthPerRoute{Users: users})
}

// addAPIKeyAuth enables the listener's one api_key_auth filter on the route with the
// route's credentials and key sources. The listener filter (disabled) carries the config
// of the first route that uses it, as EG's does.
func (s *httpFilterSet) addAPIKeyAuth(out *routev3.Route, r *ir.HTTPRoute, a *ir.Applied[egv1a1.SecurityPolicySpec]) error {
	var keys []ir.APIKey
	if r.PolicyData != nil {
		keys = r.PolicyData.APIKeys
	}
	cfg := apiKeyAuthConfig(a.Spec.APIKeyAuth, keys)
	if _, ok := s.named[apiKeyAuthFilter]; !ok {
		f := typedFilter(apiKeyAuthFilter, cfg)
		f.Disabled = true
		s.named[apiKeyAuthFilter] = f
	}
	return setPerRoute(out, apiKeyAuthFilter, &apikeyauthv3.ApiKeyAuthPerRoute{
		Credentials: cfg.Credentials, KeySources: cfg.KeySources, Forwarding: cfg.Forwarding,
	})
}

func apiKeyAuthConfig(spec *egv1a1.APIKeyAuth, keys []ir.APIKey) *apikeyauthv3.ApiKeyAuth {
	cfg := &apikeyauthv3.ApiKeyAuth{Credentials: make([]*apikeyauthv3.Credential, 0, len(keys))}
	for _, k := range keys {
		cfg.Credentials = append(cfg.Credentials, &apikeyauthv3.Credential{Client: k.Client, Key: k.Key})
	}
	for _, e := range spec.ExtractFrom {
		if e == nil {
			continue
		}
		for _, h := range e.Headers {
			cfg.KeySources = append(cfg.KeySources, &apikeyauthv3.KeySource{Header: h})
		}
		for _, p := range e.Params {
			cfg.KeySources = append(cfg.KeySources, &apikeyauthv3.KeySource{Query: p})
		}
		for _, c := range e.Cookies {
			cfg.KeySources = append(cfg.KeySources, &apikeyauthv3.KeySource{Cookie: c})
		}
	}
	header := ""
	if spec.ForwardClientIDHeader != nil {
		header = *spec.ForwardClientIDHeader
	}
	sanitize := spec.Sanitize != nil && *spec.Sanitize
	if header != "" || sanitize {
		cfg.Forwarding = &apikeyauthv3.Forwarding{Header: header, HideCredentials: sanitize}
	}
	return cfg
}
