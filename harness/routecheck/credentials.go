package routecheck

import (
	"crypto/sha1"
	"encoding/base64"
	"strings"

	apikeyauthv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/http/api_key_auth/v3"
	basicauthv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/http/basic_auth/v3"
	"google.golang.org/protobuf/types/known/anypb"
)

// evalBasicAuth checks Authorization: Basic against the route's htpasswd ({SHA} entries:
// base64 of the password's SHA-1); anything else is a 401.
func evalBasicAuth(f httpFilterEntry, per *anypb.Any, rs *requestState, eff *FilterEffect) (int, error) {
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
	auth := rs.headers["authorization"]
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
func evalAPIKeyAuth(f httpFilterEntry, per *anypb.Any, rs *requestState, eff *FilterEffect) (int, error) {
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
			key = rs.headers[strings.ToLower(s.GetHeader())]
		case s.GetQuery() != "":
			_, q := splitPath(rs.path)
			for _, kv := range strings.Split(q, "&") {
				if k, v, _ := strings.Cut(kv, "="); k == s.GetQuery() {
					key = v
				}
			}
		case s.GetCookie() != "":
			for _, c := range strings.Split(rs.headers["cookie"], ";") {
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
