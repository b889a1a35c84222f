package ir

// DownstreamTLS is what a ClientTrafficPolicy makes of the TLS a listener terminates
// (CTP-02): protocol versions, cipher and curve lists, ALPN, client certificate validation
// and session resumption. The policy stage resolves it (CA references read, expired CAs
// dropped); the xDS stage writes it onto the listener's DownstreamTlsContext. A listener
// without a ClientTrafficPolicy has none, and Envoy's defaults apply.
type DownstreamTLS struct {
	// MinVersion and MaxVersion are EG's version names (1.0 ... 1.3, Auto). EG pins them to
	// 1.2 and 1.3 on any terminating listener a ClientTrafficPolicy reaches, tls block or not.
	MinVersion string `json:"minVersion,omitempty"`
	MaxVersion string `json:"maxVersion,omitempty"`

	Ciphers             []string `json:"ciphers,omitempty"`
	ECDHCurves          []string `json:"ecdhCurves,omitempty"`
	SignatureAlgorithms []string `json:"signatureAlgorithms,omitempty"`

	// ALPNSet: the policy lists ALPN protocols, and ALPN replaces the listener's default
	// (h2,http/1.1, or http/1.1 where certificates overlap, TLS-09); an empty list offers none.
	ALPNSet bool     `json:"alpnSet,omitempty"`
	ALPN    []string `json:"alpn,omitempty"`

	ClientValidation *ClientValidation `json:"clientValidation,omitempty"`

	// Fingerprints are the client fingerprints (JA3, JA4) the TLS inspector computes.
	Fingerprints []string `json:"fingerprints,omitempty"`

	// Session resumption the policy turns on; EG disables both by default.
	StatelessResumption bool `json:"statelessResumption,omitempty"`
	StatefulResumption  bool `json:"statefulResumption,omitempty"`
}

// ClientValidation is how the listener checks client certificates.
type ClientValidation struct {
	// RequireClientCertificate: a client without a certificate is refused.
	RequireClientCertificate bool `json:"requireClientCertificate"`
	// AcceptUntrusted: a certificate the CAs do not sign is still accepted (modes Request
	// and RequireAny).
	AcceptUntrusted         bool `json:"acceptUntrusted,omitempty"`
	AllowExpiredCertificate bool `json:"allowExpiredCertificate,omitempty"`
	// CA is the trust bundle, sent as an SDS validation-context secret; nil when the policy
	// names no usable CA.
	CA                *CABundle  `json:"ca,omitempty"`
	SPKIHashes        []string   `json:"spkiHashes,omitempty"`
	CertificateHashes []string   `json:"certificateHashes,omitempty"`
	SubjectAltNames   []SANMatch `json:"subjectAltNames,omitempty"`
	// CRL is the revocation lists checked with the CA (sent in the CA's secret).
	CRL *CRL `json:"crl,omitempty"`
}

// CRL is the concatenated revocation lists of the policy's CRL references.
type CRL struct {
	PEM []byte `json:"-"`
	// OnlyVerifyLeaf checks only the client's own certificate against the lists.
	OnlyVerifyLeaf bool `json:"onlyVerifyLeaf,omitempty"`
}

// CABundle is a client-validation trust bundle. From a ClientTrafficPolicy: the valid CAs of
// every referenced object, each once, in canonical PEM (TLS-05 dropped the expired ones),
// named <policy namespace>/<policy name>/ca.crt. From a Gateway's spec.tls.frontend: the
// referenced objects' CA data joined as they are, named
// gateway/<namespace>/<name>/<default or port>/ca.crt, or an external SDS source (SDS).
type CABundle struct {
	Name string     `json:"name"`
	PEM  []byte     `json:"-"`
	SDS  *SDSSource `json:"sds,omitempty"`
}

// SANMatch is one subject alternative name a client certificate must carry: Type is DNS,
// EMAIL, IP_ADDRESS, URI, or an OID for an otherName.
type SANMatch struct {
	Type  string      `json:"type"`
	Match StringMatch `json:"match"`
}
