package routecheck

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	jwtauthnv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/http/jwt_authn/v3"
	"google.golang.org/protobuf/types/known/anypb"
)

// The JWT authentication filter (envoy.filters.http.jwt_authn) as Envoy evaluates it: the
// requirement of the route, the token from its header or query parameter, the provider's
// issuer and audiences (signatures are not verified), and the claims copied to headers.

// evalJWT checks the route's requirement. It returns a 401 when the requirement fails,
// the claim headers of the provider that verified the token, and whether the route is
// to be matched again.
func evalJWT(f httpFilterEntry, per *anypb.Any, state *requestState, eff *FilterEffect) (int, map[string]string, bool,
	error) {
	pr := &jwtauthnv3.PerRouteConfig{}
	if err := per.UnmarshalTo(pr); err != nil {
		return 0, nil, false, err
	}
	if pr.GetDisabled() {
		return 0, nil, false, nil
	}
	cfg := &jwtauthnv3.JwtAuthentication{}
	if err := f.cfg.UnmarshalTo(cfg); err != nil {
		return 0, nil, false, err
	}
	req, ok := cfg.GetRequirementMap()[pr.GetRequirementName()]
	if !ok {
		return 0, nil, false, fmt.Errorf("requirement %q is not in the filter's requirement_map", pr.GetRequirementName())
	}
	j := &jwtEval{cfg: cfg, state: state}
	pass, err := j.eval(req)
	if err != nil {
		return 0, nil, false, err
	}
	eff.Mode = j.mode(req)
	eff.Outcome = j.outcome
	if !pass {
		return 401, nil, false, nil
	}
	return 0, j.headers, j.reroute, nil
}

type jwtEval struct {
	cfg     *jwtauthnv3.JwtAuthentication
	state   *requestState
	outcome string
	headers map[string]string
	reroute bool
}

func (j *jwtEval) mode(req *jwtauthnv3.JwtRequirement) string {
	for _, r := range req.GetRequiresAny().GetRequirements() {
		switch {
		case r.GetAllowMissingOrFailed() != nil:
			return "failOpen"
		case r.GetAllowMissing() != nil:
			return "optional"
		}
	}
	switch {
	case req.GetAllowMissingOrFailed() != nil:
		return "failOpen"
	case req.GetAllowMissing() != nil:
		return "optional"
	}
	return "required"
}

// eval: a provider requirement passes with a valid token from that provider's places;
// any-of passes when one passes; allow_missing passes when no token was found, and
// allow_missing_or_failed always.
func (j *jwtEval) eval(req *jwtauthnv3.JwtRequirement) (bool, error) {
	switch t := req.GetRequiresType().(type) {
	case *jwtauthnv3.JwtRequirement_ProviderName:
		p, ok := j.cfg.GetProviders()[t.ProviderName]
		if !ok {
			return false, fmt.Errorf("provider %q is not in the filter's providers", t.ProviderName)
		}
		return j.provider(p), nil
	case *jwtauthnv3.JwtRequirement_RequiresAny:
		pass := false
		for _, r := range t.RequiresAny.GetRequirements() {
			ok, err := j.eval(r)
			if err != nil {
				return false, err
			}
			pass = pass || ok
		}
		return pass, nil
	case *jwtauthnv3.JwtRequirement_AllowMissing:
		return j.outcome == "missing" || j.outcome == "", nil
	case *jwtauthnv3.JwtRequirement_AllowMissingOrFailed:
		return true, nil
	}
	return false, fmt.Errorf("requirement %T is not evaluated", req.GetRequiresType())
}

// provider looks for the provider's token and checks it.
func (j *jwtEval) provider(p *jwtauthnv3.JwtProvider) bool {
	token := j.token(p)
	if token == "" {
		if j.outcome == "" {
			j.outcome = "missing"
		}
		return false
	}
	claims, ok := decodeJWT(token)
	if !ok || (p.GetIssuer() != "" && claims["iss"] != p.GetIssuer()) || !audienceOK(p.GetAudiences(), claims["aud"]) {
		if j.outcome != "valid" {
			j.outcome = "invalid"
		}
		return false
	}
	j.outcome = "valid"
	if name := p.GetPayloadInMetadata(); name != "" {
		if j.state.jwtPayload == nil {
			j.state.jwtPayload = map[string]any{}
		}
		payload := make(map[string]any, len(claims))
		for k, v := range claims {
			payload[k] = v
		}
		// normalize_payload_in_metadata: space-delimited claims become lists.
		for _, k := range p.GetNormalizePayloadInMetadata().GetSpaceDelimitedClaims() {
			if s, ok := payload[k].(string); ok {
				var l []any
				for _, f := range strings.Fields(s) {
					l = append(l, f)
				}
				payload[k] = l
			}
		}
		j.state.jwtPayload[name] = payload
	}
	for _, c := range p.GetClaimToHeaders() {
		if v, ok := claimString(claims, c.GetClaimName()); ok {
			if j.headers == nil {
				j.headers = map[string]string{}
			}
			j.headers[strings.ToLower(c.GetHeaderName())] = v
		}
	}
	j.reroute = j.reroute || p.GetClearRouteCache()
	return true
}

// token finds the token where the provider looks: its headers, params and cookies, or
// Envoy's defaults (Authorization: Bearer, ?access_token=).
func (j *jwtEval) token(p *jwtauthnv3.JwtProvider) string {
	hs := p.GetFromHeaders()
	params := p.GetFromParams()
	cookies := p.GetFromCookies()
	if len(hs) == 0 && len(params) == 0 && len(cookies) == 0 {
		hs = []*jwtauthnv3.JwtHeader{{Name: "Authorization", ValuePrefix: "Bearer "}}
		params = []string{"access_token"}
	}
	for _, h := range hs {
		v, ok := j.state.headers[strings.ToLower(h.GetName())]
		if ok && strings.HasPrefix(v, h.GetValuePrefix()) {
			return strings.TrimSpace(strings.TrimPrefix(v, h.GetValuePrefix()))
		}
	}
	_, query := splitPath(j.state.path)
	for _, kv := range strings.Split(query, "&") {
		k, v, _ := strings.Cut(kv, "=")
		for _, p := range params {
			if k == p && v != "" {
				return v
			}
		}
	}
	for _, c := range strings.Split(j.state.headers["cookie"], ";") {
		k, v, _ := strings.Cut(strings.TrimSpace(c), "=")
		for _, name := range cookies {
			if k == name && v != "" {
				return v
			}
		}
	}
	return ""
}

// decodeJWT reads a compact JWT's payload without verifying it.
func decodeJWT(token string) (map[string]any, bool) {
	parts := strings.Split(token, ".")
	if len(parts) != 3 {
		return nil, false
	}
	b, err := base64.RawURLEncoding.DecodeString(strings.TrimRight(parts[1], "="))
	if err != nil {
		return nil, false
	}
	var claims map[string]any
	if json.Unmarshal(b, &claims) != nil {
		return nil, false
	}
	return claims, true
}

func audienceOK(want []string, aud any) bool {
	if len(want) == 0 {
		return true
	}
	var have []string
	switch a := aud.(type) {
	case string:
		have = []string{a}
	case []any:
		for _, v := range a {
			if s, ok := v.(string); ok {
				have = append(have, s)
			}
		}
	}
	for _, w := range want {
		for _, h := range have {
			if w == h {
				return true
			}
		}
	}
	return false
}

// claimString reads a claim by its dotted path as a header value: strings as they are,
// numbers and booleans formatted; objects and lists are not copied.
func claimString(claims map[string]any, path string) (string, bool) {
	var cur any = claims
	for _, part := range strings.Split(path, ".") {
		m, ok := cur.(map[string]any)
		if !ok {
			return "", false
		}
		if cur, ok = m[part]; !ok {
			return "", false
		}
	}
	switch v := cur.(type) {
	case string:
		return v, true
	case float64:
		return strconv.FormatFloat(v, 'f', -1, 64), true
	case bool:
		return strconv.FormatBool(v), true
	}
	return "", false
}
