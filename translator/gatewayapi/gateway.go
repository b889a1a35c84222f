package gatewayapi

import (
	"fmt"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	gwapiv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/egharness/egharness/translator/conditions"
	"github.com/egharness/egharness/translator/ir"
	"github.com/egharness/egharness/translator/resource"
	"github.com/egharness/egharness/translator/result"
)

type gatewayCtx struct {
	gw         *gwapiv1.Gateway
	listeners  []*listenerCtx
	sets       []*setCtx         // ListenerSets naming this Gateway, in processing order
	backendTLS gatewayBackendTLS // spec.tls.backend (gatewaytls.go)
}

type listenerCtx struct {
	gateway *gatewayCtx
	// listenerSet is set for listeners that come from a ListenerSet attached to the Gateway.
	listenerSet    *gwapiv1.ListenerSet
	conflictLoser  bool // lost a hostname conflict to a Gateway listener or an older set
	spec           gwapiv1.Listener
	conditions     []result.Condition
	supportedKinds []string
	attached       map[string]bool  // route keys attached to this listener
	ir             *ir.HTTPListener // nil when the listener is not programmed
	tcp            *ir.TCPListener  // TCP and TLS listeners, when programmed
	udp            *ir.UDPListener  // UDP listeners, when programmed
	// HTTPS only: the resolved certificates, their DNS SANs,
	// and whether overlapping certificates force ALPN down to HTTP/1.1.
	certs        []ir.TLSCertificate
	certDNSNames []string
	http11Only   bool
	hasSDS       bool // a certificate comes from an SDS server: its names are unknown
	// frontendInvalid: the Gateway's client validation for this HTTPS listener's port did not
	// resolve; EG leaves the listener out of the xDS.
	frontendInvalid bool
}

func (l *listenerCtx) hostname() string {
	if l.spec.Hostname == nil {
		return ""
	}
	return string(*l.spec.Hostname)
}

// irName is the IR (and default xDS) name of the listener: <ns>/<gateway>/<listener>.
func (l *listenerCtx) irName() string {
	gw := l.gateway.gw.Namespace + "/" + l.gateway.gw.Name
	if l.listenerSet != nil {
		return gw + "/" + l.listenerSet.Namespace + "/" + l.listenerSet.Name + "/" + string(l.spec.Name)
	}
	return gw + "/" + string(l.spec.Name)
}

// displayName names the listener in conflict messages: <owner namespace>/<owner>/<name>.
func (l *listenerCtx) displayName() string {
	if l.listenerSet != nil {
		return l.listenerSet.Namespace + "/" + l.listenerSet.Name + "/" + string(l.spec.Name)
	}
	return l.gateway.gw.Namespace + "/" + l.gateway.gw.Name + "/" + string(l.spec.Name)
}

func creation(o interface{ GetCreationTimestamp() metav1.Time }) time.Time {
	return o.GetCreationTimestamp().Time
}

// httpRouteKinds are what an HTTP listener serves when allowedRoutes.kinds is unset.
var httpRouteKinds = []string{"HTTPRoute", "GRPCRoute"}

// routeKinds are the route kinds the listener's protocol serves (and TLS mode).
func (l *listenerCtx) routeKinds() []string {
	switch l.spec.Protocol {
	case gwapiv1.TCPProtocolType:
		return []string{"TCPRoute"}
	case gwapiv1.UDPProtocolType:
		return []string{"UDPRoute"}
	case gwapiv1.TLSProtocolType:
		if l.spec.TLS != nil && l.spec.TLS.Mode != nil && *l.spec.TLS.Mode == gwapiv1.TLSModeTerminate {
			return []string{"TCPRoute", "TLSRoute"}
		}
		return []string{"TLSRoute"}
	}
	return httpRouteKinds
}

// containerPort maps a Gateway port to the port Envoy binds: EG shifts privileged ports
// by 10000 so the proxy needs no privilege (80 → 10080).
func containerPort(p int32) uint32 {
	if p < 1024 {
		return uint32(p) + 10000
	}
	return uint32(p)
}

func (t Translator) processGateway(gw *gwapiv1.Gateway, objects *index, permitted permitFunc, out *Output) *gatewayCtx {
	g := t.startGateway(gw, objects, permitted)
	return t.finishGateway(g, false)
}

// startGateway validates a Gateway's listeners (and its ListenerSets') on their own and
// against each other.
func (t Translator) startGateway(gw *gwapiv1.Gateway, objects *index, permitted permitFunc) *gatewayCtx {
	g := &gatewayCtx{gw: gw}
	for _, l := range gw.Spec.Listeners {
		g.addListener(l, nil, objects, permitted)
	}
	g.attachListenerSets(objects, permitted)
	g.checkProtocolConflicts()
	g.checkHostnameConflicts()
	g.checkL4Conflicts(gwapiv1.TCPProtocolType)
	g.checkL4Conflicts(gwapiv1.UDPProtocolType)
	return g
}

// finishGateway writes the listeners' final conditions and builds their IR. merged: the
// overlapping TLS check is left to checkMergedGateways, across every merged Gateway.
func (t Translator) finishGateway(g *gatewayCtx, merged bool) *gatewayCtx {
	for _, l := range g.listeners {
		l.finishConditions()
	}
	if !merged {
		checkOverlappingTLS(g.listeners)
	}
	return g.buildIR(g.gw)
}

// addListener validates one listener of the Gateway or of an attached ListenerSet.
func (g *gatewayCtx) addListener(l gwapiv1.Listener, set *gwapiv1.ListenerSet, objects *index, permitted permitFunc) {
	{
		lc := &listenerCtx{gateway: g, spec: l, listenerSet: set, attached: map[string]bool{}}
		switch l.Protocol {
		case gwapiv1.HTTPProtocolType, gwapiv1.HTTPSProtocolType, gwapiv1.TCPProtocolType, gwapiv1.UDPProtocolType,
			gwapiv1.TLSProtocolType:
		default:
			lc.supportedKinds = []string{}
			lc.conditions = conditions.Set(lc.conditions, conditions.New("Accepted", "False", "UnsupportedProtocol",
				fmt.Sprintf("Protocol %s is unsupported, must be HTTP, HTTPS, TCP or UDP.", l.Protocol)))
			g.listeners = append(g.listeners, lc)
			return
		}
		lc.checkNamespaceSelector()
		lc.checkKinds()
		switch {
		case l.Protocol == gwapiv1.HTTPSProtocolType:
			lc.checkTLS(objects, permitted)
		case l.Protocol == gwapiv1.TLSProtocolType:
			lc.checkTLSListener(objects, permitted)
		case l.TLS != nil:
			lc.conditions = conditions.Set(lc.conditions, conditions.New("Programmed", "False", "Invalid",
				fmt.Sprintf("Listener must not have TLS set when protocol is %s.", l.Protocol)))
		}
		if l.Hostname != nil && (l.Protocol == gwapiv1.TCPProtocolType || l.Protocol == gwapiv1.UDPProtocolType) {
			// Raw TCP and UDP carry no name to match on.
			lc.conditions = conditions.Set(lc.conditions, conditions.New("Programmed", "False", "Invalid",
				fmt.Sprintf("Listener must not have hostname set when protocol is %s.", l.Protocol)))
		}
		g.listeners = append(g.listeners, lc)
	}
}

// addressesSupported: EG v1.9 serves Gateway addresses of type IPAddress and Hostname
// only. A Gateway that asks for another type (NamedAddress, a vendor's) is not accepted
// (Accepted False, UnsupportedAddress, naming the type), gets no listener status and no
// proxy, and routes do not see it, as a Gateway with an invalid EnvoyProxy (EG's testdata:
// gateway-with-unsupported-address-type).
func addressesSupported(gw *gwapiv1.Gateway, status *statusBook) bool {
	for _, a := range gw.Spec.Addresses {
		if a.Type == nil || *a.Type == gwapiv1.IPAddressType || *a.Type == gwapiv1.HostnameAddressType {
			continue
		}
		s := status.object(resource.Ref{Kind: "Gateway", Namespace: gw.Namespace, Name: gw.Name})
		s.Conditions = []result.Condition{conditions.New("Accepted", "False", "UnsupportedAddress",
			fmt.Sprintf("Gateway has an address with an unsupported type: %s", *a.Type))}
		return false
	}
	return true
}

// checkNamespaceSelector: a listener that admits routes from the namespaces a selector picks
// must have a selector that parses; otherwise EG v1.9 does not program it (Programmed
// False, Invalid, saying what is wrong) and no route attaches (EG's testdata:
// gateway-with-listener-with-missing-allowed-namespaces-selector, ...-invalid-...).
func (lc *listenerCtx) checkNamespaceSelector() {
	ar := lc.spec.AllowedRoutes
	if ar == nil || ar.Namespaces == nil || ar.Namespaces.From == nil ||
		*ar.Namespaces.From != gwapiv1.NamespacesFromSelector {
		return
	}
	if ar.Namespaces.Selector == nil {
		lc.conditions = conditions.Set(lc.conditions, conditions.New("Programmed", "False", "Invalid",
			`The allowedRoutes.namespaces.selector field must be specified when `+
				`allowedRoutes.namespaces.from is set to "Selector".`))
		return
	}
	if _, err := metav1.LabelSelectorAsSelector(ar.Namespaces.Selector); err != nil {
		lc.conditions = conditions.Set(lc.conditions, conditions.New("Programmed", "False", "Invalid",
			fmt.Sprintf("The allowedRoutes.namespaces.selector could not be parsed: %v.", err)))
	}
}

// buildIR makes the IR of every programmed listener.
func (g *gatewayCtx) buildIR(gw *gwapiv1.Gateway) *gatewayCtx {
	for _, l := range g.listeners {
		if l.ready() && l.buildL4IR() {
			continue
		}
		if l.ready() {
			host := l.hostname()
			if host == "" {
				host = "*"
			}
			l.ir = &ir.HTTPListener{
				Name:        l.irName(),
				Gateway:     gw.Namespace + "/" + gw.Name,
				SectionName: string(l.spec.Name),
				Address:     "0.0.0.0",
				Port:        containerPort(int32(l.spec.Port)),
				GatewayPort: uint32(l.spec.Port),
				Hostnames:   []string{host},
			}
			if l.spec.Protocol == gwapiv1.HTTPSProtocolType {
				l.ir.TLS = &ir.TLSConfig{Certificates: l.certs, HTTP11Only: l.http11Only}
			}
		}
	}
	return g
}

type permitFunc func(fromKind, fromNS, toGroup, toKind, toNS, toName string) bool

// checkKinds validates allowedRoutes.kinds and records the supported kinds.
func (l *listenerCtx) checkKinds() {
	kinds := l.routeKinds()
	if l.spec.AllowedRoutes == nil || len(l.spec.AllowedRoutes.Kinds) == 0 {
		l.supportedKinds = append([]string(nil), kinds...)
		return
	}
	var bad []string
	for _, k := range l.spec.AllowedRoutes.Kinds {
		group := gwapiv1.GroupName
		if k.Group != nil {
			group = string(*k.Group)
		}
		if group == gwapiv1.GroupName && contains(kinds, string(k.Kind)) {
			if !contains(l.supportedKinds, string(k.Kind)) {
				l.supportedKinds = append(l.supportedKinds, string(k.Kind))
			}
			continue
		}
		bad = append(bad, string(k.Kind))
	}
	for _, k := range bad {
		allowed := l.supportedKinds
		if len(allowed) == 0 {
			allowed = kinds
		}
		l.conditions = conditions.Set(l.conditions, conditions.New("ResolvedRefs", "False", "InvalidRouteKinds",
			fmt.Sprintf("%s is not supported, kind must be one of [%s]", k, strings.Join(allowed, " "))))
	}
}

func hasFailure(cs []result.Condition) bool {
	for _, c := range cs {
		if (c.Type == "Conflicted" && c.Status == "True") || (c.Type != "Conflicted" && c.Status == "False") {
			return true
		}
	}
	return false
}

// finishConditions completes the listener's conditions as EG does: a clean listener gets
// Programmed, Accepted and ResolvedRefs true; one with a problem gets Programmed false.
func (l *listenerCtx) finishConditions() {
	if len(l.conditions) == 1 && l.conditions[0].Type == "ResolvedRefs" {
		switch l.conditions[0].Reason {
		case "PartiallyInvalidCertificateRef":
			// Some certificate refs are bad but others serve: the listener is programmed.
			l.conditions = conditions.Set(l.conditions, conditions.New("Accepted", "True", "Accepted", msgListenerAccepted))
			l.conditions = conditions.Set(l.conditions,
				conditions.New("Programmed", "True", "Programmed", msgListenerProgrammed))
			return
		case "InvalidCertificateRef":
			// The listener is sound but cannot serve without a certificate: accepted, not programmed.
			reason := "Invalid"
			if l.listenerSet != nil {
				reason = "ListenersNotValid"
			}
			l.conditions = conditions.Set(l.conditions, conditions.New("Accepted", "True", "Accepted", msgListenerAccepted))
			l.conditions = conditions.Set(l.conditions, conditions.New("Programmed", "False", reason, msgListenerInvalid))
			return
		}
	}
	if len(l.conditions) == 0 {
		l.conditions = []result.Condition{
			conditions.New("Programmed", "True", "Programmed", msgListenerProgrammed),
			conditions.New("Accepted", "True", "Accepted", msgListenerAccepted),
			conditions.New("ResolvedRefs", "True", "ResolvedRefs", msgListenerResolvedRefs),
		}
		if l.listenerSet != nil {
			l.conditions = append(l.conditions, conditions.New("Conflicted", "False", "NoConflicts", "No conflicts detected"))
		}
		return
	}
	if !conditions.Has(l.conditions, "Programmed") {
		reason := "Invalid"
		if l.listenerSet != nil {
			reason = "ListenersNotValid" // EG's reason for ListenerSet listeners
		}
		l.conditions = conditions.Set(l.conditions, conditions.New("Programmed", "False", reason, msgListenerInvalid))
	}
	if !conditions.Has(l.conditions, "ResolvedRefs") {
		l.conditions = conditions.Set(l.conditions,
			conditions.New("ResolvedRefs", "True", "ResolvedRefs", msgListenerResolvedRefs))
	}
}

func (l *listenerCtx) ready() bool {
	for _, c := range l.conditions {
		if c.Type == "Programmed" {
			return c.Status == "True"
		}
	}
	return false
}

// allows reports whether the listener admits a route of kind from namespace ns.
func (l *listenerCtx) allows(kind, ns string, namespaces map[string]*nsLabels) bool {
	if !contains(l.supportedKinds, kind) {
		return false
	}
	from := gwapiv1.NamespacesFromSame
	var selector *metav1.LabelSelector
	if ar := l.spec.AllowedRoutes; ar != nil && ar.Namespaces != nil {
		if ar.Namespaces.From != nil {
			from = *ar.Namespaces.From
		}
		selector = ar.Namespaces.Selector
	}
	switch from {
	case gwapiv1.NamespacesFromAll:
		return true
	case gwapiv1.NamespacesFromSelector:
		if selector == nil {
			return false
		}
		sel, err := metav1.LabelSelectorAsSelector(selector)
		if err != nil {
			return false
		}
		var set labels.Set
		if n := namespaces[ns]; n != nil {
			set = n.labels
		}
		return sel.Matches(set)
	default:
		// "Same" is the namespace of the listener's owner: the Gateway or its ListenerSet.
		if l.listenerSet != nil {
			return ns == l.listenerSet.Namespace
		}
		return ns == l.gateway.gw.Namespace
	}
}

type nsLabels struct{ labels labels.Set }

// finish writes the Gateway's listener statuses.
func (g *gatewayCtx) finish(status *statusBook) {
	s := status.object(resource.Ref{Kind: "Gateway", Namespace: g.gw.Namespace, Name: g.gw.Name})
	for _, l := range g.listeners {
		if l.listenerSet != nil {
			continue // reported on the ListenerSet
		}
		s.Listeners = append(s.Listeners, result.ListenerStatus{
			Name:           string(l.spec.Name),
			Conditions:     l.conditions,
			AttachedRoutes: int32(len(l.attached)),
			SupportedKinds: l.supportedKinds,
		})
	}
	g.finishSets(status)
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
