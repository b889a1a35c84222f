package gatewayapi

import (
	"fmt"

	egv1a1 "github.com/envoyproxy/gateway/api/v1alpha1"
	"strconv"

	"github.com/google/cel-go/cel"
	"k8s.io/apimachinery/pkg/types"
	gwapiv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/egharness/egharness/translator/result"

	"github.com/egharness/egharness/translator/resource"
)

// The reference translator does not build EG's telemetry (access log sinks, tracing,
// metrics sinks). It does check what EG v1.9 checks before it builds them, because a
// failed check changes the Gateway's status: an access log match that is not a CEL
// expression, or a sink, tracing provider or metrics sink whose backendRef cannot be
// resolved (a Service or Backend that does not exist) makes the Gateway Accepted=False (InvalidParameters), naming the part of
// the telemetry and the problem; EG checks access logs, then tracing, then metrics, and
// reports the first that fails. The listeners are translated all the same. (EG's testdata:
// envoyproxy-accesslog-backend-invalid, envoyproxy-accesslog-cel-with-invalid,
// envoyproxy-tracing-backend-invalid, envoyproxy-metric-backend-invalid.)

// celParser parses access log matches as EG does: syntax only, in a plain environment.
var celParser, _ = cel.NewEnv()

// telemetryCheck writes the Gateway's condition when its EnvoyProxy's telemetry fails
// EG's checks.
func (rt *routeTranslator) telemetryCheck(gw *gwapiv1.Gateway) {
	ep, _ := rt.ix.envoyProxyOf(gw)
	if ep == nil || ep.Spec.Telemetry == nil {
		return
	}
	tel := ep.Spec.Telemetry
	// The objects must exist; no ReferenceGrant is asked for (the EnvoyProxy is the
	// operator's, and EG v1.9 takes its sinks in other namespaces: EG's testdata
	// envoyproxy-accesslog-backend, with the collector in monitoring).
	refs := func(bc egv1a1.BackendCluster) error {
		for _, br := range bc.BackendRefs {
			ns, kind := refNamespaceKind(ep.Namespace, br.BackendObjectReference)
			key := types.NamespacedName{Namespace: ns, Name: string(br.Name)}
			switch kind {
			case "Service":
				if rt.ix.services[key] == nil {
					return fmt.Errorf("service %s/%s not found", ns, br.Name)
				}
			case egv1a1.KindBackend:
				if rt.ix.backends[key] == nil {
					return fmt.Errorf("backend %s/%s not found", ns, br.Name)
				}
			}
		}
		return nil
	}
	var what string
	var err error
	if al := tel.AccessLog; al != nil && (al.Disable == nil || !*al.Disable) {
	settings:
		for _, s := range al.Settings {
			for _, expr := range s.Matches {
				if _, iss := celParser.Parse(expr); iss != nil && iss.Err() != nil {
					what, err = "access log", fmt.Errorf("invalid CEL expression: %s", expr)
					break settings
				}
			}
			for _, sink := range s.Sinks {
				switch {
				case sink.Type == egv1a1.ProxyAccessLogSinkTypeALS && sink.ALS != nil:
					err = refs(sink.ALS.BackendCluster)
				case sink.Type == egv1a1.ProxyAccessLogSinkTypeOpenTelemetry && sink.OpenTelemetry != nil:
					err = refs(sink.OpenTelemetry.BackendCluster)
				}
				if err != nil {
					what = "access log"
					break settings
				}
			}
		}
	}
	if err == nil && tel.Tracing != nil {
		if err = refs(tel.Tracing.Provider.BackendCluster); err != nil {
			what = "tracing"
		}
	}
	if err == nil && tel.Metrics != nil {
		for _, sink := range tel.Metrics.Sinks {
			if sink.OpenTelemetry == nil {
				continue
			}
			if err = refs(sink.OpenTelemetry.BackendCluster); err != nil {
				what = "metrics"
				break
			}
		}
	}
	if err == nil {
		rt.telemetryBackendTLS(ep)
		return
	}
	s := rt.st.object(resource.Ref{Kind: "Gateway", Namespace: gw.Namespace, Name: gw.Name})
	s.Conditions = setCondition(s.Conditions, cond("Accepted", "False", reasonInvalidParameters,
		fmt.Sprintf("Invalid %s backendRefs in the referenced EnvoyProxy: %v", what, err)))
}

// telemetryBackendTLS records the EnvoyProxy as an ancestor of the BackendTLSPolicies that
// secure its telemetry backends (sinks of access logs, tracing, metrics), as EG v1.9 lists
// it (EG's testdata: envoyproxy-otel-backendtlspolicy): the policy's status then says
// whether it applies there, beside the Gateways of the routes it serves.
func (rt *routeTranslator) telemetryBackendTLS(ep *egv1a1.EnvoyProxy) {
	tel := ep.Spec.Telemetry
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
	saved := rt.curAncestors
	rt.curAncestors = []result.ParentRef{{Kind: egv1a1.KindEnvoyProxy, Namespace: ep.Namespace, Name: ep.Name}}
	defer func() { rt.curAncestors = saved }()
	for _, bc := range clusters {
		for _, br := range bc.BackendRefs {
			ns, kind := refNamespaceKind(ep.Namespace, br.BackendObjectReference)
			key := types.NamespacedName{Namespace: ns, Name: string(br.Name)}
			section := ""
			if br.Port != nil {
				section = strconv.Itoa(int(*br.Port))
			}
			switch kind {
			case "Service":
				svc := rt.ix.services[key]
				if svc == nil || br.Port == nil {
					continue
				}
				sp := servicePort(svc, int32(*br.Port))
				if sp == nil {
					continue
				}
				_, _ = rt.mergeUpstreamTLS(ns, nil, btlsTarget{kind: "Service", name: svc.Name, section: sp.Name}, true)
			case egv1a1.KindBackend:
				if be := rt.ix.backends[key]; be != nil {
					_, _ = rt.mergeUpstreamTLS(ns, be, btlsTarget{group: egv1a1.GroupName, kind: egv1a1.KindBackend, name: be.Name, section: section}, true)
				}
			}
		}
	}
}
