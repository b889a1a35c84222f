package gatewayapi

import (
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/egharness/egharness/translator/certs"
)

// servedCert is a serving certificate that passed validation, in the canonical PEM that
// is sent to Envoy (TLS-03): the chain's blocks re-encoded, the key block alone.
type servedCert struct {
	chain, key []byte
	dnsNames   []string // the leaf's DNS SANs, what the overlap checks compare
}

// servingCertificates validates the kubernetes.io/tls Secrets of one listener the way EG
// v1.9 does, in order: the chain (every member parsed and within its validity window), the
// leaf, the private key (the first key block; PKCS1, PKCS8 or EC), that key and leaf match,
// and that no two certificates of the listener serve one name with the same key algorithm.
// A Secret that fails is left out with an error naming it, and never reaches Envoy: the
// other Secrets, and the other listeners, are served as before (TLS-04).
func servingCertificates(secrets []*corev1.Secret, now time.Time) (map[*corev1.Secret]servedCert, []string) {
	out := map[*corev1.Secret]servedCert{}
	var errs []string
	byAlgoAndName := map[string]bool{}
	for _, s := range secrets {
		id := s.Namespace + "/" + s.Name
		bad := func(format string, args ...any) { errs = append(errs, id+" "+fmt.Sprintf(format, args...)) }
		chain, err := certs.ServingChain(secretData(s, corev1.TLSCertKey), now)
		if err != nil {
			bad("must contain valid tls.crt and tls.key, unable to validate certificate in tls.crt: %v", err)
			continue
		}
		leafBlock, _ := pem.Decode(chain)
		leaf, err := x509.ParseCertificate(leafBlock.Bytes)
		if err != nil {
			bad("must contain valid tls.crt and tls.key, unable to parse certificate in tls.crt: %v", err)
			continue
		}
		keyBlock := certs.KeyBlock(secretData(s, corev1.TLSPrivateKeyKey))
		if keyBlock == nil {
			bad("must contain valid tls.crt and tls.key, unable to decode pem data in tls.key")
			continue
		}
		if msg := keyProblem(keyBlock); msg != "" {
			bad("must contain valid tls.crt and tls.key, %s", msg)
			continue
		}
		key := pem.EncodeToMemory(keyBlock)
		if _, err := tls.X509KeyPair(chain, key); err != nil {
			bad("must contain a matching tls.crt and tls.key: %v", err)
			continue
		}
		// A listener may serve one name with an RSA and an ECDSA certificate (Envoy picks by
		// what the client supports), but not twice with one algorithm.
		names := leaf.DNSNames
		if len(names) == 0 && leaf.Subject.CommonName != "" {
			names = []string{leaf.Subject.CommonName}
		}
		algo := leaf.PublicKeyAlgorithm.String()
		seen, clash := map[string]bool{}, false
		for _, n := range names {
			if seen[n] {
				continue
			}
			seen[n] = true
			if byAlgoAndName[algo+"/"+n] {
				bad("public key algorithm must be unique, certificate domain %s has a conflicting algorithm [%s]", n, algo)
				clash = true
				break
			}
			byAlgoAndName[algo+"/"+n] = true
		}
		if clash {
			continue
		}
		out[s] = servedCert{chain: chain, key: key, dnsNames: leaf.DNSNames}
	}
	return out, errs
}

// keyProblem says why a private key block cannot be used, or "" when it parses.
func keyProblem(b *pem.Block) string {
	var err error
	var form string
	switch b.Type {
	case "PRIVATE KEY":
		_, err = x509.ParsePKCS8PrivateKey(b.Bytes)
		form = "PKCS8"
	case "RSA PRIVATE KEY":
		_, err = x509.ParsePKCS1PrivateKey(b.Bytes)
		form = "PKCS1"
	case "EC PRIVATE KEY":
		_, err = x509.ParseECPrivateKey(b.Bytes)
		form = "EC"
	default:
		return fmt.Sprintf("%s key format found in tls.key, supported formats are PKCS1, PKCS8 or EC", b.Type)
	}
	if err != nil {
		return fmt.Sprintf("unable to parse %s formatted private key in tls.key", form)
	}
	return ""
}
