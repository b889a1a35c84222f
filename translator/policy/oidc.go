package policy

import (
	"errors"
	"fmt"
	"hash/fnv"
	"net/netip"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	egv1a1 "github.com/envoyproxy/gateway/api/v1alpha1"
	gwapiv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/egharness/egharness/translator/ir"
)

// What EG's OIDC reads besides the policy (facts of EG v1.9).
const (
	// controllerNamespace is where EG runs; its certgen job writes the OIDC HMAC Secret there.
	controllerNamespace = "envoy-gateway-system"
	oidcHMACSecretName  = "envoy-oidc-hmac"
	oidcHMACSecretKey   = "hmac-secret"

	oidcDefaultRedirectURL  = "%REQ(x-forwarded-proto)%://%REQ(:authority)%/oauth2/callback"
	oidcDefaultRedirectPath = "/oauth2/callback"
	oidcDefaultLogoutPath   = "/logout"
)

// resolveOIDC reads a SecurityPolicy's oidc (SP-03) in the namespace of the policy that
// declared it (MRG-05), in EG's order: the provider's endpoints, the client ID, the client
// secret, the redirect URL, then the controller's HMAC Secret. It returns the client secret
// apart, as PolicyData keeps it.
func resolveOIDC(a *ir.Applied[egv1a1.SecurityPolicySpec], objs *RefObjects) (*ir.OIDCData, []byte, error) {
	o := a.Spec.OIDC
	owner := a.OwnerOf("oidc")
	ns := owner.Namespace
	d := &ir.OIDCData{RedirectURL: oidcDefaultRedirectURL, RedirectPath: oidcDefaultRedirectPath,
		LogoutPath: oidcDefaultLogoutPath}
	if err := resolveOIDCProvider(o.Provider, a.OwnerOfPath("oidc.provider.backendRefs"), objs, d); err != nil {
		return nil, nil, err
	}
	switch {
	case o.ClientID != nil:
		d.ClientID = *o.ClientID
	case o.ClientIDRef != nil:
		s, err := objs.secretRef("SecurityPolicy", a.OwnerOfPath("oidc.clientIDRef").Namespace, *o.ClientIDRef)
		if err != nil {
			return nil, nil, err
		}
		id := s.Data[egv1a1.OIDCClientIDKey]
		if len(id) == 0 {
			return nil, nil, fmt.Errorf("client ID not found in secret %s/%s", s.Namespace, s.Name)
		}
		d.ClientID = string(id)
	default:
		return nil, nil, fmt.Errorf("client ID must be specified in OIDC policy %s/%s", owner.Namespace, owner.Name)
	}
	s, err := objs.secretRef("SecurityPolicy", ns, o.ClientSecret)
	if err != nil {
		return nil, nil, err
	}
	secret := s.Data[egv1a1.OIDCClientSecretKey]
	if len(secret) == 0 {
		return nil, nil, fmt.Errorf("client secret not found in secret %s/%s", s.Namespace, s.Name)
	}
	if o.RedirectURL != nil {
		path, err := redirectPath(*o.RedirectURL)
		if err != nil {
			return nil, nil, err
		}
		d.RedirectURL, d.RedirectPath = *o.RedirectURL, path
	}
	if o.LogoutPath != nil {
		d.LogoutPath = *o.LogoutPath
	}
	d.CookieSuffix = digest32(objs.securityPolicyUID(owner.Namespace, owner.Name))
	d.CookieNames = oidcCookieNames(o.CookieNames, d.CookieSuffix)
	hmac := objs.secrets[nsName{controllerNamespace, oidcHMACSecretName}]
	if hmac == nil {
		return nil, nil, fmt.Errorf("HMAC secret %s/%s not found", controllerNamespace, oidcHMACSecretName)
	}
	if d.HMACSecret = hmac.Data[oidcHMACSecretKey]; len(d.HMACSecret) == 0 {
		return nil, nil, fmt.Errorf("HMAC secret not found in secret %s/%s", controllerNamespace, oidcHMACSecretName)
	}
	return d, secret, nil
}

// resolveOIDCProvider checks the issuer, resolves backendRefs to the token endpoint's
// cluster, and takes the endpoints. EG discovers endpoints the policy leaves out from the
// issuer's openid-configuration over the network; an offline translation cannot.
func resolveOIDCProvider(p egv1a1.OIDCProvider, owner ir.PolicyRef, objs *RefObjects, d *ir.OIDCData) error {
	raw := p.Issuer
	if p.TokenEndpoint != nil {
		raw = *p.TokenEndpoint
	}
	if _, err := url.Parse(raw); err != nil {
		return err
	}
	if err := checkIssuer(p.Issuer); err != nil {
		return err
	}
	if len(p.BackendRefs) > 0 {
		if objs.backends == nil {
			return errors.New("backend references cannot be resolved")
		}
		dest, err := objs.backends.ResolvePolicyBackends(owner, p.BackendRefs, extServiceName(owner, "oidc", 0), false)
		if err != nil {
			return err
		}
		d.Provider = &ir.ExtService{Destination: dest, Owner: owner}
	}
	if p.AuthorizationEndpoint == nil || *p.AuthorizationEndpoint == "" || p.TokenEndpoint == nil ||
		*p.TokenEndpoint == "" {
		return fmt.Errorf(
			"the openid-configuration of issuer %s cannot be fetched: the reference translator does not discover endpoints, "+
				"set authorizationEndpoint and tokenEndpoint",
			p.Issuer)
	}
	d.AuthorizationEndpoint, d.TokenEndpoint, d.EndSessionEndpoint = *p.AuthorizationEndpoint, *p.TokenEndpoint,
		p.EndSessionEndpoint
	return checkTokenEndpoint(d.TokenEndpoint)
}

// checkIssuer: an https URL with a host, no userinfo, query or fragment.
func checkIssuer(raw string) error {
	u, err := url.Parse(raw)
	if err != nil {
		return fmt.Errorf("invalid issuer URL: %w", err)
	}
	switch {
	case u.Scheme != "https":
		return errors.New("issuer URL must use https scheme")
	case u.Hostname() == "":
		return errors.New("issuer URL must include a host")
	case u.User != nil:
		return errors.New("issuer URL must not include userinfo")
	case u.RawQuery != "" || strings.Contains(raw, "?"):
		return errors.New("issuer URL must not include a query")
	case u.Fragment != "" || strings.Contains(raw, "#"):
		return errors.New("issuer URL must not include a fragment")
	}
	return nil
}

// checkTokenEndpoint: Envoy reaches the token endpoint through a DNS cluster, so its host
// must be a name, and its port a number.
func checkTokenEndpoint(raw string) error {
	u, err := url.Parse(raw)
	if err != nil {
		return fmt.Errorf("error parsing token endpoint URL: %w", err)
	}
	if _, err := netip.ParseAddr(u.Hostname()); err == nil {
		return fmt.Errorf("token endpoint URL must be a domain name: %s", raw)
	}
	if u.Port() != "" {
		if _, err := strconv.Atoi(u.Port()); err != nil {
			return fmt.Errorf("error parsing token endpoint URL port: %w", err)
		}
	}
	return nil
}

// redirectPath is the path of a redirect URL (http, https or EG's forwarded-proto
// placeholder as scheme), which must not be the root.
func redirectPath(redirectURL string) (string, error) {
	bad := fmt.Errorf("invalid redirect URL %s", redirectURL)
	scheme, rest, ok := strings.Cut(redirectURL, "://")
	if !ok || scheme == "" {
		return "", bad
	}
	if scheme != "http" && scheme != "https" && scheme != "%REQ(x-forwarded-proto)%" {
		return "", bad
	}
	i := strings.IndexByte(rest, '/')
	if i <= 0 {
		return "", bad
	}
	if path := rest[i:]; path != "/" {
		return path, nil
	}
	return "", bad
}

// digest32 is the FNV-32a hash of s in lower-case hex.
func digest32(s string) string {
	h := fnv.New32a()
	_, _ = h.Write([]byte(s))
	return fmt.Sprintf("%x", h.Sum32())
}

// oidcCookieNames are EG's cookie names, each made the policy's own by suffix, but for the
// access and ID token cookies the policy names itself.
func oidcCookieNames(names *egv1a1.OIDCCookieNames, suffix string) ir.OIDCCookieNames {
	out := ir.OIDCCookieNames{
		BearerToken:  "AccessToken-" + suffix,
		OauthHMAC:    "OauthHMAC-" + suffix,
		OauthExpires: "OauthExpires-" + suffix,
		IDToken:      "IdToken-" + suffix,
		RefreshToken: "RefreshToken-" + suffix,
		OauthNonce:   "OauthNonce-" + suffix,
		CodeVerifier: "CodeVerifier-" + suffix,
	}
	if names != nil {
		if names.AccessToken != nil {
			out.BearerToken = *names.AccessToken
		}
		if names.IDToken != nil {
			out.IDToken = *names.IDToken
		}
	}
	return out
}

// resolveOIDCSettings is a SecurityPolicy's oidc settings (nil without oidc), its filter
// configuration and SDS secrets named after the policy that declared oidc (MRG-05).
func resolveOIDCSettings(a *ir.Applied[egv1a1.SecurityPolicySpec]) *ir.OIDC {
	o := a.Spec.OIDC
	if o == nil {
		return nil
	}
	owner := a.OwnerOf("oidc")
	name := fmt.Sprintf("securitypolicy/%s/%s", owner.Namespace, owner.Name)
	forwardAccess := o.ForwardAccessToken != nil && *o.ForwardAccessToken
	out := &ir.OIDC{
		ConfigName:                  name,
		ClientSecretName:            "oauth2/client_secret/" + name,
		HMACSecretName:              "oauth2/hmac_secret/" + name,
		Scopes:                      append([]string(nil), o.Scopes...),
		Resources:                   o.Resources,
		ForwardAccessToken:          forwardAccess,
		UseRefreshToken:             o.RefreshToken == nil || *o.RefreshToken,
		DisableTokenEncryption:      o.DisableTokenEncryption != nil && *o.DisableTokenEncryption,
		PreserveAuthorizationHeader: !forwardAccess,
		ProviderCluster:             resolveClusterSettings(o.Provider.BackendSettings),
	}
	if !slices.Contains(out.Scopes, "openid") {
		out.Scopes = append(out.Scopes, "openid")
	}
	if o.CookieDomain != nil {
		out.CookieDomain = *o.CookieDomain
	}
	if c := o.CookieConfig; c != nil && c.SameSite != nil {
		switch v := string(*c.SameSite); v {
		case ir.SameSiteStrict, ir.SameSiteLax, ir.SameSiteNone:
			out.SameSite = v
		default:
			out.SameSite = ir.SameSiteDisabled
		}
	}
	// the first lifetime that does not parse is the one EG reports
	for _, ttl := range []struct {
		value *gwapiv1.Duration
		dst   **time.Duration
		what  string
	}{
		{o.DefaultTokenTTL, &out.DefaultTokenTTL, "defaultTokenTTL"},
		{o.DefaultRefreshTokenTTL, &out.DefaultRefreshTokenTTL, "defaultRefreshTokenTTL"},
		{o.CSRFTokenTTL, &out.CSRFTokenTTL, "csrfTokenTTL"},
	} {
		if ttl.value == nil || out.TTLError != "" {
			continue
		}
		d, err := time.ParseDuration(string(*ttl.value))
		if err != nil {
			out.TTLError = fmt.Sprintf("invalid %s: %v", ttl.what, err)
			continue
		}
		*ttl.dst = &d
	}
	if o.DenyRedirect != nil {
		out.DenyRedirectHeaders = []ir.StringMatch{}
		for _, h := range o.DenyRedirect.Headers {
			out.DenyRedirectHeaders = append(out.DenyRedirectHeaders, stringMatch(h.Name, h.StringMatch))
		}
	}
	if f := o.ForwardIDToken; f != nil {
		header := f.Header
		out.ForwardIDTokenHeader = &header
		if strings.EqualFold(header, "Authorization") {
			out.PreserveAuthorizationHeader = false
		}
	}
	if o.PassThroughAuthHeader != nil && *o.PassThroughAuthHeader && a.Spec.JWT != nil {
		out.PassThroughHeaders = passThroughHeaders(a.Spec.JWT.Providers)
	}
	return out
}

// passThroughHeaders are where the JWT providers read a token: a provider without
// extractFrom reads "Authorization: Bearer ...", the others their headers (after the
// value's prefix, when they name one).
func passThroughHeaders(providers []egv1a1.JWTProvider) []ir.PassThroughHeader {
	out := []ir.PassThroughHeader{}
	bearer := "Bearer "
	for _, p := range providers {
		if p.ExtractFrom == nil {
			out = append(out, ir.PassThroughHeader{Name: "Authorization", Prefix: &bearer})
			continue
		}
		for _, h := range p.ExtractFrom.Headers {
			out = append(out, ir.PassThroughHeader{Name: h.Name, Prefix: h.ValuePrefix})
		}
	}
	return out
}
