package envoytier

import (
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/egharness/egharness/harness/scenario/scenariotest"
	"github.com/egharness/egharness/harness/xdsserver"
)

// The provider stand-in checks what Envoy's redirect and code exchange carry, with the
// clients of the oidc scenario's policies.
func TestProviderChecksTheAuthorizationCodeFlow(t *testing.T) {
	set := scenariotest.Load(t, "../../scenarios", "../../scenarios/policy/oidc.yaml")
	l, err := xdsserver.Translate(xdsserver.Find(set.Scenarios, "oidc"), "v1.9")
	if err != nil {
		t.Fatal(err)
	}
	p := &provider{}
	clusters := p.configure(&l.Result.XDS)
	if !clusters["oauth2_example_com_443"] {
		t.Fatalf("token endpoint clusters %v", clusters)
	}
	verifier := "a-verifier-of-enough-length-0123456789"
	authorize := func(q url.Values) *httptest.ResponseRecorder {
		r := httptest.NewRequest(http.MethodGet, "https://accounts.example.com/o/oauth2/v2/auth?"+q.Encode(), nil)
		w := httptest.NewRecorder()
		p.authorize(w, r)
		return w
	}
	good := url.Values{"client_id": {"sso.apps.example.com"}, "response_type": {"code"},
		"redirect_uri": {"https://sso.example.com/auth/callback"},
		"scope":        {"openid email profile"}, "state": {"s"}, "code_challenge": {pkceChallenge(verifier)},
		"code_challenge_method": {"S256"}}
	for name, change := range map[string]func(url.Values){
		"unknown client":     func(q url.Values) { q.Set("client_id", "nobody") },
		"other redirect":     func(q url.Values) { q.Set("redirect_uri", "https://evil.example.com/cb") },
		"scopes missing one": func(q url.Values) { q.Set("scope", "openid email") },
		"no PKCE":            func(q url.Values) { q.Del("code_challenge") },
		"implicit flow":      func(q url.Values) { q.Set("response_type", "token") },
	} {
		q := url.Values{}
		for k, v := range good {
			q[k] = v
		}
		change(q)
		if w := authorize(q); w.Code != http.StatusBadRequest {
			t.Errorf("%s: %d", name, w.Code)
		}
	}
	w := authorize(good)
	if w.Code != http.StatusFound {
		t.Fatalf("a good request: %d %s", w.Code, w.Body)
	}
	back, _ := url.Parse(w.Header().Get("Location"))
	code := back.Query().Get("code")
	if back.Host != "sso.example.com" || code == "" || back.Query().Get("state") != "s" {
		t.Fatalf("redirect %s", back)
	}
	token := func(form url.Values) int {
		r := httptest.NewRequest(http.MethodPost, "https://oauth2.example.com/token", strings.NewReader(form.Encode()))
		r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		r.SetBasicAuth("sso.apps.example.com", "s3cr3t")
		w := httptest.NewRecorder()
		p.token(w, r)
		return w.Code
	}
	exchange := url.Values{"grant_type": {"authorization_code"}, "code": {code},
		"redirect_uri": {"https://sso.example.com/auth/callback"}, "code_verifier": {"wrong"}}
	if c := token(exchange); c != http.StatusBadRequest {
		t.Errorf("a wrong verifier: %d", c)
	}
	// A code is good once: the failed exchange used it up.
	w = authorize(good)
	back, _ = url.Parse(w.Header().Get("Location"))
	exchange.Set("code", back.Query().Get("code"))
	exchange.Set("code_verifier", verifier)
	if c := token(exchange); c != http.StatusOK || p.tokenCalls != 1 {
		t.Errorf("a good exchange: %d, %d token answers", c, p.tokenCalls)
	}
	if c := token(exchange); c != http.StatusBadRequest {
		t.Errorf("the same code again: %d", c)
	}
}
