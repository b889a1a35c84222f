package ir

// UpstreamTLS is how Envoy opens TLS to a backend: the BackendTLSPolicy that targets it
// merged over an EG Backend's own spec.tls, with the client side (certificate, versions,
// ciphers, ALPN) of the Backend merged over the EnvoyProxy's backendTLS.
type UpstreamTLS struct {
	// Policy is the BackendTLSPolicy, <namespace>/<name>, or Backend/<namespace>/<name>
	// when only a Backend's spec.tls asks for TLS.
	Policy string `json:"policy"`
	// SNI is the server name Envoy sends (the policy's hostname, else the Backend's sni);
	// empty: none of its own (see AutoHostSNI, and the cluster's auto SNI in xDS).
	SNI string `json:"sni"`
	// AutoHostSNI: the SNI is the endpoint's hostname (a Backend's
	// autoSNIFromEndpointHostname, ignored when a policy sets the SNI).
	AutoHostSNI bool `json:"autoHostSNI,omitempty"`
	// CAName names the SDS secret holding the trust anchors: <policy>/<namespace>-ca for CA
	// refs, system_ca_certificates (or <policy>/<namespace>-ca under the
	// PerResourceSystemCASecret flag) for the system store.
	CAName string `json:"caName"`
	// CA is the PEM bundle from the CA refs; empty when SystemCA is set.
	CA []byte `json:"-"`
	// CASource says where the trust comes from: ConfigMap/<name>, Secret/<name>,
	// ClusterTrustBundle/<name> (comma separated), or System.
	CASource string `json:"caSource"`
	// SystemCA: trust the proxy's system store (wellKnownCACertificates: System).
	SystemCA bool `json:"systemCA,omitempty"`
	// Insecure: the backend's certificate is not verified (a Backend's insecureSkipVerify).
	Insecure bool `json:"insecure,omitempty"`
	// CASDS: the trust anchors come from an external SDS server (an SDS reference Secret
	// among the CA refs); EG then sends no CA secret of its own.
	CASDS *SDSSource `json:"caSDS,omitempty"`
	// SubjectAltNames the certificate must carry; when empty, SNI is checked as a DNS SAN.
	SubjectAltNames []SubjectAltName `json:"subjectAltNames,omitempty"`
	// MinVersion and MaxVersion of TLS, e.g. "1.2" and "1.3".
	MinVersion string `json:"minVersion"`
	MaxVersion string `json:"maxVersion"`
	// Ciphers, ECDHCurves, SignatureAlgorithms and ALPN come from the Backend's or the
	// EnvoyProxy's backendTLS settings.
	Ciphers             []string `json:"ciphers,omitempty"`
	ECDHCurves          []string `json:"ecdhCurves,omitempty"`
	SignatureAlgorithms []string `json:"signatureAlgorithms,omitempty"`
	ALPN                []string `json:"alpn,omitempty"`
	// ClientCertificates Envoy presents to the backend (a Backend's or the EnvoyProxy's
	// clientCertificateRef), each an SDS secret <namespace>/<name> or an external SDS source.
	ClientCertificates []TLSCertificate `json:"clientCertificates,omitempty"`
}

// SubjectAltName is one identity the upstream certificate must carry.
type SubjectAltName struct {
	Hostname string `json:"hostname,omitempty"`
	URI      string `json:"uri,omitempty"`
}
