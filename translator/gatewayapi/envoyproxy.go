package gatewayapi

import (
	egv1a1 "github.com/envoyproxy/gateway/api/v1alpha1"
	"k8s.io/apimachinery/pkg/types"
	gwapiv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/egharness/egharness/translator/ir"
)

// envoyProxyOf is the EnvoyProxy that configures a Gateway's proxy: the Gateway's own
// (spec.infrastructure.parametersRef, in its namespace) or else its GatewayClass's
// (spec.parametersRef); nil when neither names an existing one.
func (ix *index) envoyProxyOf(gw *gwapiv1.Gateway) *egv1a1.EnvoyProxy {
	if inf := gw.Spec.Infrastructure; inf != nil && inf.ParametersRef != nil {
		ref := inf.ParametersRef
		if string(ref.Group) == egv1a1.GroupName && string(ref.Kind) == egv1a1.KindEnvoyProxy {
			if ep := ix.envoyProxies[types.NamespacedName{Namespace: gw.Namespace, Name: ref.Name}]; ep != nil {
				return ep
			}
		}
	}
	for _, gc := range ix.classes {
		if gc.Name != string(gw.Spec.GatewayClassName) || gc.Spec.ParametersRef == nil {
			continue
		}
		ref := gc.Spec.ParametersRef
		if string(ref.Group) != egv1a1.GroupName || string(ref.Kind) != egv1a1.KindEnvoyProxy || ref.Namespace == nil {
			continue
		}
		return ix.envoyProxies[types.NamespacedName{Namespace: string(*ref.Namespace), Name: ref.Name}]
	}
	return nil
}

// proxyBackendTLS applies the EnvoyProxy's backendTLS settings of the route's first Gateway
// parent to an upstream context (BTLS-03): versions, ciphers and ALPN replace the defaults.
func (rt *routeTranslator) proxyBackendTLS(tls *ir.UpstreamTLS) {
	if len(rt.curAncestors) == 0 {
		return
	}
	a := rt.curAncestors[0]
	g := rt.findGateway(a.Namespace, a.Name)
	if g == nil {
		return
	}
	ep := rt.ix.envoyProxyOf(g.gw)
	if ep == nil || ep.Spec.BackendTLS == nil {
		return
	}
	s := ep.Spec.BackendTLS.TLSSettings
	if s.MinVersion != nil {
		tls.MinVersion = string(*s.MinVersion)
	}
	if s.MaxVersion != nil {
		tls.MaxVersion = string(*s.MaxVersion)
	}
	tls.Ciphers = s.Ciphers
	if s.ALPNProtocols != nil {
		tls.ALPN = []string{}
		for _, p := range s.ALPNProtocols {
			tls.ALPN = append(tls.ALPN, string(p))
		}
	}
}
