package envoytier

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"
)

// authority is the tier's own CA. Envoy is made to trust it wherever the translation
// trusts a CA for upstream TLS (a BackendTLSPolicy's CA, the system store, the certificates
// EG mounts at /certs), and the TLS echo servers present leaves it signs for the server name
// Envoy asks for and the subject alt names Envoy checks, so upstream TLS is verified for
// real. Scenario CAs come without their keys; nothing else could sign for them.
type authority struct {
	cert    *x509.Certificate
	key     crypto.Signer
	certPEM []byte

	mu     sync.Mutex
	leaves map[string]*tls.Certificate
}

func newAuthority() (*authority, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "egharness envoy tier CA"},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(24 * time.Hour),
		IsCA:                  true,
		BasicConstraintsValid: true,
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageCRLSign | x509.KeyUsageDigitalSignature,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, key.Public(), key)
	if err != nil {
		return nil, err
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, err
	}
	return &authority{cert: cert, key: key, certPEM: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
		leaves: map[string]*tls.Certificate{}}, nil
}

// leaf returns a certificate for the given DNS names and URIs (cached by the set).
func (a *authority) leaf(names []string) (*tls.Certificate, error) {
	names = slices.Compact(slices.Sorted(slices.Values(names)))
	k := strings.Join(names, ",")
	a.mu.Lock()
	defer a.mu.Unlock()
	if c := a.leaves[k]; c != nil {
		return c, nil
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(int64(len(a.leaves) + 2)),
		Subject:      pkix.Name{CommonName: "egharness echo"},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(24 * time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth},
	}
	for _, n := range names {
		switch {
		case strings.Contains(n, "://"):
			if u, err := url.Parse(n); err == nil {
				tmpl.URIs = append(tmpl.URIs, u)
			}
		case net.ParseIP(n) != nil:
			tmpl.IPAddresses = append(tmpl.IPAddresses, net.ParseIP(n))
		case n != "":
			tmpl.DNSNames = append(tmpl.DNSNames, n)
		}
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, a.cert, key.Public(), a.key)
	if err != nil {
		return nil, err
	}
	c := &tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}
	a.leaves[k] = c
	return c, nil
}

// pair returns a leaf for names as PEM.
func (a *authority) pair(names ...string) (pemPair, error) {
	c, err := a.leaf(names)
	if err != nil {
		return pemPair{}, err
	}
	keyDER, err := x509.MarshalPKCS8PrivateKey(c.PrivateKey)
	if err != nil {
		return pemPair{}, err
	}
	return pemPair{
		cert: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: c.Certificate[0]}),
		key:  pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: keyDER}),
	}, nil
}

// files writes the CA and a leaf (for names) as ca.crt, tls.crt and tls.key in dir: what
// EG mounts at /certs in its Envoy pods (for the rate limit service and the like).
func (a *authority) files(dir string, names ...string) error {
	c, err := a.leaf(names)
	if err != nil {
		return err
	}
	keyDER, err := x509.MarshalPKCS8PrivateKey(c.PrivateKey)
	if err != nil {
		return err
	}
	for name, data := range map[string][]byte{
		"ca.crt":  a.certPEM,
		"tls.crt": pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: c.Certificate[0]}),
		"tls.key": pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: keyDER}),
	} {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o600); err != nil {
			return fmt.Errorf("writing %s: %w", name, err)
		}
	}
	return nil
}
