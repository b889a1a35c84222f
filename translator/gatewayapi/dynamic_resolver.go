package gatewayapi

import (
	"fmt"

	egv1a1 "github.com/envoyproxy/gateway/api/v1alpha1"
	"k8s.io/apimachinery/pkg/types"
	gwapiv1 "sigs.k8s.io/gateway-api/apis/v1"
)

// A DynamicResolver Backend (EG v1.9) forwards to whatever host a request or connection
// names. EG refuses it where that cannot work (EG's testdata:
// httproute-dynamic-resolver-with-mutliple-backends, grpcroute-with-urlrewrite-hostname-
// filter-invalid, tlsroute-dynamic-resolver-with-multiple-backends,
// tlsroute-dynamic-resolver-with-tls-terminate):
//   - next to other backendRefs of the same rule (or L4 route): there is no meaning in
//     splitting traffic between "anywhere" and a backend;
//   - with a host rewrite taken from the path (PathRegex): the dynamic forward proxy's
//     loopback protection inspects only the rewrite header or :authority, so a crafted path
//     could reach a loopback address;
//   - behind a TLS listener that terminates: the resolver forwards by SNI, which needs the
//     encrypted stream (passthrough).
// An HTTP or GRPC rule refused for it answers 500 and reports ResolvedRefs=False.

const (
	msgDynamicResolverMultiple  = "dynamic resolver is not supported for multiple backendRefs"
	msgDynamicResolverPathRegex = "host rewrite from path (PathRegex) is not supported with a dynamic resolver backend"
	msgDynamicResolverTerminate = "Dynamic resolver backend is only supported with TLS passthrough listeners"
)

// dynamicResolver says whether a backendRef names an EG Backend of type DynamicResolver.
func (translation *routeTranslator) dynamicResolver(routeNS string, backendRef gwapiv1.BackendRef) bool {
	if backendRef.Kind == nil || string(*backendRef.Kind) != egv1a1.KindBackend {
		return false
	}
	ns := routeNS
	if backendRef.Namespace != nil {
		ns = string(*backendRef.Namespace)
	}
	be := translation.objects.backends[types.NamespacedName{Namespace: ns, Name: string(backendRef.Name)}]
	return be != nil && be.Spec.Type != nil && *be.Spec.Type == egv1a1.BackendTypeDynamicResolver
}

func (translation *routeTranslator) anyDynamicResolver(routeNS string, refs []gwapiv1.BackendRef) bool {
	for _, backendRef := range refs {
		if translation.dynamicResolver(routeNS, backendRef) {
			return true
		}
	}
	return false
}

// checkDynamicResolverRule refuses an HTTP or GRPC rule's dynamic resolver where EG does:
// the rule's routes answer 500 and the route reports why.
func (translation *routeTranslator) checkDynamicResolverRule(resolvedRule *ruleCtx, filters *ruleFilters,
	routeNS string, refs []gwapiv1.BackendRef, ruleIdx int) {
	if !translation.anyDynamicResolver(routeNS, refs) {
		return
	}
	switch {
	case filters != nil && filters.rewrite != nil && filters.rewrite.Host != nil && filters.rewrite.Host.PathRegex != nil:
		resolvedRule.errors = append(resolvedRule.errors,
			refError{reason: "UnsupportedValue",
				msg: fmt.Sprintf("failed to process route rule %d: %s", ruleIdx, msgDynamicResolverPathRegex)})
	case len(refs) > 1:
		resolvedRule.errors = append(resolvedRule.errors,
			refError{reason: "InvalidBackendRef",
				msg: fmt.Sprintf("failed to process route rule %d: %s", ruleIdx, msgDynamicResolverMultiple)})
	default:
		return
	}
	resolvedRule.failClosed = true
}
