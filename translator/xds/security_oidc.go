package xds

import (
	"fmt"
	"regexp"
	"strings"
	"time"

	egv1a1 "github.com/envoyproxy/gateway/api/v1alpha1"
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

func (s *httpFilterSet) addOIDC(out *routev3.Route, r *ir.HTTPRoute, a *ir.Applied[egv1a1.SecurityPolicySpec]) error {
	if r.PolicyData == nil || r.PolicyData.OIDC == nil {
		return fmt.Errorf("oidc: not resolved")
	}
	d := r.PolicyData.OIDC
	owner := fieldOwner(a, "oidc")
	name := fmt.Sprintf("securitypolicy/%s/%s", owner.Namespace, owner.Name)
	if _, ok := s.named[oauth2FilterName]; !ok {
		s.named[oauth2FilterName] = typedFilter(oauth2FilterName, &oauth2v3.OAuth2{})
	}
	var cluster string
	if d.Provider != nil && d.Provider.Destination != nil && len(d.Provider.Destination.Settings) > 0 {
		cluster = d.Provider.Destination.Name
		s.addCluster(extServiceCluster(d.Provider.Destination, d.Provider.Owner, a.Spec.OIDC.Provider.BackendSettings))
	} else {
		c, err := urlClusterOf(d.TokenEndpoint)
		if err != nil {
			return fmt.Errorf("oidc token endpoint: %w", err)
		}
		cluster = c.cluster.Name
		s.addCluster(*c)
	}
	clientSecret, hmacSecret := "oauth2/client_secret/"+name, "oauth2/hmac_secret/"+name
	s.addSecret(genericSecret(clientSecret, r.PolicyData.OIDCClientSecret))
	s.addSecret(genericSecret(hmacSecret, d.HMACSecret))
	cfg, err := oauth2Config(a.Spec.OIDC, d, name, cluster, clientSecret, hmacSecret)
	if err == nil && a.Spec.OIDC.PassThroughAuthHeader != nil && *a.Spec.OIDC.PassThroughAuthHeader && a.Spec.JWT != nil {
		cfg.PassThroughMatcher = passThroughMatchers(a.Spec.JWT.Providers)
	}
	if err != nil {
		return err
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

func oauth2Config(o *egv1a1.OIDC, d *ir.OIDCData, name, cluster, clientSecret, hmacSecret string) (*oauth2v3.OAuth2Config, error) {
	forwardAccess := o.ForwardAccessToken != nil && *o.ForwardAccessToken
	refresh := o.RefreshToken == nil || *o.RefreshToken
	scopes := append([]string(nil), o.Scopes...)
	hasOpenID := false
	for _, sc := range scopes {
		hasOpenID = hasOpenID || sc == "openid"
	}
	if !hasOpenID {
		scopes = append(scopes, "openid")
	}
	suffix := d.CookieSuffix
	cookies := &oauth2v3.OAuth2Credentials_CookieNames{
		BearerToken:  "AccessToken-" + suffix,
		OauthHmac:    "OauthHMAC-" + suffix,
		OauthExpires: "OauthExpires-" + suffix,
		IdToken:      "IdToken-" + suffix,
		RefreshToken: "RefreshToken-" + suffix,
		OauthNonce:   "OauthNonce-" + suffix,
		CodeVerifier: "CodeVerifier-" + suffix,
	}
	if n := o.CookieNames; n != nil {
		if n.AccessToken != nil {
			cookies.BearerToken = *n.AccessToken
		}
		if n.IDToken != nil {
			cookies.IdToken = *n.IDToken
		}
	}
	cfg := &oauth2v3.OAuth2Config{
		StatPrefix: name,
		TokenEndpoint: &corev3.HttpUri{
			Uri:              d.TokenEndpoint,
			HttpUpstreamType: &corev3.HttpUri_Cluster{Cluster: cluster},
			Timeout:          durationpb.New(extServiceTimeout),
		},
		AuthorizationEndpoint: d.AuthorizationEndpoint,
		RedirectUri:           d.RedirectURL,
		CookieConfigs:         oauth2CookieConfigs(o, d.RedirectPath),
		RedirectPathMatcher:   exactPath(d.RedirectPath),
		SignoutPath:           exactPath(d.LogoutPath),
		UseRefreshToken:       wrapperspb.Bool(refresh),
		ForwardBearerToken:    forwardAccess,
		Credentials: &oauth2v3.OAuth2Credentials{
			ClientId:       d.ClientID,
			TokenSecret:    &tlsv3.SdsSecretConfig{Name: clientSecret, SdsConfig: adsSource()},
			TokenFormation: &oauth2v3.OAuth2Credentials_HmacSecret{HmacSecret: &tlsv3.SdsSecretConfig{Name: hmacSecret, SdsConfig: adsSource()}},
			CookieNames:    cookies,
		},
		AuthType:                    oauth2v3.OAuth2Config_BASIC_AUTH,
		AuthScopes:                  scopes,
		Resources:                   o.Resources,
		PreserveAuthorizationHeader: !forwardAccess,
		DisableTokenEncryption:      o.DisableTokenEncryption != nil && *o.DisableTokenEncryption,
	}
	if o.CookieDomain != nil {
		cfg.Credentials.CookieDomain = *o.CookieDomain
	}
	for _, ttl := range []struct {
		v    *string
		dst  **durationpb.Duration
		what string
	}{
		{(*string)(o.DefaultTokenTTL), &cfg.DefaultExpiresIn, "defaultTokenTTL"},
		{(*string)(o.DefaultRefreshTokenTTL), &cfg.DefaultRefreshTokenExpiresIn, "defaultRefreshTokenTTL"},
		{(*string)(o.CSRFTokenTTL), &cfg.CsrfTokenExpiresIn, "csrfTokenTTL"},
	} {
		if ttl.v == nil {
			continue
		}
		dur, err := time.ParseDuration(*ttl.v)
		if err != nil {
			return nil, fmt.Errorf("invalid %s: %w", ttl.what, err)
		}
		*ttl.dst = durationpb.New(dur)
	}
	if o.DenyRedirect != nil {
		cfg.DenyRedirectMatcher = denyRedirectMatchers(o.DenyRedirect.Headers)
	}
	if d.EndSessionEndpoint != nil {
		cfg.EndSessionEndpoint = *d.EndSessionEndpoint
	}
	if o.ForwardIDToken != nil {
		cfg.ForwardIdToken = &oauth2v3.OAuth2TokenForwarding{Header: o.ForwardIDToken.Header}
		if strings.EqualFold(o.ForwardIDToken.Header, "Authorization") {
			cfg.PreserveAuthorizationHeader = false
		}
	}
	return cfg, nil
}

// oauth2CookieConfigs scopes the nonce and code verifier cookies to the redirect path,
// and gives every cookie the SameSite the policy asks for.
func oauth2CookieConfigs(o *egv1a1.OIDC, redirectPath string) *oauth2v3.CookieConfigs {
	if !oauth2CookiePath.MatchString(redirectPath) {
		redirectPath = ""
	}
	cc := &oauth2v3.CookieConfigs{
		OauthNonceCookieConfig:   &oauth2v3.CookieConfig{Path: redirectPath},
		CodeVerifierCookieConfig: &oauth2v3.CookieConfig{Path: redirectPath},
	}
	if o.CookieConfig == nil || o.CookieConfig.SameSite == nil {
		return cc
	}
	ss := oauth2v3.CookieConfig_DISABLED
	switch egv1a1.SameSite(*o.CookieConfig.SameSite) {
	case egv1a1.SameSiteStrict:
		ss = oauth2v3.CookieConfig_STRICT
	case egv1a1.SameSiteLax:
		ss = oauth2v3.CookieConfig_LAX
	case egv1a1.SameSiteNone:
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
// of redirecting to the provider (API clients); a header without a type matches exactly.
func denyRedirectMatchers(hs []egv1a1.OIDCDenyRedirectHeader) []*routev3.HeaderMatcher {
	out := make([]*routev3.HeaderMatcher, 0, len(hs))
	for _, h := range hs {
		m := &matcherv3.StringMatcher{MatchPattern: &matcherv3.StringMatcher_Exact{Exact: h.Value}}
		if h.Type != nil {
			switch *h.Type {
			case egv1a1.StringMatchPrefix:
				m.MatchPattern = &matcherv3.StringMatcher_Prefix{Prefix: h.Value}
			case egv1a1.StringMatchSuffix:
				m.MatchPattern = &matcherv3.StringMatcher_Suffix{Suffix: h.Value}
			case egv1a1.StringMatchRegularExpression:
				m.MatchPattern = &matcherv3.StringMatcher_SafeRegex{SafeRegex: &matcherv3.RegexMatcher{Regex: h.Value}}
			}
		}
		out = append(out, &routev3.HeaderMatcher{Name: h.Name, HeaderMatchSpecifier: &routev3.HeaderMatcher_StringMatch{StringMatch: m}})
	}
	return out
}

// passThroughMatchers let requests that already carry a token where a JWT provider reads
// one skip the OAuth2 flow (passThroughAuthHeader): a provider without extractFrom reads
// "Authorization: Bearer ...", others their headers (with their value prefix).
func passThroughMatchers(ps []egv1a1.JWTProvider) []*routev3.HeaderMatcher {
	out := make([]*routev3.HeaderMatcher, 0, len(ps))
	prefixed := func(name, prefix string) *routev3.HeaderMatcher {
		return &routev3.HeaderMatcher{Name: name, HeaderMatchSpecifier: &routev3.HeaderMatcher_StringMatch{
			StringMatch: &matcherv3.StringMatcher{MatchPattern: &matcherv3.StringMatcher_Prefix{Prefix: prefix}},
		}}
	}
	for _, p := range ps {
		if p.ExtractFrom == nil {
			out = append(out, prefixed("Authorization", "Bearer "))
			continue
		}
		for _, h := range p.ExtractFrom.Headers {
			if h.ValuePrefix == nil {
				out = append(out, &routev3.HeaderMatcher{Name: h.Name})
				continue
			}
			out = append(out, prefixed(h.Name, *h.ValuePrefix))
		}
	}
	return out
}
