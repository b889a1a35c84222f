package certs

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"unicode/utf8"

	corev1 "k8s.io/api/core/v1"
)

// SDSSecretType is the Secret type of an SDS reference (EG's gateway.envoyproxy.io/sds):
// the Secret names an external SDS server and the secret to ask it for, not a certificate.
const SDSSecretType corev1.SecretType = "gateway.envoyproxy.io/sds"

// SDSRef is what an SDS reference Secret says.
type SDSRef struct {
	// SecretName is the name Envoy asks the SDS server for.
	SecretName string
	// URL is the server's address as scheme://address (unix://<path>).
	URL string
}

// ReadSDSRef reads an SDS reference Secret: keys secretName and url, the url a unix socket
// (SDS-01: unix:///absolute/path or unix://./relative/path; a bare path has no scheme and
// is refused, although v1.9.0-rc.0 took it).
func ReadSDSRef(s *corev1.Secret) (SDSRef, error) {
	name, u := data(s, "secretName"), data(s, "url")
	if len(name) == 0 {
		return SDSRef{}, fmt.Errorf("no secretName found in SDS reference secret %s/%s", s.Namespace, s.Name)
	}
	if len(u) == 0 {
		return SDSRef{}, fmt.Errorf("no url found in SDS reference secret %s/%s", s.Namespace, s.Name)
	}
	addr, err := unixAddress(string(u))
	if err != nil {
		return SDSRef{}, fmt.Errorf("invalid URL in SDS reference secret %s/%s: %w", s.Namespace, s.Name, err)
	}
	return SDSRef{SecretName: string(name), URL: "unix://" + addr}, nil
}

func data(s *corev1.Secret, key string) []byte {
	if v, ok := s.StringData[key]; ok {
		return []byte(v)
	}
	return s.Data[key]
}

// unixAddress is the socket path of a unix:// URL. The SPIFFE workload API writes relative
// paths as unix://./path, where "." parses as the host.
func unixAddress(raw string) (string, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return "", fmt.Errorf("invalid URL: %w", err)
	}
	if u.Scheme != "unix" {
		return "", fmt.Errorf("unsupported URL scheme: %s", u.Scheme)
	}
	if u.Host != "" && u.Host != "." {
		return "", errors.New("unix URL must not contain a host, use unix:///absolute/path")
	}
	if u.Path == "" && u.Host != "." {
		return "", errors.New("unix URL must contain a path")
	}
	return u.Host + u.Path, nil
}

// SDSClusterName names the STATIC cluster that reaches an SDS server (SDS-02): sds_, the
// socket path with "/" as "_" (outer "_" trimmed, at most 48 bytes, cut on a rune
// boundary), "_", and the first 16 bytes of the path's SHA-256 in hex, so two long paths
// that share a prefix still get two clusters.
func SDSClusterName(sdsURL string) string {
	path := strings.TrimPrefix(sdsURL, "unix://")
	sum := sha256.Sum256([]byte(path))
	hash := hex.EncodeToString(sum[:16])
	readable := strings.Trim(strings.ReplaceAll(path, "/", "_"), "_")
	for len(readable) > 48 {
		_, n := utf8.DecodeLastRuneInString(readable)
		readable = readable[:len(readable)-n]
	}
	if readable == "" {
		return "sds_" + hash
	}
	return "sds_" + readable + "_" + hash
}

// SDSPipe is the socket path a cluster for sdsURL connects to.
func SDSPipe(sdsURL string) string { return strings.TrimPrefix(sdsURL, "unix://") }
