package routecheck

import (
	"crypto/sha1"
	"encoding/base64"
	"fmt"
	"strings"

	apikeyauthv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/http/api_key_auth/v3"
	basicauthv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/http/basic_auth/v3"
	injectorv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/http/credential_injector/v3"
	genericv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/http/injected_credentials/generic/v3"
	"google.golang.org/protobuf/types/known/anypb"
)

// evalBasicAuth checks Authorization: Basic against the route's htpasswd ({SHA} entries:
// base64 of the password's SHA-1); anything else is a 401.
func evalBasicAuth(f httpFilterEntry, per *anypb.Any, state *requestState, eff *FilterEffect) (int, error) {
	var users []byte
	if per != nil {
		p := &basicauthv3.BasicAuthPerRoute{}
		if err := per.UnmarshalTo(p); err != nil {
			return 0, err
		}
		users = p.GetUsers().GetInlineBytes()
	} else {
		p := &basicauthv3.BasicAuth{}
		if err := f.cfg.UnmarshalTo(p); err != nil {
			return 0, err
		}
		users = p.GetUsers().GetInlineBytes()
	}
	auth := state.headers["authorization"]
	enc, ok := strings.CutPrefix(auth, "Basic ")
	if !ok {
		eff.Outcome = "missing"
		return 401, nil
	}
	raw, err := base64.StdEncoding.DecodeString(strings.TrimSpace(enc))
	user, pass, found := strings.Cut(string(raw), ":")
	if err != nil || !found {
		eff.Outcome = "invalid"
		return 401, nil
	}
	sum := sha1.Sum([]byte(pass))
	want := "{SHA}" + base64.StdEncoding.EncodeToString(sum[:])
	for _, line := range strings.Split(string(users), "\n") {
		u, h, _ := strings.Cut(strings.TrimSpace(line), ":")
		if u == user && h == want {
			eff.Outcome = "valid"
			return 0, nil
		}
	}
	eff.Outcome = "invalid"
	return 401, nil
}

// evalAPIKeyAuth looks for a key where the route's key sources say and checks it against
// the credentials: no key or an unknown key is a 401.
func evalAPIKeyAuth(f httpFilterEntry, per *anypb.Any, state *requestState, eff *FilterEffect) (int, error) {
	var creds []*apikeyauthv3.Credential
	var sources []*apikeyauthv3.KeySource
	if per != nil {
		p := &apikeyauthv3.ApiKeyAuthPerRoute{}
		if err := per.UnmarshalTo(p); err != nil {
			return 0, err
		}
		creds, sources = p.GetCredentials(), p.GetKeySources()
	} else {
		p := &apikeyauthv3.ApiKeyAuth{}
		if err := f.cfg.UnmarshalTo(p); err != nil {
			return 0, err
		}
		creds, sources = p.GetCredentials(), p.GetKeySources()
	}
	key := ""
	for _, s := range sources {
		switch {
		case s.GetHeader() != "":
			key = state.headers[strings.ToLower(s.GetHeader())]
		case s.GetQuery() != "":
			_, q := splitPath(state.path)
			for _, kv := range strings.Split(q, "&") {
				if k, v, _ := strings.Cut(kv, "="); k == s.GetQuery() {
					key = v
				}
			}
		case s.GetCookie() != "":
			for _, c := range strings.Split(state.headers["cookie"], ";") {
				if k, v, _ := strings.Cut(strings.TrimSpace(c), "="); k == s.GetCookie() {
					key = v
				}
			}
		}
		if key != "" {
			break
		}
	}
	if key == "" {
		eff.Outcome = "missing"
		return 401, nil
	}
	for _, c := range creds {
		if c.GetKey() == key {
			eff.Outcome = "valid"
			return 0, nil
		}
	}
	eff.Outcome = "invalid"
	return 401, nil
}

// evalCredentialInjector is a credential_injector filter with a generic credential: the
// credential (an SDS secret) goes into its header, Authorization unless the config names
// another, when the client sent no such header or the filter overwrites it.
func evalCredentialInjector(f httpFilterEntry, state *requestState, eff *FilterEffect) (map[string]string, error) {
	cfg := &injectorv3.CredentialInjector{}
	if err := f.cfg.UnmarshalTo(cfg); err != nil {
		return nil, err
	}
	generic := &genericv3.Generic{}
	if err := cfg.GetCredential().GetTypedConfig().UnmarshalTo(generic); err != nil {
		return nil, fmt.Errorf("credential: %v", err)
	}
	value, ok := state.secrets[generic.GetCredential().GetName()]
	if !ok {
		eff.Outcome = "unknown credential"
		return nil, nil
	}
	header := strings.ToLower(generic.GetHeader())
	if header == "" {
		header = "authorization"
	}
	if _, sent := state.headers[header]; sent && !cfg.GetOverwrite() {
		eff.Outcome = "kept"
		return nil, nil
	}
	eff.Outcome = "injected"
	return map[string]string{header: string(value)}, nil
}
