package xds

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"time"

	clusterv3 "github.com/envoyproxy/go-control-plane/envoy/config/cluster/v3"
	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	routev3 "github.com/envoyproxy/go-control-plane/envoy/config/route/v3"
	jwtauthnv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/http/jwt_authn/v3"
	tlsv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/transport_sockets/tls/v3"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/durationpb"
	"google.golang.org/protobuf/types/known/emptypb"

	"github.com/egharness/egharness/translator/ir"
)

const (
	jwtAuthnFilter = ir.FilterJWTAuthn
	// jwksFetchTimeout is how long Envoy waits for a remote JWKS (EG's default for calls
	// to external services).
	jwksFetchTimeout = 10 * time.Second
	// maxJWTNameLength keeps generated names within what Envoy accepts; the hash is kept
	// whole so that a cut name stays unique.
	maxJWTNameLength = 256
	// systemCAFile is the trust store EG gives clusters it builds from an https URL.
	systemCAFile = "/etc/ssl/certs/ca-certificates.crt"
)

// jwtProviderSpec is one provider of the effective spec, with its key set resolved.
type jwtProviderSpec struct {
	ir.JWTProvider
	localJWKS string
	// jwksService is the service the remote key set is fetched through (backendRefs).
	jwksService *ir.ExtService
}

// addJWT configures jwt_authn for the route (SP-03, SP-06, SP-07): each provider becomes a
// JwtProvider, the route's requirement is any of its providers (plus "missing" or
// "missing or failed" when tokens are optional or the policy fails open), and the route
// points at that requirement by name.
func (s *httpFilterSet) addJWT(out *routev3.Route, r *ir.HTTPRoute, j *ir.JWT) error {
	if s.jwt == nil {
		s.jwt = &jwtauthnv3.JwtAuthentication{
			Providers:      map[string]*jwtauthnv3.JwtProvider{},
			RequirementMap: map[string]*jwtauthnv3.JwtRequirement{},
		}
	}
	names := make([]string, 0, len(j.Providers)+1)
	reqs := make([]*jwtauthnv3.JwtRequirement, 0, len(j.Providers)+1)
	for _, p := range j.Providers {
		spec := jwtProviderSpec{JWTProvider: p}
		if p.LocalJWKS != nil {
			switch {
			case p.LocalJWKS.Inline != nil:
				spec.localJWKS = *p.LocalJWKS.Inline
			case r.PolicyData != nil && r.PolicyData.LocalJWKS[p.Name] != "":
				spec.localJWKS = r.PolicyData.LocalJWKS[p.Name]
			default:
				return fmt.Errorf("jwt provider %s: local JWKS not resolved", p.Name)
			}
		}
		if rj := p.RemoteJWKS; rj != nil && rj.BackendRefs {
			if r.PolicyData == nil || r.PolicyData.RemoteJWKS[p.Name] == nil {
				return fmt.Errorf("jwt provider %s: the backends of the remote JWKS are not resolved", p.Name)
			}
			spec.jwksService = r.PolicyData.RemoteJWKS[p.Name]
		}
		provider, cluster, err := jwtProvider(spec)
		if err != nil {
			return fmt.Errorf("jwt provider %s: %w", p.Name, err)
		}
		if cluster != nil {
			s.addCluster(*cluster)
		}
		key := r.Name + "/" + p.Name // v1.8: one provider per route
		if s.features.JWTStableNames {
			key = boundedJWTName(p.Name, protoHash(provider))
		}
		s.jwt.Providers[key] = provider
		names = append(names, p.Name)
		reqs = append(reqs,
			&jwtauthnv3.JwtRequirement{RequiresType: &jwtauthnv3.JwtRequirement_ProviderName{ProviderName: key}})
	}
	switch {
	case j.FailOpen:
		names = append(names, "missing-or-failed")
		reqs = append(reqs,
			&jwtauthnv3.JwtRequirement{
				RequiresType: &jwtauthnv3.JwtRequirement_AllowMissingOrFailed{AllowMissingOrFailed: &emptypb.Empty{}}})
	case j.Optional:
		names = append(names, "missing")
		reqs = append(reqs,
			&jwtauthnv3.JwtRequirement{RequiresType: &jwtauthnv3.JwtRequirement_AllowMissing{AllowMissing: &emptypb.Empty{}}})
	}
	req := reqs[0]
	if len(reqs) > 1 {
		req = &jwtauthnv3.JwtRequirement{RequiresType: &jwtauthnv3.JwtRequirement_RequiresAny{
			RequiresAny: &jwtauthnv3.JwtRequirementOrList{Requirements: reqs},
		}}
	}
	reqName := r.Name // v1.8: the requirement is the route's
	if s.features.JWTStableNames {
		reqName = boundedJWTName(strings.Join(names, "-or-"), protoHash(req))
	}
	s.jwt.RequirementMap[reqName] = req
	return setPerRoute(out, jwtAuthnFilter, &jwtauthnv3.PerRouteConfig{
		RequirementSpecifier: &jwtauthnv3.PerRouteConfig_RequirementName{RequirementName: reqName},
	})
}

// jwtProvider builds one provider, and the cluster its remote key set is fetched from.
// The payload goes to metadata under the provider's name (for authorization on claims),
// the token is forwarded, and "scope"/"scp" are split on spaces so rules can match one
// scope. recomputeRoute clears the route cache so headers copied from claims can select
// a route (SP-07).
func jwtProvider(p jwtProviderSpec) (*jwtauthnv3.JwtProvider, *clusterPair, error) {
	claims := make([]*jwtauthnv3.JwtClaimToHeader, 0, len(p.ClaimToHeaders))
	for _, c := range p.ClaimToHeaders {
		claims = append(claims, &jwtauthnv3.JwtClaimToHeader{HeaderName: c.Header, ClaimName: c.Claim})
	}
	out := &jwtauthnv3.JwtProvider{
		Issuer:            p.Issuer,
		Audiences:         p.Audiences,
		PayloadInMetadata: p.Name,
		ClaimToHeaders:    claims,
		Forward:           true,
		NormalizePayloadInMetadata: &jwtauthnv3.JwtProvider_NormalizePayload{
			SpaceDelimitedClaims: []string{"scope", "scp"},
		},
	}
	var cluster *clusterPair
	if p.LocalJWKS != nil {
		out.JwksSourceSpecifier = &jwtauthnv3.JwtProvider_LocalJwks{LocalJwks: &corev3.DataSource{
			Specifier: &corev3.DataSource_InlineString{InlineString: p.localJWKS},
		}}
	} else if rj := p.RemoteJWKS; rj != nil {
		// The key set comes through the policy's backends (their cluster, with the
		// backendSettings' cluster settings and retry) or, without backendRefs, from a
		// cluster built from the URI's host.
		if rj.BackendRefs {
			svc := p.jwksService
			if svc == nil || svc.Destination == nil {
				return nil, nil, fmt.Errorf("the backends of the remote JWKS are not resolved")
			}
			sc := extServiceCluster(svc.Destination, svc.Owner, rj.Cluster)
			cluster = &sc
		} else {
			uc, err := urlClusterOf(rj.URI)
			if err != nil {
				return nil, nil, err
			}
			cluster = uc
		}
		remote := &jwtauthnv3.RemoteJwks{
			HttpUri: &corev3.HttpUri{
				Uri:              rj.URI,
				HttpUpstreamType: &corev3.HttpUri_Cluster{Cluster: cluster.cluster.Name},
				Timeout:          durationpb.New(jwksFetchTimeout),
			},
			AsyncFetch:  &jwtauthnv3.JwksAsyncFetch{},
			RetryPolicy: extServiceRetry(rj.Retry),
		}
		if d := rj.CacheDuration; d != nil {
			remote.CacheDuration = durationpb.New(*d)
		}
		if d := rj.FailedRefetchDuration; d != nil {
			remote.AsyncFetch.FailedRefetchDuration = durationpb.New(*d)
		}
		out.JwksSourceSpecifier = &jwtauthnv3.JwtProvider_RemoteJwks{RemoteJwks: remote}
	} else {
		return nil, nil, fmt.Errorf("neither localJWKS nor remoteJWKS")
	}
	out.ClearRouteCache = p.RecomputeRoute
	if e := p.ExtractFrom; e != nil {
		out.FromHeaders = make([]*jwtauthnv3.JwtHeader, 0, len(e.Headers))
		for _, h := range e.Headers {
			out.FromHeaders = append(out.FromHeaders, &jwtauthnv3.JwtHeader{Name: h.Name, ValuePrefix: h.ValuePrefix})
		}
		out.FromCookies = e.Cookies
		out.FromParams = e.Params
	}
	return out, cluster, nil
}

// boundedJWTName is "<prefix>_<hash>", the prefix cut so the whole fits maxJWTNameLength.
func boundedJWTName(prefix, hash string) string {
	suffix := "_" + hash
	if max := maxJWTNameLength - len(suffix); len(prefix) > max {
		prefix = prefix[:max]
	}
	return prefix + suffix
}

// protoHash is 16 hex digits of the SHA-256 of a message's deterministic encoding: equal
// configs get equal names, so routes share one provider and one requirement (SP-06).
func protoHash(m proto.Message) string {
	b, err := proto.MarshalOptions{Deterministic: true}.Marshal(m)
	if err != nil {
		panic(err) // a message this stage built: cannot fail
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:8])
}

// urlClusterOf is the cluster EG builds to reach a URL: named <host with "_" for ".">_<port>,
// resolved by DNS (static for an IP), with TLS against the system trust store for https.
func urlClusterOf(raw string) (*clusterPair, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return nil, err
	}
	port := uint64(80)
	if u.Scheme == "https" {
		port = 443
	}
	if u.Port() != "" {
		if port, err = strconv.ParseUint(u.Port(), 10, 32); err != nil {
			return nil, err
		}
	}
	host := u.Hostname()
	name := fmt.Sprintf("%s_%d", strings.ReplaceAll(host, ".", "_"), port)
	c := buildCluster(name, resourceRef{}, false)
	c.Metadata = nil
	cla := oneEndpointLoadAssignment(name, host, uint32(port))
	if u.Scheme == "https" {
		c.TransportSocket = &corev3.TransportSocket{
			Name: tlsTransportSocket,
			ConfigType: &corev3.TransportSocket_TypedConfig{TypedConfig: mustAny(&tlsv3.UpstreamTlsContext{
				Sni: host,
				CommonTlsContext: &tlsv3.CommonTlsContext{
					TlsParams: &tlsv3.TlsParameters{TlsMaximumProtocolVersion: tlsv3.TlsParameters_TLSv1_3},
					ValidationContextType: &tlsv3.CommonTlsContext_ValidationContext{
						ValidationContext: &tlsv3.CertificateValidationContext{
							TrustedCa: &corev3.DataSource{Specifier: &corev3.DataSource_Filename{Filename: systemCAFile}},
						}},
				},
			})},
		}
	}
	if _, err := netip.ParseAddr(host); err == nil {
		c.ClusterDiscoveryType = &clusterv3.Cluster_Type{Type: clusterv3.Cluster_STATIC}
		c.EdsClusterConfig = nil
		c.LoadAssignment = cla
		return &clusterPair{cluster: c, cla: cla, static: true}, nil
	}
	return &clusterPair{cluster: c, cla: cla, dns: true}, nil
}

// addCluster records a cluster a filter calls, once.
func (s *httpFilterSet) addCluster(c clusterPair) {
	for _, have := range s.clusters {
		if have.cluster.Name == c.cluster.Name {
			return
		}
	}
	s.clusters = append(s.clusters, c)
}
