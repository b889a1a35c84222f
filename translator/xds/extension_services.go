package xds

import (
	"fmt"
	"net/url"
	"slices"
	"strings"
	"time"

	egv1a1 "github.com/envoyproxy/gateway/api/v1alpha1"
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
func (s *httpFilterSet) addExtAuth(out *routev3.Route, r *ir.HTTPRoute, a *ir.Applied[egv1a1.SecurityPolicySpec]) error {
	if r.PolicyData == nil || r.PolicyData.ExtAuth == nil || r.PolicyData.ExtAuth.Destination == nil {
		return fmt.Errorf("extAuth: service not resolved")
	}
	svc := r.PolicyData.ExtAuth
	owner := fieldOwner(a, "extAuth")
	name := fmt.Sprintf("%s/securitypolicy/%s/%s", extAuthzFilterType, owner.Namespace, owner.Name)
	if _, ok := s.named[name]; !ok {
		cfg, err := extAuthzConfig(a.Spec.ExtAuth, svc)
		if err != nil {
			return err
		}
		f := typedFilter(name, cfg)
		f.Disabled = true
		s.named[name] = f
		s.addCluster(extServiceCluster(svc.Destination, svc.Owner, extAuthSettings(a.Spec.ExtAuth)))
	}
	return setPerRoute(out, name, &extauthzv3.ExtAuthzPerRoute{Override: &extauthzv3.ExtAuthzPerRoute_CheckSettings{
		CheckSettings: &extauthzv3.CheckSettings{ContextExtensions: svc.ContextExtensions},
	}})
}

func extAuthzConfig(ea *egv1a1.ExtAuth, svc *ir.ExtService) (*extauthzv3.ExtAuthz, error) {
	cfg := &extauthzv3.ExtAuthz{TransportApiVersion: corev3.ApiVersion_V3}
	if ea.FailOpen != nil {
		cfg.FailureModeAllow = *ea.FailOpen
	}
	if ea.RecomputeRoute != nil {
		cfg.ClearRouteCache = *ea.RecomputeRoute
	}
	if ea.IncludeRouteMetadata != nil && *ea.IncludeRouteMetadata {
		cfg.RouteMetadataContextNamespaces = []string{routeMetadataNamespace}
	}
	if ea.BodyToExtAuth != nil {
		cfg.WithRequestBody = &extauthzv3.BufferSettings{MaxRequestBytes: ea.BodyToExtAuth.MaxRequestBytes}
	}
	if len(ea.HeadersToExtAuth) > 0 {
		cfg.AllowedHeaders = &matcherv3.ListStringMatcher{Patterns: exactIgnoreCase(ea.HeadersToExtAuth)}
	}
	timeout := extServiceTimeout
	if ea.Timeout != nil {
		d, err := time.ParseDuration(string(*ea.Timeout))
		if err == nil {
			timeout = d
		}
	}
	if ea.StatusOnError != nil {
		cfg.StatusOnError = &typev3.HttpStatus{Code: typev3.StatusCode(*ea.StatusOnError)}
	}
	if h := ea.HTTP; h != nil {
		hs := &extauthzv3.HttpService{RetryPolicy: extServiceRetry(h.BackendSettings)}
		if h.Path != nil {
			hs.PathPrefix = *h.Path
		}
		if h.PathOverride != nil {
			hs.PathOverride = *h.PathOverride
		}
		// The URI names the service; Envoy calls the cluster, so the scheme is nominal.
		u := url.URL{Scheme: "http", Host: svc.Authority, Path: hs.PathPrefix}
		if hs.PathOverride != "" {
			u.Path = hs.PathOverride
		}
		hs.ServerUri = &corev3.HttpUri{
			Uri:              u.String(),
			HttpUpstreamType: &corev3.HttpUri_Cluster{Cluster: svc.Destination.Name},
			Timeout:          durationpb.New(timeout),
		}
		if len(h.HeadersToBackend) > 0 {
			hs.AuthorizationResponse = &extauthzv3.AuthorizationResponse{
				AllowedUpstreamHeaders: &matcherv3.ListStringMatcher{Patterns: exactIgnoreCase(h.HeadersToBackend)},
			}
		}
		cfg.Services = &extauthzv3.ExtAuthz_HttpService{HttpService: hs}
		return cfg, nil
	}
	settings := extAuthSettings(ea)
	cfg.Services = &extauthzv3.ExtAuthz_GrpcService{GrpcService: &corev3.GrpcService{
		TargetSpecifier: &corev3.GrpcService_EnvoyGrpc_{EnvoyGrpc: &corev3.GrpcService_EnvoyGrpc{
			ClusterName: svc.Destination.Name,
			Authority:   svc.Authority,
		}},
		Timeout:     durationpb.New(timeout),
		RetryPolicy: extServiceRetry(settings),
	}}
	return cfg, nil
}

// extAuthSettings is the backendSettings of the extAuth's service (gRPC or HTTP).
func extAuthSettings(ea *egv1a1.ExtAuth) *egv1a1.ClusterSettings {
	switch {
	case ea.GRPC != nil:
		return ea.GRPC.BackendSettings
	case ea.HTTP != nil:
		return ea.HTTP.BackendSettings
	}
	return nil
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
func (s *httpFilterSet) addExtProcs(out *routev3.Route, r *ir.HTTPRoute, a *ir.Applied[egv1a1.EnvoyExtensionPolicySpec]) error {
	if r.PolicyData == nil || len(r.PolicyData.ExtProc) != len(a.Spec.ExtProc) {
		return fmt.Errorf("extProc: services not resolved")
	}
	owner := fieldOwner(a, "extProc")
	for i, ep := range a.Spec.ExtProc {
		svc := r.PolicyData.ExtProc[i]
		if svc == nil || svc.Destination == nil {
			continue
		}
		name := fmt.Sprintf("%s/envoyextensionpolicy/%s/%s/extproc/%d", extProcFilterType, owner.Namespace, owner.Name, i)
		if _, ok := s.named[name]; !ok {
			f := typedFilter(name, extProcConfig(&ep, svc))
			f.Disabled = true
			s.named[name] = f
			s.addCluster(extServiceCluster(svc.Destination, svc.Owner, ep.BackendSettings))
		}
		if err := setPerRoute(out, name, &routev3.FilterConfig{Config: &anypb.Any{}}); err != nil {
			return err
		}
	}
	return nil
}

func extProcConfig(ep *egv1a1.ExtProc, svc *ir.ExtService) *extprocv3.ExternalProcessor {
	cfg := &extprocv3.ExternalProcessor{
		GrpcService: &corev3.GrpcService{
			TargetSpecifier: &corev3.GrpcService_EnvoyGrpc_{EnvoyGrpc: &corev3.GrpcService_EnvoyGrpc{
				ClusterName: svc.Destination.Name,
				Authority:   svc.Authority,
			}},
			Timeout:     durationpb.New(extServiceTimeout),
			RetryPolicy: extServiceRetry(ep.BackendSettings),
		},
		ProcessingMode: processingMode(ep.ProcessingMode),
	}
	if ep.ShadowMode != nil {
		cfg.ObservabilityMode = *ep.ShadowMode
	}
	if ep.FailOpen != nil {
		cfg.FailureModeAllow = *ep.FailOpen
	}
	if ep.MessageTimeout != nil {
		if d, err := time.ParseDuration(string(*ep.MessageTimeout)); err == nil {
			cfg.MessageTimeout = durationpb.New(d)
		}
	}
	if pm := ep.ProcessingMode; pm != nil {
		if pm.Request != nil && len(pm.Request.Attributes) > 0 {
			cfg.RequestAttributes = append([]string(nil), pm.Request.Attributes...)
		}
		if pm.Response != nil && len(pm.Response.Attributes) > 0 {
			cfg.ResponseAttributes = append([]string(nil), pm.Response.Attributes...)
		}
		cfg.AllowModeOverride = pm.AllowModeOverride
	}
	if md := ep.Metadata; md != nil && (md.AccessibleNamespaces != nil || md.WritableNamespaces != nil) {
		cfg.MetadataOptions = &extprocv3.MetadataOptions{}
		if md.AccessibleNamespaces != nil {
			cfg.MetadataOptions.ForwardingNamespaces = &extprocv3.MetadataOptions_MetadataNamespaces{Untyped: append([]string(nil), md.AccessibleNamespaces...)}
		}
		if md.WritableNamespaces != nil {
			cfg.MetadataOptions.ReceivingNamespaces = &extprocv3.MetadataOptions_MetadataNamespaces{Untyped: append([]string(nil), md.WritableNamespaces...)}
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
func processingMode(pm *egv1a1.ExtProcProcessingMode) *extprocv3.ProcessingMode {
	m := &extprocv3.ProcessingMode{
		RequestHeaderMode:   extprocv3.ProcessingMode_SKIP,
		ResponseHeaderMode:  extprocv3.ProcessingMode_SKIP,
		RequestBodyMode:     extprocv3.ProcessingMode_NONE,
		ResponseBodyMode:    extprocv3.ProcessingMode_NONE,
		RequestTrailerMode:  extprocv3.ProcessingMode_SKIP,
		ResponseTrailerMode: extprocv3.ProcessingMode_SKIP,
	}
	if pm == nil {
		return m
	}
	if pm.Request != nil {
		m.RequestHeaderMode = extprocv3.ProcessingMode_SEND
		if pm.Request.Body != nil {
			m.RequestBodyMode = bodyMode(*pm.Request.Body)
			if m.RequestBodyMode == extprocv3.ProcessingMode_FULL_DUPLEX_STREAMED {
				m.RequestTrailerMode = extprocv3.ProcessingMode_SEND
			}
		}
	}
	if pm.Response != nil {
		m.ResponseHeaderMode = extprocv3.ProcessingMode_SEND
		if pm.Response.Body != nil {
			m.ResponseBodyMode = bodyMode(*pm.Response.Body)
			if m.ResponseBodyMode == extprocv3.ProcessingMode_FULL_DUPLEX_STREAMED {
				m.ResponseTrailerMode = extprocv3.ProcessingMode_SEND
			}
		}
	}
	return m
}

func bodyMode(m egv1a1.ExtProcBodyProcessingMode) extprocv3.ProcessingMode_BodySendMode {
	switch m {
	case egv1a1.BufferedExtProcBodyProcessingMode:
		return extprocv3.ProcessingMode_BUFFERED
	case egv1a1.BufferedPartialExtBodyHeaderProcessingMode:
		return extprocv3.ProcessingMode_BUFFERED_PARTIAL
	case egv1a1.StreamedExtProcBodyProcessingMode:
		return extprocv3.ProcessingMode_STREAMED
	case egv1a1.FullDuplexStreamedExtBodyProcessingMode:
		return extprocv3.ProcessingMode_FULL_DUPLEX_STREAMED
	}
	return extprocv3.ProcessingMode_NONE
}

// extServiceCluster is the cluster of a policy's external service: EG's plain cluster
// (HTTP/2 for gRPC), its metadata naming the policy, the backends as localities, TLS where
// a BackendTLSPolicy or the EG Backend asks for it, hostnames resolved by Envoy, and the
// circuit breaker and load balancer of the service's backendSettings.
func extServiceCluster(d *ir.Destination, owner ir.PolicyRef, settings *egv1a1.ClusterSettings) clusterPair {
	c := buildCluster(d.Name, resourceRef{Kind: owner.Kind, Name: owner.Name, Namespace: owner.Namespace}, d.HTTP2)
	applyClusterSettings(c, settings)
	cla := buildCLA(d.Name, d.Settings)
	withUpstreamTLS(c, cla, d.Settings, true, d.HTTP2)
	return clusterPair{cluster: c, cla: cla, dns: anyDNS(d.Settings)}
}

// extServiceRetryOn is what EG retries a call to an external service on unless the
// policy's backendSettings name triggers.
const extServiceRetryOn = "connect-failure,refused-stream,unavailable,cancelled,retriable-status-codes"

// extServiceRetry is the retry policy of a call to an external service, from its
// backendSettings.retry: EG's triggers unless others are named, the number of retries and
// the back-off when given.
func extServiceRetry(cs *egv1a1.ClusterSettings) *corev3.RetryPolicy {
	if cs == nil || cs.Retry == nil {
		return nil
	}
	r := cs.Retry
	rp := &corev3.RetryPolicy{RetryOn: extServiceRetryOn}
	if r.NumRetries != nil {
		rp.NumRetries = u32(uint32(*r.NumRetries))
	}
	if r.RetryOn != nil && len(r.RetryOn.Triggers) > 0 {
		// EG keeps the triggers as a set: sorted, each once.
		ts := make([]string, 0, len(r.RetryOn.Triggers))
		for _, t := range r.RetryOn.Triggers {
			ts = append(ts, string(t))
		}
		slices.Sort(ts)
		rp.RetryOn = strings.Join(slices.Compact(ts), ",")
	}
	if pr := r.PerRetry; pr != nil && pr.BackOff != nil {
		base, max := ir.Duration(pr.BackOff.BaseInterval), ir.Duration(pr.BackOff.MaxInterval)
		if base != nil && max != nil {
			rp.RetryBackOff = &corev3.BackoffStrategy{BaseInterval: durationpb.New(*base), MaxInterval: durationpb.New(*max)}
		}
	}
	return rp
}
