package envoytier

import (
	"context"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"io"
	"math/big"
	"net"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	clusterv3 "github.com/envoyproxy/go-control-plane/envoy/config/cluster/v3"
	"golang.org/x/net/http2"
	"google.golang.org/protobuf/encoding/protojson"

	"github.com/egharness/egharness/harness/live"
	"github.com/egharness/egharness/harness/scenario"
	"github.com/egharness/egharness/harness/scenario/scenariotest"
	"github.com/egharness/egharness/harness/xdsserver"
	"github.com/egharness/egharness/translator/result"
)

func translate(t *testing.T, name string, prof ...string) *result.Result {
	t.Helper()
	set := scenariotest.Load(t, "../../scenarios")
	sc := xdsserver.Find(set.Scenarios, name)
	if sc == nil {
		t.Fatalf("no scenario %s", name)
	}
	p := ""
	if len(prof) > 0 {
		p = prof[0]
	}
	l, err := xdsserver.Translate(sc, p)
	if err != nil {
		t.Fatal(err)
	}
	return l.Result
}

// loopbackAndAuthority are what the stand-in servers are built on: a loopback address of
// their own (released when the test ends) and a CA.
func loopbackAndAuthority(t *testing.T) (*loopback, *authority) {
	t.Helper()
	lo, err := newLoopback()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = lo.close() })
	ca, err := newAuthority()
	if err != nil {
		t.Fatal(err)
	}
	return lo, ca
}

func jsonOf(t *testing.T, x *result.XDS) string {
	t.Helper()
	var b strings.Builder
	for _, l := range x.Listeners {
		b.WriteString(protojson.Format(l))
	}
	for _, c := range x.Clusters {
		b.WriteString(protojson.Format(c))
	}
	for _, e := range x.Endpoints {
		b.WriteString(protojson.Format(e))
	}
	for _, s := range x.Secrets {
		b.WriteString(protojson.Format(s))
	}
	return b.String()
}

// Nothing served leaves the machine: listeners bind the scenario's loopback address on the
// translated ports, DNS clusters become static ones on the sink, other addresses move to
// the sink; the translation itself is untouched.
func TestOnLoopback(t *testing.T) {
	res := translate(t, "eg-backend-fqdn")
	before := jsonOf(t, &res.XDS)
	out := onLoopback(&res.XDS, "127.9.0.1", "127.9.0.2", 4242)
	if jsonOf(t, &res.XDS) != before {
		t.Fatal("onLoopback changed the translation it copied")
	}
	for _, l := range out.Listeners {
		sa := l.GetAddress().GetSocketAddress()
		if sa.GetAddress() != "127.9.0.1" || sa.GetPortValue() < 1024 {
			t.Errorf("listener %s binds %s:%d", l.GetName(), sa.GetAddress(), sa.GetPortValue())
		}
	}
	dns := 0
	for i, c := range out.Clusters {
		orig := res.XDS.Clusters[i]
		if orig.GetType() == clusterv3.Cluster_STRICT_DNS || orig.GetType() == clusterv3.Cluster_LOGICAL_DNS ||
			orig.GetClusterType().GetName() == "envoy.cluster.dns" {
			dns++
			if c.GetType() != clusterv3.Cluster_STATIC || c.GetClusterType() != nil {
				t.Errorf("DNS cluster %s stays %s", c.GetName(), c.GetType())
			}
		}
	}
	if dns == 0 {
		t.Fatal("the scenario has no DNS cluster to check")
	}
	js := jsonOf(t, out)
	// the readiness listener keeps its name, envoy-gateway-proxy-ready-0.0.0.0-19003, and
	// binds loopback like the others (checked above)
	js = strings.ReplaceAll(js, "envoy-gateway-proxy-ready-0.0.0.0-19003", "envoy-gateway-proxy-ready")
	for _, forbidden := range []string{"api.partner.example", "10.96.", "0.0.0.0"} {
		if strings.Contains(js, forbidden) {
			t.Errorf("served xDS still names %s", forbidden)
		}
	}
}

// Upstream validation trusts the tier CA, external SDS secrets come from the ADS stream as
// stand-ins, and files EG mounts are the tier's.
func TestRewriteTrust(t *testing.T) {
	ca, err := newAuthority()
	if err != nil {
		t.Fatal(err)
	}
	pair, err := ca.pair("x.egharness.local")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()

	res := translate(t, "backend-tls-policy")
	x := onLoopback(&res.XDS, "127.9.0.1", "127.9.0.2", 1)
	tr := rewriteTrust(x, ca.certPEM, pair, fileSubstitutes(dir))
	if len(tr.names) == 0 {
		t.Error("no upstream names collected")
	}
	caB64 := base64.StdEncoding.EncodeToString(ca.certPEM)
	if !strings.Contains(jsonOf(t, x), caB64) {
		t.Error("no validation context trusts the tier CA")
	}

	res = translate(t, "sds-listener-certificates", "v1.9")
	x = onLoopback(&res.XDS, "127.9.0.1", "127.9.0.2", 1)
	tr = rewriteTrust(x, ca.certPEM, pair, fileSubstitutes(dir))
	if len(tr.standIns) == 0 {
		t.Fatal("no stand-in for the external SDS secrets")
	}
	if js := jsonOf(t, x); strings.Contains(js, "apiConfigSource") {
		t.Error("a TLS context still asks an external SDS server")
	}

	res = translate(t, "ratelimit-global-and-local")
	x = onLoopback(&res.XDS, "127.9.0.1", "127.9.0.2", 1)
	tr = rewriteTrust(x, ca.certPEM, pair, fileSubstitutes(dir))
	js := jsonOf(t, x)
	if strings.Contains(js, `"/certs/`) || !strings.Contains(js, caB64) {
		t.Error("the rate limit cluster's /certs/ca.crt is not the tier CA")
	}
	if f, ok := fileSubstitutes(dir)("/certs/tls.key"); !ok || f != filepath.Join(dir, "tls.key") {
		t.Errorf("/certs/tls.key → %q", f)
	}
	if _, ok := fileSubstitutes(dir)("/etc/envoy/other"); ok {
		t.Error("an unknown file is substituted")
	}
	found := false
	for _, n := range tr.standIns {
		found = found || n == envoyClientSecret
	}
	if !found {
		t.Errorf("no stand-in for %s: %v", envoyClientSecret, tr.standIns)
	}
}

// An echo server answers HTTP/1.1, h2c and TLS on one port with the request and its name.
func TestEchoServer(t *testing.T) {
	lo, ca := loopbackAndAuthority(t)
	p := newEchoPool(lo, ca)
	defer p.close(context.Background())
	p.setTLSNames([]string{"spiffe://cluster.local/ns/default/sa/app"})
	addrs, err := p.addrs([]string{"default/app", "default/other"})
	if err != nil {
		t.Fatal(err)
	}
	addr := addrs["default/app"]
	check := func(how string, resp *http.Response, err error) {
		t.Helper()
		if err != nil {
			t.Fatalf("%s: %v", how, err)
		}
		defer resp.Body.Close()
		var e live.EchoReply
		b, _ := io.ReadAll(resp.Body)
		if json.Unmarshal(b, &e) != nil || p.echoes()[live.EchoName(e.Pod)] != "default/app" || e.Path != "/x?y=1" ||
			e.Host != "app.example.com" {
			t.Errorf("%s: reply %s", how, b)
		}
		if got := e.Headers["X-Test"]; len(got) != 1 || got[0] != "1" {
			t.Errorf("%s: headers %v", how, e.Headers)
		}
	}
	req := func(scheme string) *http.Request {
		r, _ := http.NewRequest(http.MethodGet, scheme+"://"+addr+"/x?y=1", nil)
		r.Host = "app.example.com"
		r.Header.Set("X-Test", "1")
		return r
	}
	resp, err := (&http.Transport{}).RoundTrip(req("http"))
	check("HTTP/1.1", resp, err)
	h2c := &http2.Transport{AllowHTTP: true, DialTLSContext: func(ctx context.Context, n, a string, _ *tls.Config) (
		net.Conn, error) {
		return (&net.Dialer{}).DialContext(ctx, n, a)
	}}
	resp, err = h2c.RoundTrip(req("http"))
	check("h2c", resp, err)
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(ca.certPEM)
	var state *tls.ConnectionState
	tr := &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool, ServerName: "backend.internal"},
		ForceAttemptHTTP2: true}
	resp, err = tr.RoundTrip(req("https"))
	if err == nil {
		state = resp.TLS
	}
	check("TLS", resp, err)
	if state == nil || state.NegotiatedProtocol != "h2" || len(state.PeerCertificates[0].URIs) != 1 {
		t.Errorf("TLS: ALPN %q, leaf %+v", state.NegotiatedProtocol, state.PeerCertificates[0].URIs)
	}
}

// Tokens are signed again with the tier key (RS256 over the same header and claims), and
// local key sets get the tier key next to their own.
func TestIssuer(t *testing.T) {
	lo, ca := loopbackAndAuthority(t)
	i, err := newIssuer(lo, ca)
	if err != nil {
		t.Fatal(err)
	}
	defer i.srv.Close()
	tok := "eyJhbGciOiJSUzI1NiJ9.eyJpc3MiOiJodHRwczovL2F1dGguZXhhbXBsZS5jb20ifQ.c2ln"
	got := i.resign(scenario.Request{Headers: map[string]string{"Authorization": "Bearer " + tok, "X-Other": "a.b.c"}})
	parts := strings.Split(strings.TrimPrefix(got.Headers["Authorization"], "Bearer "), ".")
	if len(parts) != 3 || parts[0]+"."+parts[1] != tok[:strings.LastIndex(tok, ".")] {
		t.Fatalf("resigned %q", got.Headers["Authorization"])
	}
	sig, _ := base64.RawURLEncoding.DecodeString(parts[2])
	digest := sha256.Sum256([]byte(parts[0] + "." + parts[1]))
	var jwks struct {
		Keys []struct{ N, E string }
	}
	if err := json.Unmarshal(i.jwks, &jwks); err != nil || len(jwks.Keys) != 1 {
		t.Fatal(err)
	}
	n, _ := base64.RawURLEncoding.DecodeString(jwks.Keys[0].N)
	pub := &rsa.PublicKey{N: new(big.Int).SetBytes(n), E: 65537}
	if err := rsa.VerifyPKCS1v15(pub, 5, digest[:], sig); err != nil { // 5: crypto.SHA256
		t.Errorf("the JWKS key does not verify the new signature: %v", err)
	}
	if got.Headers["X-Other"] != "a.b.c" {
		t.Errorf("a value that is no JWT changed: %q", got.Headers["X-Other"])
	}
	// The JWKS server answers any path.
	c := &http.Client{Timeout: 5 * time.Second}
	resp, err := c.Get("http://" + i.addr + "/.well-known/jwks.json")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if string(b) != string(i.jwks) {
		t.Errorf("JWKS server: %s", b)
	}

	res := translate(t, "jwt-recompute-route")
	x := onLoopback(&res.XDS, "127.9.0.1", "127.9.0.2", 1)
	i.rewriteProviders(x)
	js := jsonOf(t, x)
	if !strings.Contains(js, issuerKID) || !strings.Contains(js, `\"kid\":\"k1\"`) {
		t.Error("local key sets do not hold both the scenario's key and the tier's")
	}
}
