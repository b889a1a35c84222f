package policy

import (
	"fmt"
	"sort"

	egv1a1 "github.com/envoyproxy/gateway/api/v1alpha1"
	corev1 "k8s.io/api/core/v1"
	gwapiv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/egharness/egharness/translator/refgrant"
	"github.com/egharness/egharness/translator/resource"
)

// RefObjects are the objects policy features read: Secrets and ConfigMaps, and the
// ReferenceGrants that let a policy read them from another namespace.
type RefObjects struct {
	secrets    map[nsName]*corev1.Secret
	configMaps map[nsName]*corev1.ConfigMap
	grants     *refgrant.Index
	// backends resolves policy backendRefs (extension_services.go); nil when not given.
	backends BackendResolver
	// securityPolicyUIDs are the SecurityPolicies' metadata.uid (OIDC cookie names).
	securityPolicyUIDs map[nsName]string
	// tcpRouteTargets are the SecurityPolicies that name a TCPRoute among their targets:
	// EG holds only those to the TCP rule (CheckTCPSecurity).
	tcpRouteTargets map[nsName]bool
}

// securityPolicyUID is the uid of a SecurityPolicy ("" when it has none, as offline).
func (r *RefObjects) securityPolicyUID(ns, name string) string {
	return r.securityPolicyUIDs[nsName{ns, name}]
}

type nsName struct{ ns, name string }

// NewRefObjects indexes the objects once for every policy; grants are the ReferenceGrants
// the gatewayapi stage indexed (Topology.Grants).
func NewRefObjects(objs []resource.Object, grants *refgrant.Index) *RefObjects {
	r := &RefObjects{secrets: map[nsName]*corev1.Secret{}, configMaps: map[nsName]*corev1.ConfigMap{}, grants: grants}
	for _, o := range objs {
		switch v := o.Obj.(type) {
		case *corev1.Secret:
			r.secrets[nsName{v.Namespace, v.Name}] = v
		case *corev1.ConfigMap:
			r.configMaps[nsName{v.Namespace, v.Name}] = v
		case *egv1a1.SecurityPolicy:
			if r.securityPolicyUIDs == nil {
				r.securityPolicyUIDs = map[nsName]string{}
			}
			r.securityPolicyUIDs[nsName{v.Namespace, v.Name}] = string(v.UID)
			if targetsKind(v.Spec.PolicyTargetReferences, "TCPRoute") {
				if r.tcpRouteTargets == nil {
					r.tcpRouteTargets = map[nsName]bool{}
				}
				r.tcpRouteTargets[nsName{v.Namespace, v.Name}] = true
			}
		}
	}
	return r
}

// permitted: a ReferenceGrant in the target namespace lets kind fromKind of group
// gateway.envoyproxy.io in fromNS refer to the core object toKind/name.
func (r *RefObjects) permitted(fromKind, fromNS, toKind, toNS, name string) bool {
	return r.grants.Permits(refgrant.From{Group: egv1a1.GroupName, Kind: fromKind, Namespace: fromNS},
		refgrant.To{Group: "", Kind: toKind, Namespace: toNS, Name: name})
}

// secretRef finds the Secret a policy of kind policyKind in namespace ns refers to, with
// EG's errors for a wrong group or kind, a cross-namespace reference no grant permits, and
// a missing Secret.
func (r *RefObjects) secretRef(policyKind, ns string, ref gwapiv1.SecretObjectReference) (*corev1.Secret, error) {
	if ref.Group != nil && *ref.Group != "" {
		return nil, fmt.Errorf("secret ref group must be unspecified/empty")
	}
	if ref.Kind != nil && *ref.Kind != "Secret" {
		return nil, fmt.Errorf("secret ref kind must be Secret")
	}
	target := ns
	if ref.Namespace != nil && *ref.Namespace != "" && string(*ref.Namespace) != ns {
		target = string(*ref.Namespace)
		if !r.permitted(policyKind, ns, "Secret", target, string(ref.Name)) {
			return nil, fmt.Errorf("ref to Secret %s/%s not permitted by any ReferenceGrant", target, ref.Name)
		}
	}
	s := r.secrets[nsName{target, string(ref.Name)}]
	if s == nil {
		return nil, fmt.Errorf("secret %s/%s does not exist", target, ref.Name)
	}
	return s, nil
}

// configMapValue is the value under key in a ConfigMap of the namespace, or its only (or
// first by key) value when that key is absent, as EG reads JWKS and Lua scripts.
func (r *RefObjects) configMapValue(ns, name, key string) (string, bool, bool) {
	cm := r.configMaps[nsName{ns, name}]
	if cm == nil {
		return "", false, false
	}
	if v, ok := cm.Data[key]; ok {
		return v, true, true
	}
	keys := make([]string, 0, len(cm.Data))
	for k := range cm.Data {
		keys = append(keys, k)
	}
	if len(keys) == 0 {
		return "", true, false
	}
	sort.Strings(keys)
	return cm.Data[keys[0]], true, true
}

// targetsKind says whether a policy's targets (targetRef, targetRefs, targetSelectors) name
// a kind.
func targetsKind(refs egv1a1.PolicyTargetReferences, kind string) bool {
	if refs.TargetRef != nil && string(refs.TargetRef.Kind) == kind {
		return true
	}
	for _, t := range refs.TargetRefs {
		if string(t.Kind) == kind {
			return true
		}
	}
	for _, t := range refs.TargetSelectors {
		if string(t.Kind) == kind {
			return true
		}
	}
	return false
}
