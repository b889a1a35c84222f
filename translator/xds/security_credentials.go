package xds

import (
	"fmt"

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

// addBasicAuth adds one basic_auth filter per owning policy, disabled on the listener, and
// enables it on the route with the users as per-route config (SP-03).
func (s *httpFilterSet) addBasicAuth(out *routev3.Route, r *ir.HTTPRoute, b *ir.BasicAuth) error {
	if r.PolicyData == nil || len(r.PolicyData.BasicAuthUsers) == 0 {
		return fmt.Errorf("basicAuth: users not resolved")
	}
	name := fmt.Sprintf("%s/securitypolicy/%s/%s", basicAuthFilterType, b.Owner.Namespace, b.Owner.Name)
	users := &corev3.DataSource{Specifier: &corev3.DataSource_InlineBytes{InlineBytes: r.PolicyData.BasicAuthUsers}}
	if _, ok := s.named[name]; !ok {
		cfg := &basicauthv3.BasicAuth{Users: users, ForwardUsernameHeader: b.ForwardUsernameHeader}
		f := typedFilter(name, cfg)
		f.Disabled = true
		s.named[name] = f
	}
	return setPerRoute(out, name, &basicauthv3.BasicAuthPerRoute{Users: users})
}

// addAPIKeyAuth enables the listener's one api_key_auth filter on the route with the
// route's credentials and key sources. The listener filter (disabled) carries the config
// of the first route that uses it, as EG's does.
func (s *httpFilterSet) addAPIKeyAuth(out *routev3.Route, r *ir.HTTPRoute, k *ir.APIKeyAuth) error {
	var keys []ir.APIKey
	if r.PolicyData != nil {
		keys = r.PolicyData.APIKeys
	}
	cfg := apiKeyAuthConfig(k, keys)
	if _, ok := s.named[apiKeyAuthFilter]; !ok {
		f := typedFilter(apiKeyAuthFilter, cfg)
		f.Disabled = true
		s.named[apiKeyAuthFilter] = f
	}
	return setPerRoute(out, apiKeyAuthFilter, &apikeyauthv3.ApiKeyAuthPerRoute{
		Credentials: cfg.Credentials, KeySources: cfg.KeySources, Forwarding: cfg.Forwarding,
	})
}

func apiKeyAuthConfig(k *ir.APIKeyAuth, keys []ir.APIKey) *apikeyauthv3.ApiKeyAuth {
	cfg := &apikeyauthv3.ApiKeyAuth{Credentials: make([]*apikeyauthv3.Credential, 0, len(keys))}
	for _, key := range keys {
		cfg.Credentials = append(cfg.Credentials, &apikeyauthv3.Credential{Client: key.Client, Key: key.Key})
	}
	for _, src := range k.KeySources {
		cfg.KeySources = append(cfg.KeySources,
			&apikeyauthv3.KeySource{Header: src.Header, Query: src.Query, Cookie: src.Cookie})
	}
	if k.ForwardClientIDHeader != "" || k.Sanitize {
		cfg.Forwarding = &apikeyauthv3.Forwarding{Header: k.ForwardClientIDHeader, HideCredentials: k.Sanitize}
	}
	return cfg
}
