package certs

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/hex"
	"encoding/pem"
	"math/big"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

var now = time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC)

func certPEM(t *testing.T, cn string, from, to time.Time) []byte {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: cn}, NotBefore: from,
		NotAfter: to}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
}

func TestServingChain(t *testing.T) {
	good := certPEM(t, "good", now.AddDate(-1, 0, 0), now.AddDate(1, 0, 0))
	old := certPEM(t, "old", now.AddDate(-2, 0, 0), now.AddDate(-1, 0, 0))
	future := certPEM(t, "future", now.AddDate(1, 0, 0), now.AddDate(2, 0, 0))

	messy := "junk before\r\n" + strings.ReplaceAll(string(good), "\n", "\r\n") + "\r\ntrailing text\r\n"
	out, err := ServingChain([]byte(messy), now)
	if err != nil || string(out) != string(good) {
		t.Fatalf("messy PEM: got %q, %v; want the canonical block", out, err)
	}
	for _, tc := range []struct {
		name string
		in   []byte
		want string
	}{
		{"expired member", append(append([]byte{}, good...), old...), "certificate old has expired since"},
		{"not yet valid", future, "certificate future will be valid after"},
		{"malformed member",
			append(append([]byte{}, good...), pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: []byte("x")})...),
			"x509:"},
		{"no PEM", []byte("not pem"), "unable to decode pem data for certificate"},
		{"empty", nil, "no certificate data provided"},
	} {
		if _, err := ServingChain(tc.in, now); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want it to contain %q", tc.name, err, tc.want)
		}
	}
}

func TestKeyBlockSkipsECParameters(t *testing.T) {
	data := string(
		pem.EncodeToMemory(&pem.Block{Type: "EC PARAMETERS", Bytes: []byte{6, 8, 42, 134, 72, 206, 61, 3, 1, 7}})) +
		string(pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: []byte("k")}))
	if b := KeyBlock([]byte(data)); b == nil || b.Type != "EC PRIVATE KEY" {
		t.Fatalf("got %v, want the EC PRIVATE KEY block", b)
	}
	only := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: []byte("c")})
	if b := KeyBlock(only); b == nil || b.Type != "CERTIFICATE" {
		t.Fatalf("without a key block the first block is returned, got %v", b)
	}
	if KeyBlock([]byte("nothing")) != nil {
		t.Fatal("no PEM must give nil")
	}
}

func TestCABundleDropsExpired(t *testing.T) {
	good := certPEM(t, "good", now.AddDate(-1, 0, 0), now.AddDate(1, 0, 0))
	old := certPEM(t, "old", now.AddDate(-2, 0, 0), now.AddDate(-1, 0, 0))
	valid, errs := CABundle(append(append([]byte{}, old...), good...), now)
	if string(valid) != string(good) || len(errs) != 1 {
		t.Fatalf("got %q and %v; want only the valid CA and one error", valid, errs)
	}
	if valid, errs := CABundle(old, now); len(valid) != 0 || len(errs) != 1 {
		t.Fatalf("an expired-only bundle: got %q, %v", valid, errs)
	}
}

func TestReadSDSRef(t *testing.T) {
	secret := func(url string) *corev1.Secret {
		return &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "s"}, Type: SDSSecretType,
			Data: map[string][]byte{"url": []byte(url), "secretName": []byte("default")}}
	}
	for url, want := range map[string]string{
		"unix:///var/run/sock":  "unix:///var/run/sock",
		"unix://./rel/sock":     "unix://./rel/sock",
		"/var/run/sock":         "error: unsupported URL scheme: ",
		"unix://host/var/sock":  "error: unix URL must not contain a host",
		"unix://":               "error: unix URL must contain a path",
		"https://sds.local:443": "error: unsupported URL scheme: https",
	} {
		ref, err := ReadSDSRef(secret(url))
		got := ref.URL
		if err != nil {
			got = "error: " + err.Error()
		}
		if !strings.Contains(got, strings.TrimPrefix(want, "error: ")) || (err != nil) != strings.HasPrefix(want, "error: ") {
			t.Errorf("%q: got %q, want %q", url, got, want)
		}
	}
}

func TestSDSClusterName(t *testing.T) {
	long := "/" + strings.Repeat("d", 60) + "/sock"
	sum := sha256.Sum256([]byte(long))
	want := "sds_" + strings.Repeat("d", 48) + "_" + hex.EncodeToString(sum[:16])
	if got := SDSClusterName("unix://" + long); got != want {
		t.Fatalf("got %s, want %s", got, want)
	}
	if a, b := SDSClusterName("unix:///a/b"), SDSClusterName("unix:///a_b"); a == b {
		t.Fatalf("paths that read alike must differ by hash: %s", a)
	}
}
