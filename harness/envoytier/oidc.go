package envoytier

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/tls"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	oauth2v3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/http/oauth2/v3"
	"google.golang.org/protobuf/types/known/anypb"

	"github.com/egharness/egharness/harness/live"
	"github.com/egharness/egharness/harness/scenario"
	"github.com/egharness/egharness/translator/result"
)

// provider stands in for the OIDC providers of a scenario's SecurityPolicies, on loopback:
// its authorization endpoint checks the request Envoy's redirect makes a browser send
// (response_type code, a registered client_id, the redirect_uri and scopes of its
// configuration, a PKCE S256 challenge) and answers with a code at the redirect URI; its
// token endpoint (where the token endpoint clusters point) takes that code back from Envoy
// with the client's secret, redirect_uri and PKCE verifier and answers with tokens. No
// discovery: Envoy's configuration names both endpoints.
type provider struct {
	srv  *http.Server
	addr string

	mu      sync.Mutex
	clients map[string]oauthClient // by client_id
	codes   map[string]issuedCode
	// tokenCalls counts the token endpoint's answers (successful exchanges).
	tokenCalls int
}

// oauthClient is one OAuth2 configuration of the served routes.
type oauthClient struct {
	id, secret  string
	redirectURI string // as configured; with a %...% formatter Envoy fills it per request
	scopes      []string
	authz       *url.URL // the authorization endpoint
	tokenPath   string
}

type issuedCode struct {
	client, redirectURI, challenge string
}

func newProvider(lo *loopback, ca *authority) (*provider, error) {
	p := &provider{clients: map[string]oauthClient{}, codes: map[string]issuedCode{}}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /", p.authorize)
	mux.HandleFunc("POST /", p.token)
	p.srv = &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	var err error
	if p.addr, err = serveStandIn(lo, ca, p.srv); err != nil {
		return nil, err
	}
	return p, nil
}

func (p *provider) close() { _ = p.srv.Close() }

// oauth2Configs are the OAuth2 configurations of the routes of x (EG puts them per route).
func oauth2Configs(x *result.XDS) []*oauth2v3.OAuth2Config {
	var out []*oauth2v3.OAuth2Config
	for _, rc := range x.Routes {
		for _, vh := range rc.GetVirtualHosts() {
			for _, r := range vh.GetRoutes() {
				for name, a := range r.GetTypedPerFilterConfig() {
					if !strings.HasPrefix(name, "envoy.filters.http.oauth2") {
						continue
					}
					if cfg := perRouteOAuth2(a); cfg != nil {
						out = append(out, cfg)
					}
				}
			}
		}
	}
	return out
}

func perRouteOAuth2(a *anypb.Any) *oauth2v3.OAuth2Config {
	pr := &oauth2v3.OAuth2PerRoute{}
	if a.UnmarshalTo(pr) != nil {
		return nil
	}
	return pr.GetConfig()
}

// configure registers the clients of x's OAuth2 configurations (their secrets from x's
// SDS secrets) and returns the token endpoint clusters, which point at the provider.
func (p *provider) configure(x *result.XDS) map[string]bool {
	secrets := map[string]string{}
	for _, s := range x.Secrets {
		if g := s.GetGenericSecret(); g != nil {
			secrets[s.GetName()] = string(g.GetSecret().GetInlineBytes())
		}
	}
	clusters := map[string]bool{}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.clients, p.codes = map[string]oauthClient{}, map[string]issuedCode{}
	for _, cfg := range oauth2Configs(x) {
		authz, err := url.Parse(cfg.GetAuthorizationEndpoint())
		if err != nil {
			continue
		}
		token, err := url.Parse(cfg.GetTokenEndpoint().GetUri())
		if err != nil {
			continue
		}
		c := cfg.GetCredentials()
		p.clients[c.GetClientId()] = oauthClient{
			id: c.GetClientId(), secret: secrets[c.GetTokenSecret().GetName()],
			redirectURI: cfg.GetRedirectUri(), scopes: cfg.GetAuthScopes(), authz: authz, tokenPath: token.Path,
		}
		clusters[cfg.GetTokenEndpoint().GetCluster()] = true
	}
	return clusters
}

// authorize is the authorization endpoint: a valid request gets 302 to the redirect URI
// with a code and the state; anything else 400 with what is wrong.
func (p *provider) authorize(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	p.mu.Lock()
	c, ok := p.clients[q.Get("client_id")]
	p.mu.Unlock()
	var problems []string
	switch {
	case !ok:
		problems = append(problems, fmt.Sprintf("unknown client_id %q", q.Get("client_id")))
	case c.authz.Host != r.Host || c.authz.Path != r.URL.Path:
		problems = append(problems,
			fmt.Sprintf("client %s's authorization endpoint is %s, not %s%s", c.id, c.authz, r.Host, r.URL.Path))
	}
	if q.Get("response_type") != "code" {
		problems = append(problems, fmt.Sprintf("response_type %q, want code", q.Get("response_type")))
	}
	if ok && !strings.Contains(c.redirectURI, "%") && q.Get("redirect_uri") != c.redirectURI {
		problems = append(problems, fmt.Sprintf("redirect_uri %q, configured %q", q.Get("redirect_uri"), c.redirectURI))
	}
	if ok && !sameSet(strings.Fields(q.Get("scope")), c.scopes) {
		problems = append(problems, fmt.Sprintf("scope %q, configured %q", q.Get("scope"), strings.Join(c.scopes, " ")))
	}
	if q.Get("code_challenge_method") != "S256" || q.Get("code_challenge") == "" {
		problems = append(problems, "no PKCE S256 code challenge")
	}
	if q.Get("state") == "" {
		problems = append(problems, "no state")
	}
	if len(problems) > 0 {
		http.Error(w, "authorization request refused: "+strings.Join(problems, "; "), http.StatusBadRequest)
		return
	}
	code := randomString()
	p.mu.Lock()
	p.codes[code] = issuedCode{client: c.id, redirectURI: q.Get("redirect_uri"), challenge: q.Get("code_challenge")}
	p.mu.Unlock()
	back, err := url.Parse(q.Get("redirect_uri"))
	if err != nil {
		http.Error(w, "redirect_uri: "+err.Error(), http.StatusBadRequest)
		return
	}
	bq := back.Query()
	bq.Set("code", code)
	bq.Set("state", q.Get("state"))
	back.RawQuery = bq.Encode()
	http.Redirect(w, r, back.String(), http.StatusFound)
}

// token is the token endpoint: the authorization code grant, once per code.
func (p *provider) token(w http.ResponseWriter, r *http.Request) {
	if err := r.ParseForm(); err != nil {
		tokenError(w, "invalid_request", err.Error())
		return
	}
	id, secret, basic := r.BasicAuth()
	if basic {
		id, _ = url.QueryUnescape(id)
		secret, _ = url.QueryUnescape(secret)
	} else {
		id, secret = r.PostForm.Get("client_id"), r.PostForm.Get("client_secret")
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	c, ok := p.clients[id]
	code, issued := p.codes[r.PostForm.Get("code")]
	delete(p.codes, r.PostForm.Get("code"))
	switch {
	case r.PostForm.Get("grant_type") != "authorization_code":
		tokenError(w, "unsupported_grant_type", r.PostForm.Get("grant_type"))
	case !ok || secret != c.secret:
		tokenError(w, "invalid_client", fmt.Sprintf("client %q with a wrong secret", id))
	case r.URL.Path != c.tokenPath:
		tokenError(w, "invalid_request", fmt.Sprintf("token endpoint path %s, configured %s", r.URL.Path, c.tokenPath))
	case !issued || code.client != id:
		tokenError(w, "invalid_grant", "unknown code")
	case r.PostForm.Get("redirect_uri") != code.redirectURI:
		tokenError(w, "invalid_grant",
			fmt.Sprintf("redirect_uri %q, the code was issued for %q", r.PostForm.Get("redirect_uri"), code.redirectURI))
	case pkceChallenge(r.PostForm.Get("code_verifier")) != code.challenge:
		tokenError(w, "invalid_grant", "the code verifier does not match the challenge")
	default:
		p.tokenCalls++
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{
			"access_token": "access-" + randomString(), "id_token": "id-" + randomString(),
			"refresh_token": "refresh-" + randomString(), "token_type": "Bearer", "expires_in": 3600,
		})
	}
}

func tokenError(w http.ResponseWriter, code, desc string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusBadRequest)
	_ = json.NewEncoder(w).Encode(map[string]string{"error": code, "error_description": desc})
}

func pkceChallenge(verifier string) string {
	sum := sha256.Sum256([]byte(verifier))
	return base64.RawURLEncoding.EncodeToString(sum[:])
}

func randomString() string {
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

func sameSet(a, b []string) bool {
	a, b = slices.Clone(a), slices.Clone(b)
	slices.Sort(a)
	slices.Sort(b)
	return slices.Equal(a, b)
}

// login goes through Envoy's OAuth2 login as a browser does, and returns the session
// cookies Envoy set: the request without a session must be redirected to the provider's
// authorization endpoint, the provider (reached on loopback) answers with a code at the
// redirect URI, which goes back to Envoy's listener (the request's port, the redirect URI's
// host and path) with the cookies of the first answer; Envoy exchanges the code at the
// token endpoint and answers with its session cookies. Each step that goes wrong is the
// error.
func (p *provider) login(ctx context.Context, client live.Client, req scenario.Request, port uint32,
	useTLS bool) ([]*http.Cookie, error) {
	first := client.Do(ctx, req, port, useTLS)
	if first.Err != nil {
		return nil, fmt.Errorf("OAuth2 login: the request without a session: %w", first.Err)
	}
	if first.Status != http.StatusFound || first.Location == "" {
		return nil, fmt.Errorf("OAuth2 login: the request without a session got %d, not a redirect to the provider",
			first.Status)
	}
	authz, err := url.Parse(first.Location)
	if err != nil {
		return nil, fmt.Errorf("OAuth2 login: the redirect's location %q: %w", first.Location, err)
	}
	// The browser's visit to the provider, moved to loopback.
	hc := &http.Client{
		Timeout: 5 * time.Second,
		Transport: &http.Transport{
			DialContext: func(ctx context.Context, network, _ string) (net.Conn, error) {
				return (&net.Dialer{}).DialContext(ctx, network, p.addr)
			},
			TLSClientConfig: &tls.Config{ServerName: authz.Hostname(),
				InsecureSkipVerify: true}, //nolint:gosec // the tier's own stand-in
		},
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
	hreq, err := http.NewRequestWithContext(ctx, http.MethodGet, first.Location, nil)
	if err != nil {
		return nil, err
	}
	resp, err := hc.Do(hreq)
	if err != nil {
		return nil, fmt.Errorf("OAuth2 login: the provider's authorization endpoint: %w", err)
	}
	var msg [512]byte
	n, _ := resp.Body.Read(msg[:])
	resp.Body.Close()
	if resp.StatusCode != http.StatusFound {
		return nil, fmt.Errorf("OAuth2 login: the provider refused Envoy's redirect %s: %d %s", first.Location,
			resp.StatusCode, strings.TrimSpace(string(msg[:n])))
	}
	back, err := url.Parse(resp.Header.Get("Location"))
	if err != nil {
		return nil, err
	}
	// The callback, to Envoy, with the cookies of its first answer (nonce, PKCE verifier).
	cb := scenario.Request{Port: req.Port, Host: back.Host, Path: back.RequestURI(),
		Headers: map[string]string{"cookie": cookieHeader(first.Cookies)}, SNI: req.SNI, ClientIP: req.ClientIP,
		Gateway: req.Gateway}
	p.mu.Lock()
	before := p.tokenCalls
	p.mu.Unlock()
	second := client.Do(ctx, cb, port, useTLS)
	if second.Err != nil {
		return nil, fmt.Errorf("OAuth2 login: the callback %s: %w", back.RequestURI(), second.Err)
	}
	p.mu.Lock()
	exchanged := p.tokenCalls > before
	p.mu.Unlock()
	if second.Status != http.StatusFound {
		return nil, fmt.Errorf(
			"OAuth2 login: Envoy answered the callback %d (code exchanged at the token endpoint: %v; body %q)", second.Status,
			exchanged, trim(second.Body))
	}
	if !exchanged {
		return nil, fmt.Errorf(
			"OAuth2 login: Envoy redirected the callback to %s without exchanging the code at the token endpoint",
			second.Location)
	}
	return mergeCookies(first.Cookies, second.Cookies), nil
}

// cookieHeader is a Cookie header of cookies (the last value of a name wins).
func cookieHeader(cs []*http.Cookie) string {
	parts := make([]string, 0, len(cs))
	for _, c := range mergeCookies(cs) {
		parts = append(parts, c.Name+"="+c.Value)
	}
	return strings.Join(parts, "; ")
}

// mergeCookies keeps the last cookie of each name, in name order; a cookie Envoy deletes
// (an expiry in the past, Max-Age below 0) is dropped.
func mergeCookies(lists ...[]*http.Cookie) []*http.Cookie {
	byName := map[string]*http.Cookie{}
	for _, l := range lists {
		for _, c := range l {
			if c.MaxAge < 0 || (!c.Expires.IsZero() && c.Expires.Before(time.Now())) {
				delete(byName, c.Name)
				continue
			}
			byName[c.Name] = c
		}
	}
	out := make([]*http.Cookie, 0, len(byName))
	for _, n := range slices.Sorted(mapKeys(byName)) {
		out = append(out, byName[n])
	}
	return out
}
