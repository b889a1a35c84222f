package gatewayapi

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	gwapiv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/egharness/egharness/translator/conditions"
	"github.com/egharness/egharness/translator/resource"
	"github.com/egharness/egharness/translator/result"
)

// Routes onto their parents: each route's parentRefs matched to Gateways and listeners
// (sectionName, port, allowedRoutes, hostnames) and the parent statuses EG writes. A
// route's rules are in rules.go, their matches in matches.go, filters in filters*.go,
// backendRefs in backendrefs.go and hostnames in hosts.go.

// routeTranslator is the stage's state while routes are attached and translated.
type routeTranslator struct {
	t        Translator
	objects  *index
	gateways []*gatewayCtx
	status   *statusBook
	nsLabels map[string]*nsLabels
	// attachments records, per IR listener, which parent entry of which route put routes
	// there: the overlap check writes its condition on exactly those entries.
	attachments []attachment
	// filterWarnings name filters the reference translator leaves out (filters.go).
	filterWarnings []string
	// btls records which route parents each BackendTLSPolicy served (backendtls.go);
	// curAncestors are the parents of the route being resolved.
	btls         btlsState
	curAncestors []result.ParentRef
	// policyBackend is the policy whose own backend is being resolved (ext_authz, OIDC,
	// remote JWKS, ext_proc): a BackendTLSPolicy is recorded for it rather than for
	// curAncestors. btlsPolicyUses: some BackendTLSPolicy was recorded for a policy.
	policyBackend  *result.ParentRef
	btlsPolicyUses bool
	// telemetryGateway is the Gateway whose telemetry backends are being resolved: its
	// client TLS settings (spec.tls.backend, else its EnvoyProxy's backendTLS) apply to
	// them, while the BackendTLSPolicy's ancestor is the EnvoyProxy (telemetry.go).
	telemetryGateway *gatewayCtx
}

type attachment struct {
	listener *listenerCtx
	route    resource.Ref
	parent   result.ParentRef
}

func (translation *routeTranslator) namespaceLabels(ns string) *nsLabels {
	if translation.nsLabels == nil {
		translation.nsLabels = map[string]*nsLabels{}
	}
	if l, ok := translation.nsLabels[ns]; ok {
		return l
	}
	set := labels.Set{corev1.LabelMetadataName: ns} // the API server sets this label on every namespace
	if n := translation.objects.namespaces[ns]; n != nil {
		for k, v := range n.Labels {
			set[k] = v
		}
	}
	l := &nsLabels{labels: set}
	translation.nsLabels[ns] = l
	return l
}

func (translation *routeTranslator) findGateway(ns, name string) *gatewayCtx {
	for _, g := range translation.gateways {
		if g.gw.Namespace == ns && g.gw.Name == name {
			return g
		}
	}
	return nil
}

// routeInput is what attachment needs of any xRoute kind that binds to HTTP listeners.
type routeInput struct {
	ref        resource.Ref
	parentRefs []gwapiv1.ParentReference
	hostnames  []string
	// rules resolves the rule set once; only routes with a parent of ours need it.
	rules func() []*ruleCtx
}

func (translation *routeTranslator) processHTTPRoute(r *gwapiv1.HTTPRoute) {
	translation.processRoute(routeInput{
		ref:        resource.Ref{Kind: "HTTPRoute", Namespace: r.Namespace, Name: r.Name},
		parentRefs: r.Spec.ParentRefs,
		hostnames:  hostnameStrings(r.Spec.Hostnames),
		rules:      func() []*ruleCtx { return translation.resolveHTTPRules(r) },
	})
}

func (translation *routeTranslator) processGRPCRoute(r *gwapiv1.GRPCRoute) {
	translation.processRoute(routeInput{
		ref:        resource.Ref{Kind: "GRPCRoute", Namespace: r.Namespace, Name: r.Name},
		parentRefs: r.Spec.ParentRefs,
		hostnames:  hostnameStrings(r.Spec.Hostnames),
		rules:      func() []*ruleCtx { return translation.resolveGRPCRules(r) },
	})
}

func (translation *routeTranslator) processRoute(in routeInput) {
	var rules []*ruleCtx
	translation.eachParent(in.ref, in.parentRefs, func(g *gatewayCtx, parentRef gwapiv1.ParentReference,
		parentStatus *result.ParentStatus) {
		if rules == nil {
			translation.curAncestors = translation.ancestorsOf(in.ref, in.parentRefs)
			rules = in.rules()
		}
		translation.attach(in, g, parentRef, parentStatus, rules)
	})
}

// parentKindNamespace is a parentRef's kind and namespace, defaulted as Gateway API
// does (Gateway, the route's own namespace); ok is false for a parent outside the Gateway
// API group.
func parentKindNamespace(ref resource.Ref, parentRef gwapiv1.ParentReference) (kind, ns string, ok bool) {
	if parentRef.Group != nil && string(*parentRef.Group) != gwapiv1.GroupName {
		return "", "", false
	}
	kind = "Gateway"
	if parentRef.Kind != nil {
		kind = string(*parentRef.Kind)
	}
	ns = ref.Namespace
	if parentRef.Namespace != nil {
		ns = string(*parentRef.Namespace)
	}
	return kind, ns, true
}

// parentGateway is the Gateway of ours a parent names, directly or through an admitted
// ListenerSet; nil for any other parent.
func (translation *routeTranslator) parentGateway(kind, ns, name string) *gatewayCtx {
	var g *gatewayCtx
	switch kind {
	case "Gateway":
		g = translation.findGateway(ns, name)
	case "ListenerSet":
		g, _ = translation.findListenerSet(ns, name)
	}
	return g
}

// eachParent calls fn for each parentRef that names a Gateway of ours, with its status
// entry (one per parentRef, port included). Other parents get no status from EG.
func (translation *routeTranslator) eachParent(ref resource.Ref, parentRefs []gwapiv1.ParentReference,
	fn func(*gatewayCtx, gwapiv1.ParentReference, *result.ParentStatus)) {
	for _, parentRef := range parentRefs {
		kind, ns, ok := parentKindNamespace(ref, parentRef)
		if !ok {
			continue
		}
		g := translation.parentGateway(kind, ns, string(parentRef.Name))
		if g == nil {
			continue // not a parent of ours: EG writes no status for it
		}
		pref := result.ParentRef{Kind: kind, Namespace: ns, Name: string(parentRef.Name)}
		if parentRef.SectionName != nil {
			pref.SectionName = string(*parentRef.SectionName)
		}
		if parentRef.Port != nil {
			pref.Port = int32(*parentRef.Port)
		}
		fn(g, parentRef, translation.status.parent(ref, pref))
	}
}

// selectListeners returns the Gateway's listeners the parentRef names (by sectionName and
// port) and, of those, the ones that admit the route's kind and namespace.
func (translation *routeTranslator) selectListeners(g *gatewayCtx, parentRef gwapiv1.ParentReference,
	ref resource.Ref) (selected, allowed []*listenerCtx) {
	// A Gateway parent selects the Gateway's own listeners; a ListenerSet parent, the set's.
	var set *gwapiv1.ListenerSet
	if parentRef.Kind != nil && string(*parentRef.Kind) == "ListenerSet" {
		ns := ref.Namespace
		if parentRef.Namespace != nil {
			ns = string(*parentRef.Namespace)
		}
		_, set = translation.findListenerSet(ns, string(parentRef.Name))
	}
	for _, l := range g.listeners {
		if l.listenerSet != set {
			continue
		}
		if parentRef.SectionName != nil && string(*parentRef.SectionName) != string(l.spec.Name) {
			continue
		}
		if parentRef.Port != nil && *parentRef.Port != l.spec.Port {
			continue
		}
		selected = append(selected, l)
	}
	labels := map[string]*nsLabels{ref.Namespace: translation.namespaceLabels(ref.Namespace)}
	for _, l := range selected {
		if l.allows(ref.Kind, ref.Namespace, labels) {
			allowed = append(allowed, l)
		}
	}
	return selected, allowed
}

// attach binds the route to the listeners its parentRef selects and writes its conditions.
func (translation *routeTranslator) attach(in routeInput, g *gatewayCtx, parentRef gwapiv1.ParentReference,
	parentStatus *result.ParentStatus, rules []*ruleCtx) {
	selected, allowed := translation.selectListeners(g, parentRef, in.ref)
	if len(selected) == 0 {
		parentStatus.Conditions = conditions.Set(parentStatus.Conditions,
			conditions.New("Accepted", "False", "NoMatchingParent", msgNoMatchingParent))
		translation.resolvedRefs(parentStatus, rules)
		return
	}
	if len(allowed) == 0 {
		parentStatus.Conditions = conditions.Set(parentStatus.Conditions,
			conditions.New("Accepted", "False", "NotAllowedByListeners", msgNotAllowed))
		translation.resolvedRefs(parentStatus, rules)
		return
	}
	// A GRPCRoute none of whose rules is accepted stops here: EG attaches it to no listener
	// (attachedRoutes stays 0, nothing is programmed) and writes only its rule problems.
	// An HTTPRoute in that state is still counted on its listeners (EG's testdata:
	// grpcroute-with-direct-response-2xx-invalid against httproute-with-conflicting-filters).
	if in.ref.Kind == "GRPCRoute" && allRulesDropped(rules) {
		translation.resolvedRefs(parentStatus, rules)
		return
	}
	hostsFound := false
	key := in.ref.String()
	for _, l := range allowed {
		hosts := computeHosts(in.hostnames, l)
		if len(hosts) == 0 {
			continue
		}
		hostsFound = true
		l.attached[key] = true
		if l.ir == nil {
			continue // attached, but the listener is not programmed
		}
		translation.attachments = append(translation.attachments,
			attachment{listener: l, route: in.ref, parent: parentStatus.Ref})
		if in.ref.Kind == "GRPCRoute" {
			l.ir.GRPC = true
		}
		for _, h := range hosts {
			for _, resolvedRule := range rules {
				l.ir.Routes = append(l.ir.Routes, resolvedRule.irRoutes(h, uint32(l.spec.Port))...)
			}
		}
	}
	if !hostsFound {
		parentStatus.Conditions = conditions.Set(parentStatus.Conditions,
			conditions.New("Accepted", "False", "NoMatchingListenerHostname",
				fmt.Sprintf(msgNoHostnameFormat, in.ref.Kind)))
		translation.resolvedRefs(parentStatus, rules)
		return
	}
	parentStatus.Conditions = conditions.Set(parentStatus.Conditions,
		conditions.New("Accepted", "True", "Accepted", msgRouteAccepted))
	translation.resolvedRefs(parentStatus, rules)
}

// resolvedRefs writes ResolvedRefs from the rules' backend problems.
func (translation *routeTranslator) resolvedRefs(parentStatus *result.ParentStatus, rules []*ruleCtx) {
	filterConditions(parentStatus, rules)
	var errs refErrors
	for _, resolvedRule := range rules {
		for _, e := range resolvedRule.errors {
			errs.add(e.reason, e.msg)
		}
	}
	if errs.empty() {
		parentStatus.Conditions = conditions.Set(parentStatus.Conditions,
			conditions.New("ResolvedRefs", "True", "ResolvedRefs", msgRouteResolvedRefs))
		return
	}
	parentStatus.Conditions = conditions.Set(parentStatus.Conditions, errs.condition("ResolvedRefs"))
}
