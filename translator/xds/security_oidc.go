package xds

import (
	"errors"
	"fmt"
	"regexp"

	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	routev3 "github.com/envoyproxy/go-control-plane/envoy/config/route/v3"
	oauth2v3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/http/oauth2/v3"
	tlsv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/transport_sockets/tls/v3"
	matcherv3 "github.com/envoyproxy/go-control-plane/envoy/type/matcher/v3"
	"google.golang.org/protobuf/types/known/durationpb"
	"google.golang.org/protobuf/types/known/wrapperspb"

	"github.com/egharness/egharness/translator/ir"
)

// SecurityPolicy oidc (SP-03): EG v1.9 puts one oauth2 filter on the listener, enabled and
// without configuration of its own, and the whole OAuth2 configuration on each route that
// needs it. The client secret and the HMAC key reach Envoy as SDS secrets named after the
// policy; the token endpoint is a cluster of its own (from its URL, or the provider's
// backendRefs).

const oauth2FilterName = ir.FilterOAuth2

// oauth2CookiePath is what a cookie Path attribute may hold; another redirect path leaves
// the nonce and verifier cookies without one.
var oauth2CookiePath = regexp.MustCompile(`^$|^/[^\x00-\x1f\x7f ",;<>\\]*$`)

func (s *httpFilterSet) addOIDC(out *routev3.Route, r *ir.HTTPRoute, o *ir.OIDC) error {
	if r.PolicyData == nil || r.PolicyData.OIDC == nil {
		return fmt.Errorf("oidc: not resolved")
	}
	d := r.PolicyData.OIDC
	if _, ok := s.named[oauth2FilterName]; !ok {
		s.named[oauth2FilterName] = typedFilter(oauth2FilterName, &oauth2v3.OAuth2{})
	}
	var cluster string
	if d.Provider != nil && d.Provider.Destination != nil && len(d.Provider.Destination.Settings) > 0 {
		cluster = d.Provider.Destination.Name
		s.addCluster(extServiceCluster(d.Provider.Destination, d.Provider.Owner, o.ProviderCluster))
	} else {
		c, err := urlClusterOf(d.TokenEndpoint)
		if err != nil {
			return fmt.Errorf("oidc token endpoint: %w", err)
		}
		cluster = c.cluster.Name
		s.addCluster(*c)
	}
	s.addSecret(genericSecret(o.ClientSecretName, r.PolicyData.OIDCClientSecret))
	s.addSecret(genericSecret(o.HMACSecretName, d.HMACSecret))
	if o.TTLError != "" {
		return errors.New(o.TTLError)
	}
	cfg := oauth2Config(o, d, cluster)
	if o.PassThroughHeaders != nil {
		cfg.PassThroughMatcher = passThroughMatchers(o.PassThroughHeaders)
	}
	return setPerRoute(out, oauth2FilterName, &oauth2v3.OAuth2PerRoute{Config: cfg})
}

func genericSecret(name string, b []byte) *tlsv3.Secret {
	return &tlsv3.Secret{Name: name, Type: &tlsv3.Secret_GenericSecret{GenericSecret: &tlsv3.GenericSecret{
		Secret: &corev3.DataSource{Specifier: &corev3.DataSource_InlineBytes{InlineBytes: b}},
	}}}
}

func exactPath(p string) *matcherv3.PathMatcher {
	return &matcherv3.PathMatcher{Rule: &matcherv3.PathMatcher_Path{Path: &matcherv3.StringMatcher{
		MatchPattern: &matcherv3.StringMatcher_Exact{Exact: p},
	}}}
}

func oauth2Config(o *ir.OIDC, d *ir.OIDCData, cluster string) *oauth2v3.OAuth2Config {
	names := d.CookieNames
	cfg := &oauth2v3.OAuth2Config{
		StatPrefix: o.ConfigName,
		TokenEndpoint: &corev3.HttpUri{
			Uri:              d.TokenEndpoint,
			HttpUpstreamType: &corev3.HttpUri_Cluster{Cluster: cluster},
			Timeout:          durationpb.New(extServiceTimeout),
		},
		AuthorizationEndpoint: d.AuthorizationEndpoint,
		RedirectUri:           d.RedirectURL,
		CookieConfigs:         oauth2CookieConfigs(o.SameSite, d.RedirectPath),
		RedirectPathMatcher:   exactPath(d.RedirectPath),
		SignoutPath:           exactPath(d.LogoutPath),
		UseRefreshToken:       wrapperspb.Bool(o.UseRefreshToken),
		ForwardBearerToken:    o.ForwardAccessToken,
		Credentials: &oauth2v3.OAuth2Credentials{
			ClientId:    d.ClientID,
			TokenSecret: &tlsv3.SdsSecretConfig{Name: o.ClientSecretName, SdsConfig: adsSource()},
			TokenFormation: &oauth2v3.OAuth2Credentials_HmacSecret{HmacSecret: &tlsv3.SdsSecretConfig{Name: o.HMACSecretName,
				SdsConfig: adsSource()}},
			CookieNames: &oauth2v3.OAuth2Credentials_CookieNames{
				BearerToken:  names.BearerToken,
				OauthHmac:    names.OauthHMAC,
				OauthExpires: names.OauthExpires,
				IdToken:      names.IDToken,
				RefreshToken: names.RefreshToken,
				OauthNonce:   names.OauthNonce,
				CodeVerifier: names.CodeVerifier,
			},
			CookieDomain: o.CookieDomain,
		},
		AuthType:                     oauth2v3.OAuth2Config_BASIC_AUTH,
		AuthScopes:                   o.Scopes,
		Resources:                    o.Resources,
		PreserveAuthorizationHeader:  o.PreserveAuthorizationHeader,
		DisableTokenEncryption:       o.DisableTokenEncryption,
		DefaultExpiresIn:             durationOrNil(o.DefaultTokenTTL),
		DefaultRefreshTokenExpiresIn: durationOrNil(o.DefaultRefreshTokenTTL),
		CsrfTokenExpiresIn:           durationOrNil(o.CSRFTokenTTL),
	}
	if o.DenyRedirectHeaders != nil {
		cfg.DenyRedirectMatcher = denyRedirectMatchers(o.DenyRedirectHeaders)
	}
	if d.EndSessionEndpoint != nil {
		cfg.EndSessionEndpoint = *d.EndSessionEndpoint
	}
	if o.ForwardIDTokenHeader != nil {
		cfg.ForwardIdToken = &oauth2v3.OAuth2TokenForwarding{Header: *o.ForwardIDTokenHeader}
	}
	return cfg
}

// oauth2CookieConfigs scopes the nonce and code verifier cookies to the redirect path,
// and gives every cookie the SameSite the policy asks for ("" when it asks for none).
func oauth2CookieConfigs(sameSite, redirectPath string) *oauth2v3.CookieConfigs {
	if !oauth2CookiePath.MatchString(redirectPath) {
		redirectPath = ""
	}
	cc := &oauth2v3.CookieConfigs{
		OauthNonceCookieConfig:   &oauth2v3.CookieConfig{Path: redirectPath},
		CodeVerifierCookieConfig: &oauth2v3.CookieConfig{Path: redirectPath},
	}
	if sameSite == "" {
		return cc
	}
	ss := oauth2v3.CookieConfig_DISABLED
	switch sameSite {
	case ir.SameSiteStrict:
		ss = oauth2v3.CookieConfig_STRICT
	case ir.SameSiteLax:
		ss = oauth2v3.CookieConfig_LAX
	case ir.SameSiteNone:
		ss = oauth2v3.CookieConfig_NONE
	}
	cc.BearerTokenCookieConfig = &oauth2v3.CookieConfig{SameSite: ss}
	cc.OauthHmacCookieConfig = &oauth2v3.CookieConfig{SameSite: ss}
	cc.OauthExpiresCookieConfig = &oauth2v3.CookieConfig{SameSite: ss}
	cc.IdTokenCookieConfig = &oauth2v3.CookieConfig{SameSite: ss}
	cc.RefreshTokenCookieConfig = &oauth2v3.CookieConfig{SameSite: ss}
	cc.OauthNonceCookieConfig.SameSite = ss
	cc.CodeVerifierCookieConfig.SameSite = ss
	return cc
}

// denyRedirectMatchers are the request headers for which the filter answers 401 instead
// of redirecting to the provider (API clients).
func denyRedirectMatchers(headers []ir.StringMatch) []*routev3.HeaderMatcher {
	out := make([]*routev3.HeaderMatcher, 0, len(headers))
	for _, h := range headers {
		m := &matcherv3.StringMatcher{}
		switch {
		case h.Prefix != nil:
			m.MatchPattern = &matcherv3.StringMatcher_Prefix{Prefix: *h.Prefix}
		case h.Suffix != nil:
			m.MatchPattern = &matcherv3.StringMatcher_Suffix{Suffix: *h.Suffix}
		case h.SafeRegex != nil:
			m.MatchPattern = &matcherv3.StringMatcher_SafeRegex{SafeRegex: &matcherv3.RegexMatcher{Regex: *h.SafeRegex}}
		default:
			m.MatchPattern = &matcherv3.StringMatcher_Exact{Exact: h.Value()}
		}
		out = append(out,
			&routev3.HeaderMatcher{Name: h.Name, HeaderMatchSpecifier: &routev3.HeaderMatcher_StringMatch{StringMatch: m}})
	}
	return out
}

// passThroughMatchers let requests that already carry a token where a JWT provider reads
// one skip the OAuth2 flow (passThroughAuthHeader): a header present, or one whose value
// starts with the provider's prefix.
func passThroughMatchers(headers []ir.PassThroughHeader) []*routev3.HeaderMatcher {
	out := make([]*routev3.HeaderMatcher, 0, len(headers))
	for _, h := range headers {
		if h.Prefix == nil {
			out = append(out, &routev3.HeaderMatcher{Name: h.Name})
			continue
		}
		out = append(out, &routev3.HeaderMatcher{Name: h.Name, HeaderMatchSpecifier: &routev3.HeaderMatcher_StringMatch{
			StringMatch: &matcherv3.StringMatcher{MatchPattern: &matcherv3.StringMatcher_Prefix{Prefix: *h.Prefix}},
		}})
	}
	return out
}
