package gatewayapi

import (
	"errors"
	"fmt"
	"math"
	"net"
	"sort"
	"strconv"

	egv1a1 "github.com/envoyproxy/gateway/api/v1alpha1"
	"github.com/google/cel-go/cel"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	utilerrors "k8s.io/apimachinery/pkg/util/errors"
	gwapiv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/egharness/egharness/translator/conditions"
	"github.com/egharness/egharness/translator/ir"
	"github.com/egharness/egharness/translator/resource"
	"github.com/egharness/egharness/translator/result"
)

// A Gateway's telemetry comes from its EnvoyProxy. Of it the reference translator builds
// the access logs (file, ALS and OpenTelemetry sinks, their CEL matches) and the tracing;
// not the metrics sinks. It does check everything EG v1.9 checks before it builds them,
// because a failed check changes the Gateway's status: an access log match that is not a
// CEL expression, or a sink, tracing provider or metrics sink whose backendRef cannot be
// resolved (a Service or Backend that does not exist, a port it does not have, a Service
// without ready endpoints) makes the Gateway Accepted=False (InvalidParameters), naming
// the part of the telemetry and the problem; EG checks access logs, then tracing, then
// metrics, and reports the first that fails. The listeners are translated all the same;
// a Gateway whose access logs fail the checks gets none at all (EG leaves its access log
// unset), one whose tracing or metrics fail keeps them. (EG's testdata:
// envoyproxy-accesslog-backend-invalid, envoyproxy-accesslog-cel-with-invalid,
// envoyproxy-tracing-backend-invalid, envoyproxy-metric-backend-invalid.)

// celParser parses access log matches as EG does: syntax only, in a plain environment.
var celParser, _ = cel.NewEnv()

// otelDefaultPort is the CRD's default for an OpenTelemetry sink's port.
const otelDefaultPort = 4317

// telemetry checks the Gateway's EnvoyProxy telemetry as EG v1.9 does, writes the
// Gateway's condition when it fails, and returns the access logging of the Gateway's
// listeners (nil: EG's default).
func (translation *routeTranslator) telemetry(g *gatewayCtx) (*ir.AccessLog, *ir.Tracing) {
	gw := g.gw
	envoyProxy, _ := translation.objects.envoyProxyOf(gw)
	if envoyProxy == nil || envoyProxy.Spec.Telemetry == nil {
		return nil, nil
	}
	tel := envoyProxy.Spec.Telemetry
	what := "access log"
	al, err := translation.accessLogOf(g, envoyProxy)
	if err != nil {
		al = &ir.AccessLog{Disabled: true}
	}
	var tr *ir.Tracing
	if err == nil && tel.Tracing != nil {
		if err = translation.telemetryRefs(envoyProxy, tel.Tracing.Provider.BackendCluster); err == nil {
			tr, err = translation.tracingOf(g, envoyProxy)
		}
		if err != nil {
			what = "tracing"
		}
	}
	if err == nil && tel.Metrics != nil {
		for _, sink := range tel.Metrics.Sinks {
			if sink.OpenTelemetry == nil {
				continue
			}
			if err = translation.telemetryRefs(envoyProxy, sink.OpenTelemetry.BackendCluster); err != nil {
				what = "metrics"
				break
			}
		}
	}
	if err == nil {
		translation.telemetryBackendTLS(g, envoyProxy)
		return al, tr
	}
	s := translation.status.object(resource.Ref{Kind: "Gateway", Namespace: gw.Namespace, Name: gw.Name})
	s.Conditions = conditions.Set(s.Conditions, conditions.New("Accepted", "False", reasonInvalidParameters,
		fmt.Sprintf("Invalid %s backendRefs in the referenced EnvoyProxy: %v", what, err)))
	return al, tr
}

// tracingOf is the tracing of the proxy an EnvoyProxy configures (EG v1.9 listener.go
// processTracing): the provider as a destination named tracing (its backendRefs, speaking
// gRPC for OpenTelemetry; else its deprecated host and port, always gRPC), the authority an
// OpenTelemetry provider's calls carry (as an OpenTelemetry access log sink's), the service
// name (serviceName, else <gateway name>.<gateway namespace>, the GatewayClass with
// mergeGateways), the sampling percentages and the tags.
func (translation *routeTranslator) tracingOf(g *gatewayCtx, envoyProxy *egv1a1.EnvoyProxy) (*ir.Tracing, error) {
	t := envoyProxy.Spec.Telemetry.Tracing
	p := t.Provider
	dest, err := translation.telemetryDestination(g, envoyProxy, "tracing", p.BackendCluster)
	if err != nil {
		return nil, err
	}
	out := &ir.Tracing{
		Provider:    string(p.Type),
		Destination: dest,
		Owner:       ir.PolicyRef{Kind: egv1a1.KindEnvoyProxy, Namespace: envoyProxy.Namespace, Name: envoyProxy.Name},
		ServiceName: g.gw.Name + "." + g.gw.Namespace,
		CustomTags:  tracingCustomTags(t.CustomTags),
		Tags:        t.Tags,
		SpanName:    tracingSpanName(t.SpanName),
	}
	setZipkin(out, p.Zipkin)
	if translation.objects.mergeGateways {
		out.ServiceName = string(g.gw.Spec.GatewayClassName)
	}
	if p.ServiceName != nil {
		out.ServiceName = *p.ServiceName
	}
	out.SamplingRate = samplingPercent(t.SamplingRate, t.SamplingFraction)
	if f := t.ClientSamplingFraction; f != nil {
		v := samplingPercent(nil, f)
		out.ClientSamplingRate = &v
	}
	if f := t.OverallSamplingFraction; f != nil {
		v := samplingPercent(nil, f)
		out.OverallSamplingRate = &v
	}
	if o := p.OpenTelemetry; o != nil {
		out.ResourceAttributes = o.ResourceAttributes
		if o.Sampler != nil {
			out.SamplerDecides = true
			out.Sampler = tracingSampler(o.Sampler)
		}
		for _, h := range o.Headers {
			out.Headers = append(out.Headers, ir.KeyValue{Key: string(h.Name), Value: h.Value})
		}
	}
	if len(dest.Settings) == 0 {
		host, port := "", uint32(0)
		if p.Host != nil {
			host, port = *p.Host, uint32(p.Port)
		}
		dest.Settings = []*ir.Backend{{
			Name: "tracing/backend/-1", Weight: 1,
			Endpoints: []ir.Endpoint{{Host: host, Port: port}},
			DNS:       net.ParseIP(host) == nil,
		}}
		out.Authority = host
		return out, nil
	}
	// Only an OpenTelemetry provider speaks gRPC to its backendRefs.
	dest.HTTP2 = p.Type == egv1a1.TracingProviderTypeOpenTelemetry
	out.Authority = telemetryAuthority(dest)
	return out, nil
}

// samplingPercent is EG's proxySamplingRate: a rate as given, else a fraction as a
// percentage (denominator 100 unless given) within [0, 100], else 100.
func samplingPercent(rate *uint32, f *gwapiv1.Fraction) float64 {
	if rate != nil {
		return float64(*rate)
	}
	if f == nil {
		return 100
	}
	d := int32(100)
	if f.Denominator != nil {
		d = *f.Denominator
	}
	return math.Min(100, math.Max(0, float64(f.Numerator)*100/float64(d)))
}

// telemetryRefs checks that the backendRefs of a telemetry backend the reference does not
// build (ALS, tracing, metrics) name objects that exist. No ReferenceGrant is asked for
// (the EnvoyProxy is the operator's, and EG v1.9 takes its sinks in other namespaces:
// EG's testdata envoyproxy-accesslog-backend, with the collector in monitoring).
func (translation *routeTranslator) telemetryRefs(envoyProxy *egv1a1.EnvoyProxy, bc egv1a1.BackendCluster) error {
	for _, backendRef := range bc.BackendRefs {
		ns, kind := refNamespaceKind(envoyProxy.Namespace, backendRef.BackendObjectReference)
		key := types.NamespacedName{Namespace: ns, Name: string(backendRef.Name)}
		switch kind {
		case "Service":
			if translation.objects.services[key] == nil {
				return fmt.Errorf("service %s/%s not found", ns, backendRef.Name)
			}
		case egv1a1.KindBackend:
			if translation.objects.backends[key] == nil {
				return fmt.Errorf("Backend %s/%s not found", ns, backendRef.Name)
			}
		}
	}
	return nil
}

// accessLogOf is the access logging of the proxy an EnvoyProxy configures, as EG v1.9
// reads telemetry.accessLog: none set (or settings without disable) keeps EG's default
// (nil), disable turns logging off, and each setting's format (JSON unless it says Text or
// gives only a text) goes to each of its File sinks, or to /dev/stdout without sinks; its
// OpenTelemetry sinks each get a collector cluster. A setting's matches must all be CEL
// expressions. An error is EG's reason to refuse the Gateway's access logs.
func (translation *routeTranslator) accessLogOf(g *gatewayCtx, envoyProxy *egv1a1.EnvoyProxy) (*ir.AccessLog, error) {
	if envoyProxy == nil || envoyProxy.Spec.Telemetry == nil || envoyProxy.Spec.Telemetry.AccessLog == nil {
		return nil, nil
	}
	spec := envoyProxy.Spec.Telemetry.AccessLog
	if spec.Disable != nil && *spec.Disable {
		return &ir.AccessLog{Disabled: true}, nil
	}
	if len(spec.Settings) == 0 {
		return nil, nil
	}
	out := &ir.AccessLog{}
	for i, setting := range spec.Settings {
		logType := ""
		if setting.Type != nil {
			logType = string(*setting.Type)
		}
		// Without a format, EG takes JSON with its default fields.
		format := egv1a1.ProxyAccessLogFormat{Type: new(egv1a1.ProxyAccessLogFormatTypeJSON)}
		if setting.Format != nil {
			format = *setting.Format
		}
		text := false
		switch {
		case format.Type != nil:
			text = *format.Type == egv1a1.ProxyAccessLogFormatTypeText
		case format.Text != nil && format.JSON == nil:
			text = true
		}
		var matches []string
		var errs []error
		for _, expr := range setting.Matches {
			if _, iss := celParser.Parse(expr); iss != nil && iss.Err() != nil {
				errs = append(errs, fmt.Errorf("invalid CEL expression: %s", expr))
				continue
			}
			matches = append(matches, expr)
		}
		if len(errs) > 0 {
			return nil, utilerrors.NewAggregate(errs)
		}
		add := func(path string) {
			fl := ir.FileAccessLog{Path: path, Type: logType, Matches: matches}
			if text {
				if format.Text != nil {
					fl.Format = *format.Text
				}
				out.Text = append(out.Text, fl)
				return
			}
			fl.Fields = format.JSON
			out.JSON = append(out.JSON, fl)
		}
		if len(setting.Sinks) == 0 {
			add("/dev/stdout")
		}
		for j, sink := range setting.Sinks {
			switch {
			case sink.Type == egv1a1.ProxyAccessLogSinkTypeFile && sink.File != nil:
				add(sink.File.Path)
			case sink.Type == egv1a1.ProxyAccessLogSinkTypeALS && sink.ALS != nil:
				// EG's ALS sink: a cluster accesslog_als_<setting>_<sink> of its backendRefs
				// (gRPC, so HTTP/2), its log name or <EnvoyProxy namespace>/<name>.
				if err := translation.telemetryRefs(envoyProxy, sink.ALS.BackendCluster); err != nil {
					return nil, err
				}
				dest, err := translation.telemetryDestination(g, envoyProxy, fmt.Sprintf("accesslog_als_%d_%d", i, j),
					sink.ALS.BackendCluster)
				if err != nil {
					return nil, err
				}
				a := ir.ALSAccessLog{Type: logType, Matches: matches, Destination: dest,
					Owner:   ir.PolicyRef{Kind: egv1a1.KindEnvoyProxy, Namespace: envoyProxy.Namespace, Name: envoyProxy.Name},
					LogName: envoyProxy.Namespace + "/" + envoyProxy.Name, Service: string(sink.ALS.Type)}
				if sink.ALS.LogName != nil {
					a.LogName = *sink.ALS.LogName
				}
				if h := sink.ALS.HTTP; h != nil && sink.ALS.Type == egv1a1.ALSEnvoyProxyAccessLogTypeHTTP {
					a.RequestHeaders, a.ResponseHeaders, a.ResponseTrailers = h.RequestHeaders, h.ResponseHeaders, h.ResponseTrailers
				}
				out.ALS = append(out.ALS, a)
			case sink.Type == egv1a1.ProxyAccessLogSinkTypeOpenTelemetry && sink.OpenTelemetry != nil:
				o, err := translation.otelAccessLog(g, envoyProxy, fmt.Sprintf("accesslog_otel_%d_%d", i, j), sink.OpenTelemetry)
				if err != nil {
					return nil, err
				}
				o.Type, o.Matches = logType, matches
				// An OpenTelemetry record may carry both a body (the text) and attributes
				// (the JSON fields): a format without a type gives it both.
				if (format.Type == nil || *format.Type == egv1a1.ProxyAccessLogFormatTypeText) && format.Text != nil {
					o.Body = *format.Text
				}
				if format.Type == nil || *format.Type == egv1a1.ProxyAccessLogFormatTypeJSON {
					o.Attributes = sortedKeyValues(format.JSON)
				}
				out.OpenTelemetry = append(out.OpenTelemetry, o)
			}
		}
	}
	return out, nil
}

// otelAccessLog resolves an OpenTelemetry sink: its collector (the backendRefs, or the
// deprecated host and port when it has none) as the destination name, every backend
// named <name>/backend/-1 with weight 1 and speaking gRPC (HTTP/2); the authority of the
// export calls (the first backend's TLS SNI, else its endpoint's hostname, else the
// Service's <name>.<namespace>.svc or the Backend's <name>.<namespace>; the host of a
// host and port); the resource attributes (resourceAttributes, else the deprecated
// resources) and headers.
func (translation *routeTranslator) otelAccessLog(g *gatewayCtx, envoyProxy *egv1a1.EnvoyProxy, name string,
	o *egv1a1.OpenTelemetryEnvoyProxyAccessLog) (ir.OpenTelemetryAccessLog, error) {
	out := ir.OpenTelemetryAccessLog{
		Owner:              ir.PolicyRef{Kind: egv1a1.KindEnvoyProxy, Namespace: envoyProxy.Namespace, Name: envoyProxy.Name},
		ResourceAttributes: sortedKeyValues(o.GetResourceAttributes()),
	}
	for _, h := range o.Headers {
		out.Headers = append(out.Headers, ir.KeyValue{Key: string(h.Name), Value: h.Value})
	}
	dest, err := translation.telemetryDestination(g, envoyProxy, name, o.BackendCluster)
	if err != nil {
		return out, err
	}
	out.Destination = dest
	if len(dest.Settings) == 0 {
		host, port := "", uint32(0)
		if o.Host != nil {
			host, port = *o.Host, uint32(o.Port)
			if port == 0 {
				port = otelDefaultPort
			}
		}
		dest.Settings = []*ir.Backend{{
			Name: name + "/backend/-1", Weight: 1,
			Endpoints: []ir.Endpoint{{Host: host, Port: port}},
			DNS:       net.ParseIP(host) == nil,
		}}
		out.Authority = host
		return out, nil
	}
	out.Authority = telemetryAuthority(dest)
	return out, nil
}

// telemetryAuthority is the :authority of the gRPC calls to a telemetry backend (EG's
// getAuthorityFromDestination): the first backend's TLS SNI, else its endpoint's hostname,
// else the Service's <name>.<namespace>.svc or the Backend's <name>.<namespace>.
func telemetryAuthority(dest *ir.Destination) string {
	first := dest.Settings[0]
	switch {
	case first.TLS != nil && first.TLS.SNI != "":
		return first.TLS.SNI
	case len(first.Endpoints) > 0 && first.Endpoints[0].Host != "" && net.ParseIP(first.Endpoints[0].Host) == nil:
		return first.Endpoints[0].Host
	case len(first.Endpoints) > 0 && first.Kind == "Service":
		return first.ServiceName + "." + first.Namespace + ".svc"
	case len(first.Endpoints) > 0:
		return first.ServiceName + "." + first.Namespace
	}
	return ""
}

// telemetryDestination resolves the backendRefs of a telemetry backend as EG v1.9 does
// (processBackendRefsForTelemetry): a Service must exist, not be ExternalName, have the TCP
// port and ready endpoints (its ClusterIP without EndpointSlices); an EG Backend must be
// enabled, exist, pass EG's Backend validation and not be a dynamic resolver. The upstream TLS of each is what the
// BackendTLSPolicy targeting it (and an EG Backend's spec.tls) asks for, with the Gateway's client TLS settings; an EG
// Backend with one FQDN endpoint and no SNI sends that hostname. The policies' statuses are written by
// telemetryBackendTLS, with the EnvoyProxy as ancestor.
func (translation *routeTranslator) telemetryDestination(g *gatewayCtx, envoyProxy *egv1a1.EnvoyProxy, name string,
	bc egv1a1.BackendCluster) (*ir.Destination, error) {
	dest := &ir.Destination{Name: name, HTTP2: true}
	savedA, savedG := translation.curAncestors, translation.telemetryGateway
	translation.curAncestors = []result.ParentRef{
		{Kind: egv1a1.KindEnvoyProxy, Namespace: envoyProxy.Namespace, Name: envoyProxy.Name}}
	translation.telemetryGateway = g
	defer func() { translation.curAncestors, translation.telemetryGateway = savedA, savedG }()
	for _, backendRef := range bc.BackendRefs {
		ns, kind := refNamespaceKind(envoyProxy.Namespace, backendRef.BackendObjectReference)
		key := types.NamespacedName{Namespace: ns, Name: string(backendRef.Name)}
		b := &ir.Backend{Name: name + "/backend/-1", Weight: 1, Kind: kind, Namespace: ns,
			ServiceName: string(backendRef.Name)}
		if backendRef.Port != nil {
			b.Port = uint32(*backendRef.Port)
		}
		switch kind {
		case "Service":
			svc := translation.objects.services[key]
			if svc == nil {
				return nil, fmt.Errorf("service %s/%s not found", ns, backendRef.Name)
			}
			if svc.Spec.Type == corev1.ServiceTypeExternalName {
				return nil, fmt.Errorf(
					"Service %s/%s is of type ExternalName, which is not supported as a backend; use an Envoy Gateway Backend "+
						"resource with an FQDN endpoint instead",
					ns, backendRef.Name)
			}
			var sp *corev1.ServicePort
			if backendRef.Port != nil {
				sp = servicePort(svc, int32(*backendRef.Port))
			}
			if sp == nil {
				port := int32(0)
				if backendRef.Port != nil {
					port = int32(*backendRef.Port)
				}
				return nil, fmt.Errorf("TCP Port %d not found on Service %s/%s", port, ns, backendRef.Name)
			}
			if b.Endpoints = translation.endpoints(svc, sp); len(b.Endpoints) == 0 {
				return nil, fmt.Errorf("no ready endpoints for the related Service %s/%s", ns, backendRef.Name)
			}
			tls, err := translation.mergeUpstreamTLS(ns, nil, btlsTarget{kind: "Service", name: svc.Name, section: sp.Name},
				false)
			if err != nil {
				return nil, err
			}
			b.TLS = tls
		case egv1a1.KindBackend:
			if api := translation.t.Config.ExtensionAPIs; api == nil || !api.EnableBackend {
				return nil, errors.New("Backend is disabled in Envoy Gateway configuration")
			}
			be := translation.objects.backends[key]
			if be == nil {
				return nil, fmt.Errorf("Backend %s/%s not found", ns, backendRef.Name)
			}
			if _, err := translation.objects.validateBackend(be); err != nil {
				return nil, err
			}
			if be.Spec.Type != nil && *be.Spec.Type == egv1a1.BackendTypeDynamicResolver {
				return nil, errors.New("dynamic resolver destinations are not supported")
			}
			var failure error
			fail := func(_, msg string) (*ir.Backend, *refError) {
				failure = errors.New(msg)
				return nil, &refError{msg: msg}
			}
			if _, rerr := translation.resolveEGBackend(b, "", ns, ns,
				gwapiv1.BackendRef{BackendObjectReference: backendRef.BackendObjectReference}, fail); rerr != nil {
				return nil, failure
			}
			if b.TLS != nil && b.TLS.SNI == "" && len(be.Spec.Endpoints) == 1 && be.Spec.Endpoints[0].FQDN != nil {
				b.TLS.SNI = be.Spec.Endpoints[0].FQDN.Hostname
			}
		default:
			return nil, fmt.Errorf("unsupported kind for backendRefs: %s", kind)
		}
		dest.Settings = append(dest.Settings, b)
	}
	return dest, nil
}

// sortedKeyValues is a map as key-value pairs sorted by key (nil for none).
func sortedKeyValues(m map[string]string) []ir.KeyValue {
	if len(m) == 0 {
		return nil
	}
	out := make([]ir.KeyValue, 0, len(m))
	for k, v := range m {
		out = append(out, ir.KeyValue{Key: k, Value: v})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Key < out[j].Key })
	return out
}

// telemetryBackendTLS records the EnvoyProxy as an ancestor of the BackendTLSPolicies that
// secure its telemetry backends (sinks of access logs, tracing, metrics), as EG v1.9 lists
// it (EG's testdata: envoyproxy-otel-backendtlspolicy): the policy's status then says
// whether it applies there, beside the Gateways of the routes it serves.
func (translation *routeTranslator) telemetryBackendTLS(g *gatewayCtx, envoyProxy *egv1a1.EnvoyProxy) {
	tel := envoyProxy.Spec.Telemetry
	var clusters []egv1a1.BackendCluster
	if al := tel.AccessLog; al != nil && (al.Disable == nil || !*al.Disable) {
		for _, s := range al.Settings {
			for _, sink := range s.Sinks {
				switch {
				case sink.Type == egv1a1.ProxyAccessLogSinkTypeALS && sink.ALS != nil:
					clusters = append(clusters, sink.ALS.BackendCluster)
				case sink.Type == egv1a1.ProxyAccessLogSinkTypeOpenTelemetry && sink.OpenTelemetry != nil:
					clusters = append(clusters, sink.OpenTelemetry.BackendCluster)
				}
			}
		}
	}
	if tel.Tracing != nil {
		clusters = append(clusters, tel.Tracing.Provider.BackendCluster)
	}
	if tel.Metrics != nil {
		for _, sink := range tel.Metrics.Sinks {
			if sink.OpenTelemetry != nil {
				clusters = append(clusters, sink.OpenTelemetry.BackendCluster)
			}
		}
	}
	savedA, savedG := translation.curAncestors, translation.telemetryGateway
	translation.curAncestors = []result.ParentRef{
		{Kind: egv1a1.KindEnvoyProxy, Namespace: envoyProxy.Namespace, Name: envoyProxy.Name}}
	translation.telemetryGateway = g
	defer func() { translation.curAncestors, translation.telemetryGateway = savedA, savedG }()
	for _, bc := range clusters {
		for _, backendRef := range bc.BackendRefs {
			ns, kind := refNamespaceKind(envoyProxy.Namespace, backendRef.BackendObjectReference)
			key := types.NamespacedName{Namespace: ns, Name: string(backendRef.Name)}
			section := ""
			if backendRef.Port != nil {
				section = strconv.Itoa(int(*backendRef.Port))
			}
			switch kind {
			case "Service":
				svc := translation.objects.services[key]
				if svc == nil || backendRef.Port == nil {
					continue
				}
				sp := servicePort(svc, int32(*backendRef.Port))
				if sp == nil {
					continue
				}
				_, _ = translation.mergeUpstreamTLS(ns, nil, btlsTarget{kind: "Service", name: svc.Name, section: sp.Name}, true)
			case egv1a1.KindBackend:
				if be := translation.objects.backends[key]; be != nil {
					_, _ = translation.mergeUpstreamTLS(ns, be,
						btlsTarget{group: egv1a1.GroupName, kind: egv1a1.KindBackend, name: be.Name, section: section}, true)
				}
			}
		}
	}
}
