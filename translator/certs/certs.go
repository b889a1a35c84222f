// Package certs holds the PEM and certificate rules EG v1.9 applies to what users put in
// Secrets and ConfigMaps: serving chains are validated member by member and re-encoded in
// canonical PEM (TLS-03, TLS-04), private keys may follow an EC PARAMETERS block (TLS-06),
// CA bundles drop the CAs that are out of their validity window and keep the rest (TLS-05),
// and SDS reference Secrets name a unix socket (SDS-01, SDS-02).
//
// Validity is judged against a clock the caller passes, so a translation can be replayed.
package certs

import (
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"time"
)

// checkBlock parses every certificate in one PEM block and refuses the block when one is
// malformed or outside its validity window at now.
func checkBlock(b *pem.Block, now time.Time) error {
	list, err := x509.ParseCertificates(b.Bytes)
	if err != nil {
		return err
	}
	for _, c := range list {
		if now.After(c.NotAfter) {
			return fmt.Errorf("certificate %s has expired since %v", c.Subject.CommonName, c.NotAfter)
		}
		if now.Before(c.NotBefore) {
			return fmt.Errorf("certificate %s will be valid after %v", c.Subject.CommonName, c.NotBefore)
		}
	}
	return nil
}

// blocks walks the PEM blocks of data; text around and between blocks is not kept.
func blocks(data []byte, each func(*pem.Block) bool) {
	for len(data) > 0 {
		b, rest := pem.Decode(data)
		if b == nil {
			return
		}
		if !each(b) {
			return
		}
		data = rest
	}
}

// ServingChain validates a serving certificate chain (tls.crt) and returns it re-encoded
// as canonical PEM. A chain is ordered and is served whole: one bad member refuses the
// whole Secret rather than being dropped, so a chain is never silently truncated.
func ServingChain(data []byte, now time.Time) ([]byte, error) {
	if len(data) == 0 {
		return nil, errors.New("no certificate data provided")
	}
	var out []byte
	var err error
	blocks(data, func(b *pem.Block) bool {
		if err = checkBlock(b, now); err != nil {
			return false
		}
		out = append(out, pem.EncodeToMemory(b)...)
		return true
	})
	if err != nil {
		return nil, err
	}
	if len(out) == 0 {
		return nil, errors.New("unable to decode pem data for certificate")
	}
	return out, nil
}

// KeyBlock is the first private key block of tls.key, skipping blocks that come before it
// (OpenSSL writes an "EC PARAMETERS" block ahead of EC keys). When no key block is found it
// returns the first block, so the caller can name the unexpected type; nil when there is
// no PEM at all.
func KeyBlock(data []byte) *pem.Block {
	var first, key *pem.Block
	blocks(data, func(b *pem.Block) bool {
		if first == nil {
			first = b
		}
		switch b.Type {
		case "PRIVATE KEY", "RSA PRIVATE KEY", "EC PRIVATE KEY":
			key = b
			return false
		}
		return true
	})
	if key != nil {
		return key
	}
	return first
}

// CABundle keeps the CAs of a bundle that are valid at now and reports the others. A bundle
// is a set of independent trust anchors, so dropping one leaves the rest meaningful. The
// result is empty when nothing valid remains (errs then says why, or is empty when the data
// held no PEM at all).
func CABundle(data []byte, now time.Time) (valid []byte, errs []error) {
	blocks(data, func(b *pem.Block) bool {
		if err := checkBlock(b, now); err != nil {
			errs = append(errs, err)
			return true
		}
		valid = append(valid, pem.EncodeToMemory(b)...)
		return true
	})
	return valid, errs
}
