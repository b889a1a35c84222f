package gatewayapi

import (
	"fmt"

	egv1a1 "github.com/envoyproxy/gateway/api/v1alpha1"
	"github.com/envoyproxy/gateway/api/v1alpha1/validation"
	"k8s.io/apimachinery/pkg/types"
	gwapiv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/egharness/egharness/translator/conditions"
	"github.com/egharness/egharness/translator/resource"
	"github.com/egharness/egharness/translator/result"
)

const (
	msgEnvoyProxyAccepted   = "EnvoyProxy has been accepted."
	reasonInvalidParameters = "InvalidParameters"
)

// envoyProxyOf is the EnvoyProxy that configures a Gateway's proxy: the Gateway's own
// (spec.infrastructure.parametersRef, in its namespace, ignored when Gateways are merged
// into one proxy) or else its GatewayClass's (spec.parametersRef); nil when neither names
// an existing one. own says the Gateway's own reference chose it. A Gateway's own
// EnvoyProxy replaces the class's rather than merging with it (EG's default without a
// mergeType on the EnvoyProxy).
func (objects *index) envoyProxyOf(gw *gwapiv1.Gateway) (envoyProxy *egv1a1.EnvoyProxy, own bool) {
	if inf := gw.Spec.Infrastructure; inf != nil && inf.ParametersRef != nil && !objects.mergeGateways {
		ref := inf.ParametersRef
		if string(ref.Group) == egv1a1.GroupName && string(ref.Kind) == egv1a1.KindEnvoyProxy {
			if envoyProxy := objects.envoyProxies[types.NamespacedName{Namespace: gw.Namespace,
				Name: ref.Name}]; envoyProxy != nil {
				return envoyProxy, true
			}
		}
	}
	if gc := objects.class(string(gw.Spec.GatewayClassName)); gc != nil {
		return objects.classProxy(gc), false
	}
	return nil, false
}

// paramsRefProblem is why EG's provider refuses a Gateway's own
// spec.infrastructure.parametersRef before any translation (its Gateway reconciler, in a
// cluster; EG's translator unit tests never meet it): a ref that is not an EnvoyProxy, or
// an EnvoyProxy that does not exist, or any ref while the class merges Gateways. "" when
// the ref is fine or absent.
func (objects *index) paramsRefProblem(gw *gwapiv1.Gateway) string {
	inf := gw.Spec.Infrastructure
	if inf == nil || inf.ParametersRef == nil {
		return ""
	}
	if objects.mergeGateways {
		return "infrastructure.parametersref must be nil when MergeGateways feature is enabled by gatewayclass"
	}
	ref := inf.ParametersRef
	if string(ref.Group) != egv1a1.GroupName || string(ref.Kind) != egv1a1.KindEnvoyProxy || ref.Name == "" {
		return fmt.Sprintf("unsupported parametersRef for gateway %s/%s", gw.Namespace, gw.Name)
	}
	if objects.envoyProxies[types.NamespacedName{Namespace: gw.Namespace, Name: ref.Name}] == nil {
		return fmt.Sprintf("failed to find envoyproxy %s/%s for Gateway %s: envoyproxies.gateway.envoyproxy.io %q not found",
			gw.Namespace, ref.Name, gw.Name, ref.Name)
	}
	return ""
}

func (objects *index) class(name string) *gwapiv1.GatewayClass {
	for _, gc := range objects.classes {
		if gc.Name == name {
			return gc
		}
	}
	return nil
}

// classProxy is the existing EnvoyProxy a GatewayClass's spec.parametersRef names, or nil.
func (objects *index) classProxy(gc *gwapiv1.GatewayClass) *egv1a1.EnvoyProxy {
	ref := gc.Spec.ParametersRef
	if ref == nil || string(ref.Group) != egv1a1.GroupName || string(ref.Kind) != egv1a1.KindEnvoyProxy ||
		ref.Namespace == nil {
		return nil
	}
	return objects.envoyProxies[types.NamespacedName{Namespace: string(*ref.Namespace), Name: ref.Name}]
}

// proxyCheck validates EnvoyProxy objects once each, with EG's own API validation (the
// checks beyond the CRD schema that EG runs before it uses an EnvoyProxy), and writes the
// EnvoyProxy's status for each ancestor that names it: the GatewayClass whose parametersRef
// does, and each Gateway whose own parametersRef does. A Gateway that only inherits its
// class's EnvoyProxy is not an ancestor.
type proxyCheck struct {
	objects *index
	status  *statusBook
	errors  map[*egv1a1.EnvoyProxy]error
	// deprecations (EP-02, v1.10-preview): an accepted EnvoyProxy that sets a deprecated
	// field also gets a Warning condition naming it and its replacement.
	deprecations bool
}

func (check *proxyCheck) validate(envoyProxy *egv1a1.EnvoyProxy) error {
	if err, seen := check.errors[envoyProxy]; seen {
		return err
	}
	if check.errors == nil {
		check.errors = map[*egv1a1.EnvoyProxy]error{}
	}
	err := validation.ValidateEnvoyProxy(envoyProxy)
	check.errors[envoyProxy] = err
	return err
}

func (check *proxyCheck) ancestor(envoyProxy *egv1a1.EnvoyProxy, parent result.ParentRef, err error) {
	c := conditions.New("Accepted", "True", "Accepted", msgEnvoyProxyAccepted)
	if err != nil {
		c = conditions.New("Accepted", "False", reasonInvalidParameters, err.Error())
	}
	parentStatus := check.status.parent(
		resource.Ref{Kind: egv1a1.KindEnvoyProxy, Namespace: envoyProxy.Namespace, Name: envoyProxy.Name}, parent)
	parentStatus.Conditions = conditions.Set(parentStatus.Conditions, c)
	if err == nil && check.deprecations && envoyProxy.Spec.LuaValidation != nil {
		// The only field EG's main branch deprecates on EnvoyProxy so far; the wording
		// is that of the policies' DeprecatedField warnings.
		parentStatus.Conditions = conditions.Set(parentStatus.Conditions, conditions.New("Warning", "True", "DeprecatedField",
			"spec.luaValidation is deprecated, use spec.lua.validationType instead"))
	}
}

// class reports the GatewayClass's EnvoyProxy and says whether the class stays accepted: an
// invalid one turns the class's Accepted to False.
func (check *proxyCheck) class(gc *gwapiv1.GatewayClass, classStatus *result.ObjectStatus) {
	envoyProxy := check.objects.classProxy(gc)
	if envoyProxy == nil {
		return
	}
	err := check.validate(envoyProxy)
	check.ancestor(envoyProxy, result.ParentRef{Kind: "GatewayClass", Name: gc.Name}, err)
	if err != nil {
		classStatus.Conditions = conditions.Set(classStatus.Conditions,
			conditions.New("Accepted", "False", reasonInvalidParameters,
				fmt.Sprintf("Invalid parametersRef: %v", err)))
	}
}

// gateway reports the Gateway's own EnvoyProxy and says whether the Gateway may be
// translated: a Gateway whose EnvoyProxy (own or inherited) is invalid is not accepted, gets
// no listeners and no xDS, and routes do not see it.
func (check *proxyCheck) gateway(gw *gwapiv1.Gateway) bool {
	if msg := check.objects.paramsRefProblem(gw); msg != "" {
		s := check.status.object(resource.Ref{Kind: "Gateway", Namespace: gw.Namespace, Name: gw.Name})
		s.Conditions = []result.Condition{conditions.New("Accepted", "False", reasonInvalidParameters, msg)}
		return false
	}
	envoyProxy, own := check.objects.envoyProxyOf(gw)
	if envoyProxy == nil {
		return true
	}
	err := check.validate(envoyProxy)
	if own {
		check.ancestor(envoyProxy, result.ParentRef{Kind: "Gateway", Namespace: gw.Namespace, Name: gw.Name}, err)
	}
	if err == nil {
		return true
	}
	s := check.status.object(resource.Ref{Kind: "Gateway", Namespace: gw.Namespace, Name: gw.Name})
	// EG's message joins its own prefix (which ends in a colon) with ": ".
	s.Conditions = []result.Condition{conditions.New("Accepted", "False", reasonInvalidParameters,
		fmt.Sprintf("Invalid parametersRef:: %v", err))}
	return false
}
