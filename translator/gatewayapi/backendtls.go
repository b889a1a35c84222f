package gatewayapi

import (
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"

	egv1a1 "github.com/envoyproxy/gateway/api/v1alpha1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	gwapiv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/egharness/egharness/translator/certs"
	"github.com/egharness/egharness/translator/conditions"
	"github.com/egharness/egharness/translator/ir"
	"github.com/egharness/egharness/translator/resource"
	"github.com/egharness/egharness/translator/result"
)

// systemCASecret is the one SDS secret every System-trusting backend shares (SDS-03).
const systemCASecret = "system_ca_certificates"

var (
	errCAKind = errors.New(
		"Unsupported reference kind, supported kinds are ConfigMap, Secret, and ClusterTrustBundle in caCertificateRefs")
	errNoCA = errors.New("no valid CA certificate found in referenced resources")
	// errRefNotPermitted: a CA ref in another namespace without a ReferenceGrant.
	errRefNotPermitted = errors.New("cross-namespace reference is not permitted by any ReferenceGrant")
)

// btlsUse is one route parent whose backend a BackendTLSPolicy configured, or failed to.
type btlsUse struct {
	ancestor result.ParentRef
	err      error
}

// btlsState gathers, per policy, the route parents that used it; statuses are written once
// every route is translated.
type btlsState struct {
	uses  map[*gwapiv1.BackendTLSPolicy][]btlsUse
	order []*gwapiv1.BackendTLSPolicy
}

// btlsTarget is what a BackendTLSPolicy targetRef must name to apply to a backendRef: the
// Service (group "") or EG Backend (gateway.envoyproxy.io), and the section: a Service
// port's name, or for a Backend the backendRef's port number (BTLS-02).
type btlsTarget struct {
	group, kind, name, section string
}

// backendTLSPolicy finds the policy for a backend: a policy naming the section wins over one
// naming the whole object (BTLS-02), then the oldest. Policies only target objects in their
// own namespace.
func (objects *index) backendTLSPolicy(ns string, target btlsTarget) *gwapiv1.BackendTLSPolicy {
	match := func(p *gwapiv1.BackendTLSPolicy, section bool) bool {
		for _, t := range p.Spec.TargetRefs {
			if string(t.Group) != target.group || string(t.Kind) != target.kind || string(t.Name) != target.name {
				continue
			}
			if section && t.SectionName != nil && target.section != "" && string(*t.SectionName) == target.section {
				return true
			}
			if !section && t.SectionName == nil {
				return true
			}
		}
		return false
	}
	candidates := objects.btlsTargets.policies(objects.btlsPolicies, ns, target)
	for _, p := range candidates {
		if match(p, true) {
			return p
		}
	}
	for _, p := range candidates {
		if match(p, false) {
			return p
		}
	}
	return nil
}

// btlsTargetIndex finds the BackendTLSPolicies that name an object: every Service backend
// of every route asks, and scanning all policies for each made the stage quadratic (10k
// routes with 1,000 policies: 20,000 backends times 1,000 policies).
type btlsTargetIndex struct {
	once     sync.Once
	byTarget map[btlsObject][]*gwapiv1.BackendTLSPolicy
}

// btlsObject is an object a policy's targetRef names, section aside.
type btlsObject struct {
	namespace, group, kind, name string
}

// policies are the policies of ns with a targetRef naming the target's object, oldest
// first, each once.
func (x *btlsTargetIndex) policies(all []*gwapiv1.BackendTLSPolicy, ns string,
	target btlsTarget) []*gwapiv1.BackendTLSPolicy {
	x.once.Do(func() {
		x.byTarget = map[btlsObject][]*gwapiv1.BackendTLSPolicy{}
		for _, p := range all {
			for _, t := range p.Spec.TargetRefs {
				k := btlsObject{p.Namespace, string(t.Group), string(t.Kind), string(t.Name)}
				if list := x.byTarget[k]; len(list) == 0 || list[len(list)-1] != p {
					x.byTarget[k] = append(list, p)
				}
			}
		}
	})
	return x.byTarget[btlsObject{ns, target.group, target.kind, target.name}]
}

// applyBackendTLS resolves the upstream TLS of a Service backend (only a BackendTLSPolicy
// can ask for it). A policy whose CA cannot be resolved makes the backend invalid (reason
// InvalidBackendTLS on the route).
func (translation *routeTranslator) applyBackendTLS(b *ir.Backend, ns string, sp *corev1.ServicePort) *refError {
	tls, err := translation.upstreamTLS(ns, nil, btlsTarget{kind: "Service", name: b.ServiceName, section: sp.Name})
	if err != nil {
		return &refError{reason: "InvalidBackendTLS", msg: err.Error()}
	}
	b.TLS = tls
	return nil
}

func (translation *routeTranslator) recordBTLS(p *gwapiv1.BackendTLSPolicy, err error) {
	ancestors := translation.curAncestors
	if translation.policyBackend != nil {
		ancestors = []result.ParentRef{*translation.policyBackend}
		translation.btlsPolicyUses = true
	}
	if translation.btls.uses == nil {
		translation.btls.uses = map[*gwapiv1.BackendTLSPolicy][]btlsUse{}
	}
	if _, seen := translation.btls.uses[p]; !seen {
		translation.btls.order = append(translation.btls.order, p)
		translation.btls.uses[p] = nil
	}
	for _, a := range ancestors {
		dup := false
		for _, u := range translation.btls.uses[p] {
			dup = dup || (u.ancestor == a && (u.err == nil) == (err == nil))
		}
		if !dup {
			translation.btls.uses[p] = append(translation.btls.uses[p], btlsUse{ancestor: a, err: err})
		}
	}
}

// backendTLSBundle is what a policy says: SNI, trust (CA refs xor the system store, BTLS-01)
// and the identities to check.
func (translation *routeTranslator) backendTLSBundle(p *gwapiv1.BackendTLSPolicy) (*ir.UpstreamTLS, error) {
	v := p.Spec.Validation
	tls := &ir.UpstreamTLS{Policy: p.Namespace + "/" + p.Name, SNI: string(v.Hostname)}
	for _, san := range v.SubjectAltNames {
		switch san.Type {
		case gwapiv1.HostnameSubjectAltNameType:
			tls.SubjectAltNames = append(tls.SubjectAltNames, ir.SubjectAltName{Hostname: string(san.Hostname)})
		case gwapiv1.URISubjectAltNameType:
			tls.SubjectAltNames = append(tls.SubjectAltNames, ir.SubjectAltName{URI: string(san.URI)})
		}
	}
	perResource := fmt.Sprintf("%s/%s-ca", p.Name, p.Namespace)
	if v.WellKnownCACertificates != nil && *v.WellKnownCACertificates == gwapiv1.WellKnownCACertificatesSystem {
		tls.SystemCA, tls.CASource, tls.CAName = true, "System", systemCASecret
		if translation.t.Profile.FlagOn(egv1a1.PerResourceSystemCASecret, translation.t.Config.RuntimeFlags) ||
			!translation.t.Profile.SharedSystemCASecret {
			tls.CAName = perResource
		}
	} else {
		ca, sources, sds, err := translation.caBundle("BackendTLSPolicy", p.Namespace, localRefs(v.CACertificateRefs))
		if err != nil {
			return nil, err
		}
		tls.CA, tls.CASource, tls.CAName, tls.CASDS = ca, sources, perResource, sds
	}
	return tls, nil
}

// localRefs are references in the referrer's own namespace, as caBundle takes them.
func localRefs(refs []gwapiv1.LocalObjectReference) []gwapiv1.ObjectReference {
	out := make([]gwapiv1.ObjectReference, len(refs))
	for i, r := range refs {
		out[i] = gwapiv1.ObjectReference{Group: r.Group, Kind: r.Kind, Name: r.Name}
	}
	return out
}

// caBundle joins the PEM of the CA refs (ConfigMap or Secret key ca.crt, else tls.crt, else
// the first key; ClusterTrustBundle's trustBundle). A ref without a namespace is in the
// referrer's (fromKind in ns); one in another namespace needs a ReferenceGrant. One SDS
// reference Secret (with enableSDSSecretRef) may stand for all of them instead.
func (translation *routeTranslator) caBundle(fromKind, ns string, refs []gwapiv1.ObjectReference) ([]byte, string,
	*ir.SDSSource, error) {
	var ca []string
	var sources []string
	var sds *ir.SDSSource
	supported := false
	for _, r := range refs {
		refNS := ns
		if r.Namespace != nil {
			refNS = string(*r.Namespace)
		}
		if refNS != ns && !translation.permitted(fromKind, ns, string(r.Group), string(r.Kind), refNS, string(r.Name)) {
			return nil, "", nil,
				fmt.Errorf("%w for caCertificateRef %s/%s (kind: %s, namespace: %s)", errRefNotPermitted, r.Group, r.Name, r.Kind,
					refNS)
		}
		ns := refNS
		switch string(r.Kind) {
		case "ConfigMap":
			supported = true
			cm := translation.objects.configMaps[types.NamespacedName{Namespace: ns, Name: string(r.Name)}]
			if cm == nil {
				return nil, "", nil, fmt.Errorf("configmap %s not found in namespace %s", r.Name, ns)
			}
			v, ok := firstCAKey(cm.Data)
			if !ok {
				return nil, "", nil, fmt.Errorf("no ca found in configmap %s", cm.Name)
			}
			ca = append(ca, v)
		case "Secret":
			supported = true
			s := translation.objects.secrets[types.NamespacedName{Namespace: ns, Name: string(r.Name)}]
			if s == nil {
				return nil, "", nil, fmt.Errorf("secret %s not found in namespace %s", r.Name, ns)
			}
			if s.Type == certs.SDSSecretType {
				switch {
				case !translation.objects.sdsSecretRefs:
					return nil, "", nil, errors.New("SDS Secret reference is not enabled in EnvoyGateway configuration")
				case sds != nil:
					return nil, "", nil, errors.New("multiple SDS reference secrets are not supported")
				}
				ref, err := certs.ReadSDSRef(s)
				if err != nil {
					return nil, "", nil, fmt.Errorf("invalid SDS reference secret %s: %w", s.Name, err)
				}
				sds = &ir.SDSSource{SecretName: ref.SecretName, URL: ref.URL}
				sources = append(sources, "Secret/"+s.Name)
				continue
			}
			data := map[string]string{}
			for k, v := range s.Data {
				data[k] = string(v)
			}
			for k, v := range s.StringData {
				data[k] = v
			}
			v, ok := firstCAKey(data)
			if !ok {
				return nil, "", nil, fmt.Errorf("no ca found in secret %s", s.Name)
			}
			ca = append(ca, v)
		case "ClusterTrustBundle":
			supported = true
			b := translation.objects.trustBundles[string(r.Name)]
			if b == "" {
				return nil, "", nil, fmt.Errorf("cluster trust bundle %s not found", r.Name)
			}
			ca = append(ca, b)
		default:
			continue
		}
		sources = append(sources, string(r.Kind)+"/"+string(r.Name))
	}
	if sds != nil && len(ca) > 0 {
		return nil, "", nil, errors.New("cannot mix SDS reference secrets with other CA certificate types")
	}
	if sds != nil {
		return nil, strings.Join(sources, ","), sds, nil
	}
	// Bundles are joined by a newline after a non-empty start, as EG does: empty ones
	// (a ConfigMap whose ca.crt is "") add nothing, and all empty is no CA at all.
	bundle := ""
	for _, c := range ca {
		if bundle != "" {
			bundle += "\n"
		}
		bundle += c
	}
	if bundle == "" {
		if !supported {
			return nil, "", nil, errCAKind
		}
		return nil, "", nil, errNoCA
	}
	return []byte(bundle), strings.Join(sources, ","), nil, nil
}

// firstCAKey reads ca.crt, else tls.crt, else the only key there is; with several other
// keys there is no CA (EG does not guess among them).
func firstCAKey(data map[string]string) (string, bool) {
	for _, k := range []string{"ca.crt", "tls.crt"} {
		if v, ok := data[k]; ok {
			return v, true
		}
	}
	if len(data) == 1 {
		for _, v := range data {
			return v, true
		}
	}
	return "", false
}

// backendTLSStatuses writes each policy's ancestors: Accepted and ResolvedRefs, or why not;
// and marks a policy Conflicted when an older one already targets the same Service (and
// section), on the ancestors of the one it conflicts with.
func (translation *routeTranslator) backendTLSStatuses() {
	for _, p := range translation.btls.order {
		ref := resource.Ref{Kind: "BackendTLSPolicy", Namespace: p.Namespace, Name: p.Name}
		for _, u := range translation.btls.uses[p] {
			parentStatus := translation.status.parent(ref, u.ancestor)
			if u.err != nil {
				msg := conditions.Message(u.err.Error())
				resolved := "InvalidCACertificateRef"
				if errors.Is(u.err, errCAKind) {
					resolved = "InvalidKind"
				}
				parentStatus.Conditions = conditions.Set(parentStatus.Conditions,
					conditions.New("Accepted", "False", "NoValidCACertificate", msg))
				parentStatus.Conditions = conditions.Set(parentStatus.Conditions,
					conditions.New("ResolvedRefs", "False", resolved, msg))
				continue
			}
			parentStatus.Conditions = conditions.Set(parentStatus.Conditions,
				conditions.New("ResolvedRefs", "True", "ResolvedRefs", "Resolved all the Object references."))
			parentStatus.Conditions = conditions.Set(parentStatus.Conditions,
				conditions.New("Accepted", "True", "Accepted", "Policy has been accepted."))
		}
	}
	seen := map[string]*gwapiv1.BackendTLSPolicy{}
	for _, p := range translation.objects.btlsPolicies {
		var winner *gwapiv1.BackendTLSPolicy
		for _, t := range p.Spec.TargetRefs {
			section := ""
			if t.SectionName != nil {
				section = string(*t.SectionName)
			}
			key := fmt.Sprintf("%s/%s/%s/%s/%s", p.Namespace, t.Group, t.Kind, t.Name, section)
			if w, ok := seen[key]; ok {
				winner = w
				break
			}
			seen[key] = p
		}
		if winner == nil {
			continue
		}
		ref := resource.Ref{Kind: "BackendTLSPolicy", Namespace: p.Namespace, Name: p.Name}
		for _, u := range translation.btls.uses[winner] {
			parentStatus := translation.status.parent(ref, u.ancestor)
			parentStatus.Conditions = conditions.Set(parentStatus.Conditions, conditions.New("Accepted", "False", "Conflicted",
				fmt.Sprintf("Policy conflicts with BackendTLSPolicy %s/%s.", winner.Namespace, winner.Name)))
		}
	}
	for _, p := range translation.objects.btlsPolicies {
		// Only policies that have a status (looking one up would create it).
		if s := translation.status.byRef[resource.Ref{Kind: "BackendTLSPolicy", Namespace: p.Namespace,
			Name: p.Name}]; s != nil {
			truncateBTLSAncestors(s)
		}
	}
}

// maxBTLSAncestors is the CRD's bound on status.ancestors.
const maxBTLSAncestors = 16

// truncateBTLSAncestors keeps the first 16 ancestors of a BackendTLSPolicy, ordered by
// kind, namespace, name and section as strings (gateway-10 before gateway-2), and marks
// the last one Aggregated, as EG v1.9 does for this policy (EG's testdata:
// backendtlspolicy-status-conditions-truncated). EG's own policies keep the ancestors a
// user most needs instead (POL-05, translator/policy).
func truncateBTLSAncestors(s *result.ObjectStatus) {
	if len(s.Parents) <= maxBTLSAncestors {
		return
	}
	sort.SliceStable(s.Parents, func(i, j int) bool { return s.Parents[i].Ref.String() < s.Parents[j].Ref.String() })
	s.Parents = s.Parents[:maxBTLSAncestors]
	// Written again once policies' backends add ancestors (PolicyBackends): the mark
	// moves to the new last one.
	for i := range s.Parents {
		kept := make([]result.Condition, 0, len(s.Parents[i].Conditions))
		for _, c := range s.Parents[i].Conditions {
			if c.Type != "Aggregated" {
				kept = append(kept, c)
			}
		}
		s.Parents[i].Conditions = kept
	}
	last := &s.Parents[maxBTLSAncestors-1]
	last.Conditions = conditions.Set(last.Conditions, conditions.New("Aggregated", "True", "Aggregated",
		"Ancestors have been truncated because the number of policy ancestors exceeds 16."))
}

// ancestorsOf are the route's parents that are Gateways of ours, as policy ancestors.
func (translation *routeTranslator) ancestorsOf(ref resource.Ref,
	parentRefs []gwapiv1.ParentReference) []result.ParentRef {
	var out []result.ParentRef
	for _, parentRef := range parentRefs {
		kind, ns, ok := parentKindNamespace(ref, parentRef)
		if !ok {
			continue
		}
		if kind != "Gateway" || translation.findGateway(ns, string(parentRef.Name)) == nil {
			continue
		}
		a := result.ParentRef{Kind: kind, Namespace: ns, Name: string(parentRef.Name)}
		if parentRef.SectionName != nil {
			a.SectionName = string(*parentRef.SectionName)
		}
		if parentRef.Port != nil {
			a.Port = int32(*parentRef.Port)
		}
		dup := false
		for _, o := range out {
			dup = dup || o == a
		}
		if !dup {
			out = append(out, a)
		}
	}
	return out
}
