package xds

import (
	"fmt"
	"net/url"
	"strings"
	"time"

	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	routev3 "github.com/envoyproxy/go-control-plane/envoy/config/route/v3"
	extauthzv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/http/ext_authz/v3"
	extprocv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/http/ext_proc/v3"
	matcherv3 "github.com/envoyproxy/go-control-plane/envoy/type/matcher/v3"
	typev3 "github.com/envoyproxy/go-control-plane/envoy/type/v3"
	"google.golang.org/protobuf/types/known/anypb"
	"google.golang.org/protobuf/types/known/durationpb"

	"github.com/egharness/egharness/translator/ir"
)

// Filters that call an external service: ext_authz (SecurityPolicy extAuth, SP-03) and
// ext_proc (EnvoyExtensionPolicy extProc, EEP-04). Each is one listener filter per
// configuration, disabled, enabled on the routes whose policy uses it, with a cluster of
// its own for the service (named by the policy stage).

const (
	extAuthzFilterType = ir.FilterExtAuthz
	extProcFilterType  = ir.FilterExtProc
	// extServiceTimeout is EG's timeout for a call to an external service.
	extServiceTimeout = 10 * time.Second
	// routeMetadataNamespace is the metadata namespace EG passes with includeRouteMetadata.
	routeMetadataNamespace = "envoy-gateway"
)

// addExtAuth adds the policy's ext_authz filter (named after the policy that declared
// extAuth, MRG-05) and its service cluster, and enables it on the route.
func (s *httpFilterSet) addExtAuth(out *routev3.Route, r *ir.HTTPRoute, ea *ir.ExtAuth) error {
	if r.PolicyData == nil || r.PolicyData.ExtAuth == nil || r.PolicyData.ExtAuth.Destination == nil {
		return fmt.Errorf("extAuth: service not resolved")
	}
	svc := r.PolicyData.ExtAuth
	if _, ok := s.named[ea.FilterName]; !ok {
		f := typedFilter(ea.FilterName, extAuthzConfig(ea, svc))
		f.Disabled = true
		s.named[ea.FilterName] = f
		s.addCluster(extServiceCluster(svc.Destination, svc.Owner, ea.Cluster))
	}
	return setPerRoute(out, ea.FilterName,
		&extauthzv3.ExtAuthzPerRoute{Override: &extauthzv3.ExtAuthzPerRoute_CheckSettings{
			CheckSettings: &extauthzv3.CheckSettings{ContextExtensions: svc.ContextExtensions},
		}})
}

func extAuthzConfig(ea *ir.ExtAuth, svc *ir.ExtService) *extauthzv3.ExtAuthz {
	cfg := &extauthzv3.ExtAuthz{
		TransportApiVersion: corev3.ApiVersion_V3,
		FailureModeAllow:    ea.FailOpen,
		ClearRouteCache:     ea.RecomputeRoute,
	}
	if ea.IncludeRouteMetadata {
		cfg.RouteMetadataContextNamespaces = []string{routeMetadataNamespace}
	}
	if ea.MaxRequestBytes != nil {
		cfg.WithRequestBody = &extauthzv3.BufferSettings{MaxRequestBytes: *ea.MaxRequestBytes}
	}
	if len(ea.HeadersToExtAuth) > 0 {
		cfg.AllowedHeaders = &matcherv3.ListStringMatcher{Patterns: exactIgnoreCase(ea.HeadersToExtAuth)}
	}
	if ea.StatusOnError != nil {
		cfg.StatusOnError = &typev3.HttpStatus{Code: typev3.StatusCode(*ea.StatusOnError)}
	}
	if h := ea.HTTP; h != nil {
		hs := &extauthzv3.HttpService{RetryPolicy: extServiceRetry(ea.Retry), PathPrefix: h.PathPrefix,
			PathOverride: h.PathOverride}
		// The URI names the service; Envoy calls the cluster, so the scheme is nominal.
		u := url.URL{Scheme: "http", Host: svc.Authority, Path: hs.PathPrefix}
		if hs.PathOverride != "" {
			u.Path = hs.PathOverride
		}
		hs.ServerUri = &corev3.HttpUri{
			Uri:              u.String(),
			HttpUpstreamType: &corev3.HttpUri_Cluster{Cluster: svc.Destination.Name},
			Timeout:          durationpb.New(ea.Timeout),
		}
		if len(h.HeadersToBackend) > 0 {
			hs.AuthorizationResponse = &extauthzv3.AuthorizationResponse{
				AllowedUpstreamHeaders: &matcherv3.ListStringMatcher{Patterns: exactIgnoreCase(h.HeadersToBackend)},
			}
		}
		cfg.Services = &extauthzv3.ExtAuthz_HttpService{HttpService: hs}
		return cfg
	}
	cfg.Services = &extauthzv3.ExtAuthz_GrpcService{GrpcService: &corev3.GrpcService{
		TargetSpecifier: &corev3.GrpcService_EnvoyGrpc_{EnvoyGrpc: &corev3.GrpcService_EnvoyGrpc{
			ClusterName: svc.Destination.Name,
			Authority:   svc.Authority,
		}},
		Timeout:     durationpb.New(ea.Timeout),
		RetryPolicy: extServiceRetry(ea.Retry),
	}}
	return cfg
}

func exactIgnoreCase(names []string) []*matcherv3.StringMatcher {
	out := make([]*matcherv3.StringMatcher, 0, len(names))
	for _, n := range names {
		out = append(out, &matcherv3.StringMatcher{MatchPattern: &matcherv3.StringMatcher_Exact{Exact: n}, IgnoreCase: true})
	}
	return out
}

// addExtProcs adds one ext_proc filter per extProc entry of the policy that declared
// extProc, named <kind>/<ns>/<name>/extproc/<i>, with its gRPC service cluster, and enables
// each on the route. Entries the policy stage could not resolve (fail open) are skipped.
func (s *httpFilterSet) addExtProcs(out *routev3.Route, r *ir.HTTPRoute, procs []ir.ExtProc) error {
	if r.PolicyData == nil || len(r.PolicyData.ExtProc) != len(procs) {
		return fmt.Errorf("extProc: services not resolved")
	}
	for i := range procs {
		ep, svc := &procs[i], r.PolicyData.ExtProc[i]
		if svc == nil || svc.Destination == nil {
			continue
		}
		if _, ok := s.named[ep.FilterName]; !ok {
			f := typedFilter(ep.FilterName, extProcConfig(ep, svc))
			f.Disabled = true
			s.named[ep.FilterName] = f
			s.addCluster(extServiceCluster(svc.Destination, svc.Owner, ep.Cluster))
		}
		if err := setPerRoute(out, ep.FilterName, &routev3.FilterConfig{Config: &anypb.Any{}}); err != nil {
			return err
		}
	}
	return nil
}

func extProcConfig(ep *ir.ExtProc, svc *ir.ExtService) *extprocv3.ExternalProcessor {
	cfg := &extprocv3.ExternalProcessor{
		GrpcService: &corev3.GrpcService{
			TargetSpecifier: &corev3.GrpcService_EnvoyGrpc_{EnvoyGrpc: &corev3.GrpcService_EnvoyGrpc{
				ClusterName: svc.Destination.Name,
				Authority:   svc.Authority,
			}},
			Timeout:     durationpb.New(extServiceTimeout),
			RetryPolicy: extServiceRetry(ep.Retry),
		},
		ProcessingMode:    processingMode(ep.ProcessingMode),
		ObservabilityMode: ep.ShadowMode,
		FailureModeAllow:  ep.FailOpen,
		MessageTimeout:    durationOrNil(ep.MessageTimeout),
		AllowModeOverride: ep.ProcessingMode.AllowModeOverride,
	}
	if req := ep.ProcessingMode.Request; req != nil && len(req.Attributes) > 0 {
		cfg.RequestAttributes = append([]string(nil), req.Attributes...)
	}
	if resp := ep.ProcessingMode.Response; resp != nil && len(resp.Attributes) > 0 {
		cfg.ResponseAttributes = append([]string(nil), resp.Attributes...)
	}
	if ep.ForwardingNamespaces != nil || ep.ReceivingNamespaces != nil {
		cfg.MetadataOptions = &extprocv3.MetadataOptions{}
		if ns := ep.ForwardingNamespaces; ns != nil {
			cfg.MetadataOptions.ForwardingNamespaces = &extprocv3.MetadataOptions_MetadataNamespaces{Untyped: append(
				[]string(nil), ns.Untyped...)}
		}
		if ns := ep.ReceivingNamespaces; ns != nil {
			cfg.MetadataOptions.ReceivingNamespaces = &extprocv3.MetadataOptions_MetadataNamespaces{Untyped: append(
				[]string(nil), ns.Untyped...)}
		}
	}
	if ep.StatusOnError != nil {
		cfg.StatusOnError = &typev3.HttpStatus{Code: typev3.StatusCode(*ep.StatusOnError)}
	}
	return cfg
}

// processingMode is what the processor sees: nothing unless asked; a request or response
// section sends its headers, and its body in the given mode (full-duplex streaming also
// sends the trailers).
func processingMode(pm ir.ExtProcProcessingMode) *extprocv3.ProcessingMode {
	m := &extprocv3.ProcessingMode{
		RequestHeaderMode:   extprocv3.ProcessingMode_SKIP,
		ResponseHeaderMode:  extprocv3.ProcessingMode_SKIP,
		RequestBodyMode:     extprocv3.ProcessingMode_NONE,
		ResponseBodyMode:    extprocv3.ProcessingMode_NONE,
		RequestTrailerMode:  extprocv3.ProcessingMode_SKIP,
		ResponseTrailerMode: extprocv3.ProcessingMode_SKIP,
	}
	if pm.Request != nil {
		m.RequestHeaderMode = extprocv3.ProcessingMode_SEND
		m.RequestBodyMode = bodyMode(pm.Request.BodyMode)
		if m.RequestBodyMode == extprocv3.ProcessingMode_FULL_DUPLEX_STREAMED {
			m.RequestTrailerMode = extprocv3.ProcessingMode_SEND
		}
	}
	if pm.Response != nil {
		m.ResponseHeaderMode = extprocv3.ProcessingMode_SEND
		m.ResponseBodyMode = bodyMode(pm.Response.BodyMode)
		if m.ResponseBodyMode == extprocv3.ProcessingMode_FULL_DUPLEX_STREAMED {
			m.ResponseTrailerMode = extprocv3.ProcessingMode_SEND
		}
	}
	return m
}

func bodyMode(mode string) extprocv3.ProcessingMode_BodySendMode {
	switch mode {
	case ir.ExtProcBodyBuffered:
		return extprocv3.ProcessingMode_BUFFERED
	case ir.ExtProcBodyBufferedPartial:
		return extprocv3.ProcessingMode_BUFFERED_PARTIAL
	case ir.ExtProcBodyStreamed:
		return extprocv3.ProcessingMode_STREAMED
	case ir.ExtProcBodyFullDuplexStreamed:
		return extprocv3.ProcessingMode_FULL_DUPLEX_STREAMED
	}
	return extprocv3.ProcessingMode_NONE
}

// extServiceCluster is the cluster of a policy's external service: EG's plain cluster
// (HTTP/2 for gRPC), its metadata naming the policy, the backends as localities, TLS where
// a BackendTLSPolicy or the EG Backend asks for it, hostnames resolved by Envoy, and the
// circuit breaker and load balancer of the service's backendSettings.
func extServiceCluster(d *ir.Destination, owner ir.PolicyRef, settings *ir.ClusterSettings) clusterPair {
	c := buildCluster(d.Name, resourceRef{Kind: owner.Kind, Name: owner.Name, Namespace: owner.Namespace}, d.HTTP2)
	applyClusterSettings(c, settings)
	cla := buildCLA(d.Name, d.Settings)
	withUpstreamTLS(c, cla, d.Settings, true, d.HTTP2)
	return clusterPair{cluster: c, cla: cla, dns: anyDNS(d.Settings)}
}

// extServiceRetryOn is what EG retries a call to an external service on unless the
// policy's backendSettings name triggers.
const extServiceRetryOn = "connect-failure,refused-stream,unavailable,cancelled,retriable-status-codes"

// extServiceRetry is the retry policy of a call to an external service: EG's triggers
// unless the policy names others, the number of retries and the back-off when given.
func extServiceRetry(retry *ir.ServiceRetry) *corev3.RetryPolicy {
	if retry == nil {
		return nil
	}
	rp := &corev3.RetryPolicy{RetryOn: extServiceRetryOn}
	if retry.NumRetries != nil {
		rp.NumRetries = u32(*retry.NumRetries)
	}
	if len(retry.Triggers) > 0 {
		rp.RetryOn = strings.Join(retry.Triggers, ",")
	}
	if retry.BackOffBase != nil && retry.BackOffMax != nil {
		rp.RetryBackOff = &corev3.BackoffStrategy{BaseInterval: durationpb.New(*retry.BackOffBase),
			MaxInterval: durationpb.New(*retry.BackOffMax)}
	}
	return rp
}
