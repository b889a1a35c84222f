package envoytier

import (
	"crypto"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"math/big"
	"net"
	"net/http"
	"strconv"
	"strings"

	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	jwtv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/http/jwt_authn/v3"
	"google.golang.org/protobuf/proto"

	"github.com/egharness/egharness/harness/scenario"
	"github.com/egharness/egharness/translator/result"
)

// issuer is the JWT stand-in: scenario tokens are test tokens with fake signatures (the
// route checker does not check signatures), so the tier signs each token's header and
// claims again with its own RSA key before sending it, adds that key to every provider's
// local key set (next to the scenario's keys, which Envoy still parses and checks), and
// answers the remote JWKS URIs (their clusters are pointed at a local JWKS server) with it.
// Real jwt_authn then verifies a real signature, issuer, audiences and expiry.
type issuer struct {
	key  *rsa.PrivateKey
	jwks []byte // {"keys":[tier key]}
	jwk  map[string]any
	srv  *http.Server
	addr string
}

const issuerKID = "egharness-envoy-tier"

func newIssuer(lo *loopback, ca *authority) (*issuer, error) {
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		return nil, err
	}
	i := &issuer{key: key, jwk: map[string]any{
		"kty": "RSA", "kid": issuerKID, "alg": "RS256", "use": "sig",
		"n": base64.RawURLEncoding.EncodeToString(key.N.Bytes()),
		"e": base64.RawURLEncoding.EncodeToString(big.NewInt(int64(key.E)).Bytes()),
	}}
	if i.jwks, err = json.Marshal(map[string]any{"keys": []any{i.jwk}}); err != nil {
		return nil, err
	}
	protocols := httpProtocols()
	i.srv = &http.Server{Protocols: protocols, Handler: http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(i.jwks)
	})}
	if i.addr, err = serveStandIn(lo, ca, i.srv); err != nil {
		return nil, err
	}
	return i, nil
}

// rewriteProviders adds the tier key to local key sets and returns the clusters of remote
// key sets (to point at the JWKS server). x is the tier's copy.
func (i *issuer) rewriteProviders(x *result.XDS) map[string]bool {
	remote := map[string]bool{}
	visit := func(m proto.Message) bool {
		p, ok := m.(*jwtv3.JwtProvider)
		if !ok {
			return false
		}
		if c := p.GetRemoteJwks().GetHttpUri().GetCluster(); c != "" {
			remote[c] = true
		}
		local := p.GetLocalJwks()
		if local.GetInlineString() == "" {
			return false
		}
		var set map[string]any
		if json.Unmarshal([]byte(local.GetInlineString()), &set) != nil {
			return false // not JSON: Envoy says so itself
		}
		keys, _ := set["keys"].([]any)
		set["keys"] = append(keys, i.jwk)
		b, err := json.Marshal(set)
		if err != nil {
			return false
		}
		local.Specifier = &corev3.DataSource_InlineString{InlineString: string(b)}
		return true
	}
	walkListenersAndRoutes(x, visit)
	return remote
}

// pointAt moves every endpoint of the named clusters (inline or EDS) to addr.
func pointAt(x *result.XDS, clusters map[string]bool, addr string) {
	host, portStr, _ := net.SplitHostPort(addr)
	port, _ := strconv.ParseUint(portStr, 10, 16)
	for _, c := range x.Clusters {
		if clusters[c.GetName()] && c.GetLoadAssignment() != nil {
			moveAll(c.GetLoadAssignment(), host, uint32(port))
		}
	}
	for _, cla := range x.Endpoints {
		if clusters[cla.GetClusterName()] {
			moveAll(cla, host, uint32(port))
		}
	}
}

// resign returns req with every JWT in its headers signed again by the tier key (RS256
// tokens only; anything that does not parse as a JWT is sent as it is).
func (i *issuer) resign(req scenario.Request) scenario.Request {
	if len(req.Headers) == 0 {
		return req
	}
	h := make(map[string]string, len(req.Headers))
	for k, v := range req.Headers {
		prefix, tok := "", v
		if p, rest, ok := strings.Cut(v, " "); ok && strings.EqualFold(p, "Bearer") {
			prefix, tok = p+" ", rest
		}
		if s, ok := i.sign(tok); ok {
			v = prefix + s
		}
		h[k] = v
	}
	req.Headers = h
	return req
}

func (i *issuer) sign(tok string) (string, bool) {
	parts := strings.Split(tok, ".")
	if len(parts) != 3 {
		return "", false
	}
	hb, err := base64.RawURLEncoding.DecodeString(parts[0])
	if err != nil {
		return "", false
	}
	var hdr map[string]any
	if json.Unmarshal(hb, &hdr) != nil || hdr["alg"] != "RS256" {
		return "", false
	}
	if _, err := base64.RawURLEncoding.DecodeString(parts[1]); err != nil {
		return "", false
	}
	digest := sha256.Sum256([]byte(parts[0] + "." + parts[1]))
	sig, err := rsa.SignPKCS1v15(rand.Reader, i.key, crypto.SHA256, digest[:])
	if err != nil {
		return "", false
	}
	return parts[0] + "." + parts[1] + "." + base64.RawURLEncoding.EncodeToString(sig), true
}
