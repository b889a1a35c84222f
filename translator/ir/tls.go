package ir

// SDSSource is a listener certificate that Envoy fetches from an external SDS server
// (a gateway.envoyproxy.io/sds Secret, TLS-08) instead of receiving it inline.
type SDSSource struct {
	// SecretName is the secret Envoy asks the server for.
	SecretName string `json:"secretName"`
	// URL is the server's unix socket, unix://<path>.
	URL string `json:"url"`
}
