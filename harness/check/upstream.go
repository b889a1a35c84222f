package check

import (
	"fmt"
	"slices"

	clusterv3 "github.com/envoyproxy/go-control-plane/envoy/config/cluster/v3"
	endpointv3 "github.com/envoyproxy/go-control-plane/envoy/config/endpoint/v3"
	tlsv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/transport_sockets/tls/v3"
	httpv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/upstreams/http/v3"

	"github.com/egharness/egharness/harness/scenario"
	"github.com/egharness/egharness/translator/result"
)

// UpstreamTLS is the TLS context Envoy uses toward the backend a request reaches, read the
// way Envoy selects it: the endpoint's envoy.transport_socket_match metadata names one of
// the cluster's transport socket matches; without a match, the cluster's own socket.
type UpstreamTLS struct {
	Plaintext       bool
	SNI             string
	CASecret        string
	Trust           string // Inline, System, External, or "" when unknown
	SubjectAltNames []string
	MinVersion      string
	MaxVersion      string
	// Insecure: no validation context, the backend's certificate is not checked.
	Insecure bool
	// ClientCertificate is the SDS secret Envoy presents, "none" without one.
	ClientCertificate string
	ALPN              []string
}

// upstreamTLSOf finds the context for a cluster's locality (backend); host is the request's
// host as forwarded, what Envoy sends as SNI when the cluster has auto SNI and the context
// no SNI of its own (with auto_host_sni, the endpoint's hostname instead).
func upstreamTLSOf(x *result.XDS, cluster, locality, host string) UpstreamTLS {
	var c *clusterv3.Cluster
	for _, cl := range x.Clusters {
		if cl.GetName() == cluster {
			c = cl
		}
	}
	if c == nil {
		return UpstreamTLS{Plaintext: true}
	}
	match, endpointHost := "", ""
	assignments := append([]*endpointv3.ClusterLoadAssignment{}, x.Endpoints...)
	if c.GetLoadAssignment() != nil {
		assignments = append(assignments, c.GetLoadAssignment()) // DNS clusters carry theirs inline
	}
	for _, e := range assignments {
		if e.GetClusterName() != cluster {
			continue
		}
		for _, l := range e.GetEndpoints() {
			// Without a locality (an inline assignment the checker does not weigh), the first.
			if (locality != "" && l.GetLocality().GetRegion() != locality) || len(l.GetLbEndpoints()) == 0 || match != "" {
				continue
			}
			lb := l.GetLbEndpoints()[0]
			f := lb.GetMetadata().GetFilterMetadata()["envoy.transport_socket_match"]
			match = f.GetFields()["name"].GetStringValue()
			// The host's name: the endpoint's hostname, or for a DNS cluster the name resolved.
			endpointHost = lb.GetEndpoint().GetHostname()
			if endpointHost == "" && c.GetLoadAssignment() != nil {
				endpointHost = lb.GetEndpoint().GetAddress().GetSocketAddress().GetAddress()
			}
		}
	}
	ts := c.GetTransportSocket()
	if match != "" {
		for _, m := range c.GetTransportSocketMatches() {
			if m.GetName() == match {
				ts = m.GetTransportSocket()
			}
		}
	}
	var ctx tlsv3.UpstreamTlsContext
	if ts == nil || ts.GetName() == "dummy.transport_socket" || ts.GetTypedConfig().UnmarshalTo(&ctx) != nil {
		return UpstreamTLS{Plaintext: true}
	}
	out := UpstreamTLS{SNI: ctx.GetSni()}
	switch {
	case out.SNI != "":
	case ctx.GetAutoHostSni():
		out.SNI = endpointHost // the endpoint's hostname (autoSNIFromEndpointHostname)
	case autoSNI(c):
		out.SNI = host // the cluster's auto SNI: the request's host, as forwarded
	}
	common := ctx.GetCommonTlsContext()
	out.Insecure = common.GetValidationContextType() == nil
	out.ClientCertificate = "none"
	if certs := common.GetTlsCertificateSdsSecretConfigs(); len(certs) > 0 {
		out.ClientCertificate = certs[0].GetName()
	}
	out.ALPN = common.GetAlpnProtocols()
	out.MinVersion = common.GetTlsParams().GetTlsMinimumProtocolVersion().String()
	out.MaxVersion = common.GetTlsParams().GetTlsMaximumProtocolVersion().String()
	cvc := common.GetCombinedValidationContext()
	sds := cvc.GetValidationContextSdsSecretConfig()
	out.CASecret = sds.GetName()
	for _, m := range cvc.GetDefaultValidationContext().GetMatchTypedSubjectAltNames() {
		out.SubjectAltNames = append(out.SubjectAltNames, m.GetSanType().String()+":"+m.GetMatcher().GetExact())
	}
	switch {
	case sds.GetSdsConfig().GetApiConfigSource() != nil:
		out.Trust = "External"
	default:
		for _, s := range x.Secrets {
			if s.GetName() != out.CASecret {
				continue
			}
			if s.GetValidationContext().GetTrustedCa().GetFilename() != "" {
				out.Trust = "System"
			} else if len(s.GetValidationContext().GetTrustedCa().GetInlineBytes()) > 0 {
				out.Trust = "Inline"
			}
		}
	}
	return out
}

// upstreamTLSDiffs compares what a scenario expects of the upstream TLS with what the
// request would get.
func upstreamTLSDiffs(want *scenario.UpstreamTLSExpect, x *result.XDS, a Answer) []string {
	if want == nil {
		return nil
	}
	if a.Cluster == "" {
		return []string{"upstream TLS expected, but the request reaches no cluster"}
	}
	got := upstreamTLSOf(x, a.Cluster, a.Backend, a.RequestHeaders[":authority"])
	var diffs []string
	if want.Plaintext != got.Plaintext {
		if got.Plaintext {
			return []string{"upstream TLS: the backend is reached in plaintext"}
		}
		diffs = append(diffs, fmt.Sprintf("upstream TLS with SNI %q, expected plaintext", got.SNI))
	}
	cmp := func(field, w, g string) {
		if w != "" && w != g {
			diffs = append(diffs, fmt.Sprintf("upstream TLS %s %q, expected %q", field, g, w))
		}
	}
	cmp("SNI", want.SNI, got.SNI)
	cmp("CA secret", want.CASecret, got.CASecret)
	cmp("trust", want.Trust, got.Trust)
	cmp("minimum version", want.MinVersion, got.MinVersion)
	cmp("maximum version", want.MaxVersion, got.MaxVersion)
	if len(want.SubjectAltNames) > 0 && !slices.Equal(want.SubjectAltNames, got.SubjectAltNames) {
		diffs = append(diffs,
			fmt.Sprintf("upstream TLS subject alt names %v, expected %v", got.SubjectAltNames, want.SubjectAltNames))
	}
	if want.InsecureSkipVerify && !got.Insecure {
		diffs = append(diffs, "upstream TLS verifies the backend's certificate, expected insecureSkipVerify")
	}
	cmp("client certificate", want.ClientCertificate, got.ClientCertificate)
	gotALPN := got.ALPN
	if len(gotALPN) == 0 {
		gotALPN = []string{"none"}
	}
	if len(want.ALPN) > 0 && !slices.Equal(want.ALPN, gotALPN) {
		diffs = append(diffs, fmt.Sprintf("upstream TLS ALPN %v, expected %v", gotALPN, want.ALPN))
	}
	return diffs
}

// autoSNI: the cluster's HTTP protocol options make Envoy send the request's host as SNI.
func autoSNI(c *clusterv3.Cluster) bool {
	a := c.GetTypedExtensionProtocolOptions()["envoy.extensions.upstreams.http.v3.HttpProtocolOptions"]
	if a == nil {
		return false
	}
	var opts httpv3.HttpProtocolOptions
	if a.UnmarshalTo(&opts) != nil {
		return false
	}
	return opts.GetUpstreamHttpProtocolOptions().GetAutoSni()
}
