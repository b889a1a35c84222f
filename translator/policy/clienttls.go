package policy

import (
	"crypto/sha256"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"time"

	egv1a1 "github.com/envoyproxy/gateway/api/v1alpha1"
	certificatesv1beta1 "k8s.io/api/certificates/v1beta1"
	gwapiv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/egharness/egharness/translator/certs"
	"github.com/egharness/egharness/translator/ir"
	"github.com/egharness/egharness/translator/refgrant"
	"github.com/egharness/egharness/translator/resource"
)

// The TLS part of a ClientTrafficPolicy (CTP-02): what it does to a listener that
// terminates TLS, with its CA references read and checked the way EG v1.9 does.

// ctpObjects are what ClientTrafficPolicy TLS reads: Secrets and ConfigMaps (with the
// grants that let the policy read them across namespaces), ClusterTrustBundles by name, and
// the clock CAs are judged valid at.
type ctpObjects struct {
	refs    *RefObjects
	bundles map[string]string
	now     time.Time
}

func newCTPObjects(objs []resource.Object, grants *refgrant.Index, now time.Time) *ctpObjects {
	o := &ctpObjects{refs: NewRefObjects(objs, grants), bundles: map[string]string{}, now: now}
	for _, obj := range objs {
		if b, ok := obj.Obj.(*certificatesv1beta1.ClusterTrustBundle); ok {
			o.bundles[b.Name] = b.Spec.TrustBundle
		}
	}
	return o
}

// validCiphers are the cipher suites EG lets a ClientTrafficPolicy name: BoringSSL's names
// and their IANA spellings, which Envoy maps.
var validCiphers = map[string]bool{}

func init() {
	for _, pair := range [][2]string{
		{"ECDHE-ECDSA-AES128-GCM-SHA256", "TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256"},
		{"ECDHE-RSA-AES128-GCM-SHA256", "TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256"},
		{"ECDHE-ECDSA-AES256-GCM-SHA384", "TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384"},
		{"ECDHE-RSA-AES256-GCM-SHA384", "TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384"},
		{"ECDHE-ECDSA-CHACHA20-POLY1305", "TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256"},
		{"ECDHE-RSA-CHACHA20-POLY1305", "TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256"},
		{"ECDHE-ECDSA-AES128-SHA", "TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA"},
		{"ECDHE-RSA-AES128-SHA", "TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA"},
		{"AES128-GCM-SHA256", "TLS_RSA_WITH_AES_128_GCM_SHA256"},
		{"AES128-SHA", "TLS_RSA_WITH_AES_128_CBC_SHA"},
		{"ECDHE-ECDSA-AES256-SHA", "TLS_ECDHE_ECDSA_WITH_AES_256_CBC_SHA"},
		{"ECDHE-RSA-AES256-SHA", "TLS_ECDHE_RSA_WITH_AES_256_CBC_SHA"},
		{"AES256-GCM-SHA384", "TLS_RSA_WITH_AES_256_GCM_SHA384"},
		{"AES256-SHA", "TLS_RSA_WITH_AES_256_CBC_SHA"},
	} {
		validCiphers[pair[0]], validCiphers[pair[1]] = true, true
	}
}

// downstreamTLS resolves the policy's TLS for one terminating listener. Like EG it fills
// the settings in order and stops at the first error, so what came before the error is
// returned with it and stays in force (a bad CA reference leaves the versions, ALPN and
// ciphers set, and client validation on without a CA).
func (o *ctpObjects) downstreamTLS(ref ir.PolicyRef, spec *egv1a1.ClientTrafficPolicySpec) (*ir.DownstreamTLS, error) {
	out := &ir.DownstreamTLS{MinVersion: string(egv1a1.TLSv12), MaxVersion: string(egv1a1.TLSv13)}
	t := spec.TLS
	if t == nil {
		return out, nil
	}
	if t.ALPNProtocols != nil {
		out.ALPNSet = true
		for _, p := range t.ALPNProtocols {
			out.ALPN = append(out.ALPN, string(p))
		}
	}
	if t.MinVersion != nil {
		out.MinVersion = string(*t.MinVersion)
	}
	if t.MaxVersion != nil {
		out.MaxVersion = string(*t.MaxVersion)
	}
	for _, c := range t.Ciphers {
		if !validCiphers[c] {
			return out, fmt.Errorf("unsupported cipher suite: %s", c)
		}
	}
	out.Ciphers = t.Ciphers
	out.ECDHCurves = t.ECDHCurves
	out.SignatureAlgorithms = t.SignatureAlgorithms
	for _, f := range t.Fingerprints {
		out.Fingerprints = append(out.Fingerprints, string(f))
	}
	if cv := t.ClientValidation; cv != nil {
		if err := o.clientValidation(ref, cv, out); err != nil {
			return out, err
		}
	}
	if s := t.Session; s != nil && s.Resumption != nil {
		out.StatelessResumption = s.Resumption.Stateless != nil
		out.StatefulResumption = s.Resumption.Stateful != nil
	}
	return out, nil
}

// clientValidation turns client validation on with its mode, then gathers the CA bundle:
// each reference's valid CAs (expired and not-yet-valid ones dropped, TLS-05), each CA once.
// A reference whose CAs are all invalid, or that cannot be read, fails the policy.
func (o *ctpObjects) clientValidation(ref ir.PolicyRef, cv *egv1a1.ClientValidationContext,
	out *ir.DownstreamTLS) error {
	mode := egv1a1.ClientValidationRequireAndVerify
	switch {
	case cv.Mode != nil:
		mode = *cv.Mode
	case cv.Optional:
		mode = egv1a1.ClientValidationVerifyIfGiven // the deprecated optional: true
	}
	v := &ir.ClientValidation{RequireClientCertificate: true}
	switch mode {
	case egv1a1.ClientValidationRequest:
		v.RequireClientCertificate, v.AcceptUntrusted = false, true
	case egv1a1.ClientValidationRequireAny:
		v.AcceptUntrusted = true
	case egv1a1.ClientValidationVerifyIfGiven:
		v.RequireClientCertificate = false
	}
	out.ClientValidation = v

	var bundle []byte
	seen := map[[sha256.Size]byte]bool{}
	for _, r := range cv.CACertificateRefs {
		data, err := o.caData(ref.Namespace, r, "ca.crt")
		if err != nil {
			return fmt.Errorf("failed to get certificate from ref: %w", err)
		}
		valid, errs := certs.CABundle(data, o.now)
		if len(valid) == 0 {
			return fmt.Errorf("no valid certificates exist in %s: %w", r.Name, noValidCA(data, errs))
		}
		bundle = appendNewCerts(bundle, valid, seen)
	}
	if len(bundle) == 0 &&
		(mode == egv1a1.ClientValidationVerifyIfGiven || mode == egv1a1.ClientValidationRequireAndVerify) {
		if cv.Mode == nil && cv.Optional {
			return fmt.Errorf("tls.clientValidation.optional=true requires caCertificateRefs (maps to mode %q)", mode)
		}
		return fmt.Errorf("tls.clientValidation.mode %q requires caCertificateRefs", mode)
	}
	if len(bundle) > 0 {
		v.CA = &ir.CABundle{Name: ref.Namespace + "/" + ref.Name + "/ca.crt", PEM: bundle}
	}
	v.SPKIHashes = cv.SPKIHashes
	v.CertificateHashes = cv.CertificateHashes
	v.AllowExpiredCertificate = cv.AllowExpiredCertificate != nil && *cv.AllowExpiredCertificate
	if s := cv.SubjectAltNames; s != nil {
		add := func(typ string, ms []egv1a1.StringMatch) {
			for _, m := range ms {
				v.SubjectAltNames = append(v.SubjectAltNames, ir.SANMatch{Type: typ, Match: stringMatch("", m)})
			}
		}
		add("DNS", s.DNSNames)
		add("EMAIL", s.EmailAddresses)
		add("IP_ADDRESS", s.IPAddresses)
		add("URI", s.URIs)
		for _, on := range s.OtherNames {
			add(on.Oid, []egv1a1.StringMatch{on.StringMatch})
		}
	}
	if c := cv.Crl; c != nil {
		var crl []byte
		for _, r := range c.Refs {
			data, err := o.caData(ref.Namespace, r, "ca.crl")
			if err != nil {
				return fmt.Errorf("failed to get crl from ref: %w", err)
			}
			if err := checkCRL(data, o.now); err != nil {
				return fmt.Errorf("invalid crl in %s: %w", r.Name, err)
			}
			crl = append(crl, data...)
		}
		if len(crl) > 0 {
			v.CRL = &ir.CRL{PEM: crl, OnlyVerifyLeaf: c.OnlyVerifyLeafCertificate != nil && *c.OnlyVerifyLeafCertificate}
		}
	}
	return nil
}

// checkCRL refuses a revocation list that does not parse or is outside its update window
// at now (the first PEM block is the one checked).
func checkCRL(data []byte, now time.Time) error {
	b, _ := pem.Decode(data)
	if b == nil {
		return errors.New("unable to decode pem data for CRL")
	}
	crl, err := x509.ParseRevocationList(b.Bytes)
	if err != nil {
		return fmt.Errorf("failed to parse CRL: %w", err)
	}
	if !crl.NextUpdate.IsZero() && now.After(crl.NextUpdate) {
		return fmt.Errorf("CRL is expired (next update was due at %v)", crl.NextUpdate)
	}
	if now.Before(crl.ThisUpdate) {
		return fmt.Errorf("CRL is not yet valid (this update starts at %v)", crl.ThisUpdate)
	}
	return nil
}

// noValidCA says why a CA reference gave nothing: its CAs' errors, or no PEM at all.
func noValidCA(data []byte, errs []error) error {
	switch {
	case len(data) == 0:
		return errors.New("no certificate data provided")
	case len(errs) > 0:
		return errors.Join(errs...)
	}
	return errors.New("unable to decode pem data for certificate")
}

// caData reads a CA (or CRL) reference under key: a Secret or ConfigMap (key ca.crt, or its only key) in the
// policy's namespace or, with a ReferenceGrant, another; a ClusterTrustBundle by name.
func (o *ctpObjects) caData(ns string, r gwapiv1.SecretObjectReference, key string) ([]byte, error) {
	kind := "Secret"
	if r.Kind != nil {
		kind = string(*r.Kind)
	}
	if kind == "ClusterTrustBundle" {
		b, ok := o.bundles[string(r.Name)]
		if !ok {
			return nil, fmt.Errorf("ref ClusterTrustBundle [%s] not found", r.Name)
		}
		return []byte(b), nil
	}
	if r.Group != nil && *r.Group != "" {
		return nil, errors.New("secret ref group must be unspecified/empty")
	}
	if kind != "Secret" && kind != "ConfigMap" {
		return nil, errors.New("secret ref kind must be Secret")
	}
	target := ns
	if r.Namespace != nil && *r.Namespace != "" && string(*r.Namespace) != ns {
		target = string(*r.Namespace)
		if !o.refs.permitted("ClientTrafficPolicy", ns, kind, target, string(r.Name)) {
			return nil, fmt.Errorf("ref to %s %s/%s not permitted by any ReferenceGrant", kind, target, r.Name)
		}
	}
	if kind == "ConfigMap" {
		cm := o.refs.configMaps[nsName{target, string(r.Name)}]
		if cm == nil {
			return nil, fmt.Errorf("configmap %s/%s does not exist", target, r.Name)
		}
		v, ok := dataKey(cm.Data, key)
		if !ok || v == "" {
			return nil, fmt.Errorf("ref configmap [%s] has none of the expected keys [%s] and more than one entry", r.Name, key)
		}
		return []byte(v), nil
	}
	s := o.refs.secrets[nsName{target, string(r.Name)}]
	if s == nil {
		return nil, fmt.Errorf("secret %s/%s does not exist", target, r.Name)
	}
	data := map[string]string{}
	for k, v := range s.Data {
		data[k] = string(v)
	}
	for k, v := range s.StringData { // the API server merges stringData into data
		data[k] = v
	}
	v, ok := dataKey(data, key)
	if !ok || v == "" {
		return nil, fmt.Errorf("ref secret [%s] has none of the expected keys [%s] and more than one entry", r.Name, key)
	}
	return []byte(v), nil
}

// dataKey is the value under key, or the only value of an object with one key.
func dataKey(data map[string]string, key string) (string, bool) {
	if v, ok := data[key]; ok {
		return v, true
	}
	if len(data) == 1 {
		for _, v := range data {
			return v, true
		}
	}
	return "", false
}

// appendNewCerts appends the PEM blocks of add that dst does not hold yet (by the
// certificate's DER), so a CA named by two references is trusted once.
func appendNewCerts(dst, add []byte, seen map[[sha256.Size]byte]bool) []byte {
	for rest := add; len(rest) > 0; {
		b, r := pem.Decode(rest)
		if b == nil {
			break
		}
		rest = r
		if b.Type == "CERTIFICATE" {
			h := sha256.Sum256(b.Bytes)
			if seen[h] {
				continue
			}
			seen[h] = true
		}
		dst = append(dst, pem.EncodeToMemory(b)...)
	}
	return dst
}
