package routecheck

import (
	"fmt"
	"strings"

	oauth2v3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/http/oauth2/v3"
	"google.golang.org/protobuf/types/known/anypb"
)

// evalOAuth2 is Envoy's oauth2 filter on a route that configures it (EG's listener filter
// holds no configuration). Real Envoy showed the checker wrong here: it forwarded every
// request, while Envoy sends a request without a session to the authorization endpoint.
//   - a pass-through matcher (EG: a bearer token or a header the policy names) lets the
//     request through: Outcome "pass through";
//   - the sign-out path answers 302 to "/" after clearing the cookies: "sign out";
//   - the callback path without a code and state is refused (401): "callback";
//   - a request with the session cookies (bearer token and HMAC) is taken as signed in, as
//     jwt_authn takes a token's signature as good: "session";
//   - a deny-redirect matcher (requests that cannot follow a redirect) gets 401: "denied";
//   - a request on the callback path with a code and state is ErrUnsupported: Envoy answers
//     it after exchanging the code at the token endpoint;
//   - a request that went through the login (Request.OAuth2Login) is taken as signed in;
//   - anything else is redirected (302) to the authorization endpoint: "redirect". The
//     location's query holds a random state and code challenge, so location is only the
//     endpoint with "?", a prefix of what Envoy sends.
func evalOAuth2(per *anypb.Any, state *requestState, eff *FilterEffect) (int, string, error) {
	p := &oauth2v3.OAuth2PerRoute{}
	if err := per.UnmarshalTo(p); err != nil {
		return 0, "", err
	}
	cfg := p.GetConfig()
	if cfg == nil {
		return 0, "", nil
	}
	if pass, err := anyHeaderMatches(cfg.GetPassThroughMatcher(), state.headers); err != nil {
		return 0, "", err
	} else if pass {
		eff.Outcome = "pass through"
		return 0, "", nil
	}
	path, _, _ := strings.Cut(state.path, "?")
	if sp := cfg.GetSignoutPath(); sp != nil {
		if ok, err := stringMatches(sp.GetPath(), path); err != nil {
			return 0, "", err
		} else if ok {
			eff.Outcome = "sign out"
			return 302, "/", nil
		}
	}
	if rp := cfg.GetRedirectPathMatcher(); rp != nil {
		if ok, err := stringMatches(rp.GetPath(), path); err != nil {
			return 0, "", err
		} else if ok {
			q := parseQuery(state.path)
			if q["code"] != "" && q["state"] != "" {
				// Envoy checks the state against its nonce cookie and exchanges the code
				// at the token endpoint: nothing the checker can know.
				return 0, "",
					fmt.Errorf(
						"%w: an OAuth2 callback with a code is answered after Envoy exchanges it at the token endpoint (%s), which the "+
							"route checker does not model; oauth2Login replays the whole login through real Envoy",
						ErrUnsupported, cfg.GetTokenEndpoint().GetUri())
			}
			eff.Outcome = "callback"
			return 401, "", nil
		}
	}
	names := cfg.GetCredentials().GetCookieNames()
	bearer, hmac := "BearerToken", "OauthHMAC"
	if names.GetBearerToken() != "" {
		bearer = names.GetBearerToken()
	}
	if names.GetOauthHmac() != "" {
		hmac = names.GetOauthHmac()
	}
	if c := state.headers["cookie"]; strings.Contains(c, bearer+"=") && strings.Contains(c, hmac+"=") {
		eff.Outcome = "session"
		return 0, "", nil
	}
	if deny, err := anyHeaderMatches(cfg.GetDenyRedirectMatcher(), state.headers); err != nil {
		return 0, "", err
	} else if deny {
		eff.Outcome = "denied"
		return 401, "", nil
	}
	if state.req.OAuth2Login {
		// The login the request went through ends with Envoy's session cookies, which the
		// checker takes as good (as above) without modelling how they were made.
		eff.Outcome = "session after a login (the callback's code exchange is not modelled)"
		return 0, "", nil
	}
	eff.Outcome = "redirect"
	return 302, cfg.GetAuthorizationEndpoint() + "?", nil
}
