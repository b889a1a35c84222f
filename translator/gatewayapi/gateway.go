package gatewayapi

import (
	"fmt"
	"sort"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	gwapiv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/egharness/egharness/translator/ir"
	"github.com/egharness/egharness/translator/resource"
	"github.com/egharness/egharness/translator/result"
)

type gatewayCtx struct {
	gw        *gwapiv1.Gateway
	listeners []*listenerCtx
}

type listenerCtx struct {
	gateway        *gatewayCtx
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
}

func (l *listenerCtx) hostname() string {
	if l.spec.Hostname == nil {
		return ""
	}
	return string(*l.spec.Hostname)
}

// irName is the IR (and default xDS) name of the listener: <ns>/<gateway>/<listener>.
func (l *listenerCtx) irName() string {
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

func (t Translator) processGateway(gw *gwapiv1.Gateway, ix *index, permitted permitFunc, out *Output) *gatewayCtx {
	g := &gatewayCtx{gw: gw}
	for _, l := range gw.Spec.Listeners {
		lc := &listenerCtx{gateway: g, spec: l, attached: map[string]bool{}}
		switch l.Protocol {
		case gwapiv1.HTTPProtocolType, gwapiv1.HTTPSProtocolType, gwapiv1.TCPProtocolType, gwapiv1.UDPProtocolType, gwapiv1.TLSProtocolType:
		default:
			lc.supportedKinds = []string{}
			lc.conditions = setCondition(lc.conditions, cond("Accepted", "False", "UnsupportedProtocol",
				fmt.Sprintf("Protocol %s is unsupported, must be HTTP, HTTPS, TCP or UDP.", l.Protocol)))
			g.listeners = append(g.listeners, lc)
			continue
		}
		lc.checkKinds()
		switch {
		case l.Protocol == gwapiv1.HTTPSProtocolType:
			lc.checkTLS(ix, permitted)
		case l.Protocol == gwapiv1.TLSProtocolType:
			lc.checkTLSListener(ix, permitted)
		case l.TLS != nil:
			lc.conditions = setCondition(lc.conditions, cond("Programmed", "False", "Invalid",
				fmt.Sprintf("Listener must not have TLS set when protocol is %s.", l.Protocol)))
		}
		g.listeners = append(g.listeners, lc)
	}
	g.checkProtocolConflicts()
	g.checkHostnameConflicts()
	for _, l := range g.listeners {
		l.finishConditions()
	}
	g.checkOverlappingTLS()
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

func protocolFamily(p gwapiv1.ProtocolType) string {
	switch p {
	case gwapiv1.UDPProtocolType:
		return ""
	case gwapiv1.HTTPSProtocolType, gwapiv1.TLSProtocolType:
		return "TLS"
	}
	return string(p)
}

type permitFunc func(fromKind, fromNS, toGroup, toKind, toNS, toName string) bool

// checkProtocolConflicts marks listeners of one port that speak different protocols
// (HTTP and HTTPS cannot share a port): no protocol wins, all are conflicted.
func (g *gatewayCtx) checkProtocolConflicts() {
	byPort := map[gwapiv1.PortNumber][]*listenerCtx{}
	var ports []gwapiv1.PortNumber
	for _, l := range g.listeners {
		if _, ok := byPort[l.spec.Port]; !ok {
			ports = append(ports, l.spec.Port)
		}
		byPort[l.spec.Port] = append(byPort[l.spec.Port], l)
	}
	for _, p := range ports {
		ls := byPort[p]
		// UDP shares a port with anything; HTTPS and TLS are one family.
		protos := map[string]bool{}
		var members []*listenerCtx
		for _, l := range ls {
			if f := protocolFamily(l.spec.Protocol); f != "" {
				protos[f] = true
				members = append(members, l)
			}
		}
		if len(protos) < 2 {
			continue
		}
		ls = members
		names := make([]string, 0, len(ls))
		for _, l := range ls {
			names = append(names, l.irName())
		}
		sort.Strings(names)
		msg := "All listeners for a given port must use a compatible protocol, conflicting listeners: " + strings.Join(names, ", ")
		for _, l := range ls {
			l.conditions = setCondition(l.conditions, cond("Conflicted", "True", "ProtocolConflict", msg))
		}
	}
}

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
		l.conditions = setCondition(l.conditions, cond("ResolvedRefs", "False", "InvalidRouteKinds",
			fmt.Sprintf("%s is not supported, kind must be one of [%s]", k, strings.Join(allowed, " "))))
	}
}

// checkHostnameConflicts marks HTTP listeners that share a port and a hostname.
func (g *gatewayCtx) checkHostnameConflicts() {
	type key struct {
		port int32
		host string
	}
	groups := map[key][]*listenerCtx{}
	for _, l := range g.listeners {
		if hasFailure(l.conditions) || l.spec.Protocol == gwapiv1.TCPProtocolType || l.spec.Protocol == gwapiv1.UDPProtocolType {
			continue
		}
		k := key{int32(l.spec.Port), l.hostname()}
		groups[k] = append(groups[k], l)
	}
	for _, ls := range groups {
		if len(ls) < 2 {
			continue
		}
		names := make([]string, 0, len(ls))
		for _, l := range ls {
			names = append(names, l.irName())
		}
		sort.Strings(names)
		msg := "All listeners for a given port must use a unique hostname, conflicting listeners: " + strings.Join(names, ", ")
		for _, l := range ls {
			l.conditions = setCondition(l.conditions, cond("Conflicted", "True", "HostnameConflict", msg))
		}
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
			l.conditions = setCondition(l.conditions, cond("Accepted", "True", "Accepted", msgListenerAccepted))
			l.conditions = setCondition(l.conditions, cond("Programmed", "True", "Programmed", msgListenerProgrammed))
			return
		case "InvalidCertificateRef":
			// The listener is sound but cannot serve without a certificate: accepted, not programmed.
			l.conditions = setCondition(l.conditions, cond("Accepted", "True", "Accepted", msgListenerAccepted))
			l.conditions = setCondition(l.conditions, cond("Programmed", "False", "Invalid", msgListenerInvalid))
			return
		}
	}
	if len(l.conditions) == 0 {
		l.conditions = []result.Condition{
			cond("Programmed", "True", "Programmed", msgListenerProgrammed),
			cond("Accepted", "True", "Accepted", msgListenerAccepted),
			cond("ResolvedRefs", "True", "ResolvedRefs", msgListenerResolvedRefs),
		}
		return
	}
	if !hasCondition(l.conditions, "Programmed") {
		l.conditions = setCondition(l.conditions, cond("Programmed", "False", "Invalid", msgListenerInvalid))
	}
	if !hasCondition(l.conditions, "ResolvedRefs") {
		l.conditions = setCondition(l.conditions, cond("ResolvedRefs", "True", "ResolvedRefs", msgListenerResolvedRefs))
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
		return ns == l.gateway.gw.Namespace
	}
}

type nsLabels struct{ labels labels.Set }

// finish writes the Gateway's listener statuses.
func (g *gatewayCtx) finish(st *statusBook) {
	s := st.object(resource.Ref{Kind: "Gateway", Namespace: g.gw.Namespace, Name: g.gw.Name})
	for _, l := range g.listeners {
		s.Listeners = append(s.Listeners, result.ListenerStatus{
			Name:           string(l.spec.Name),
			Conditions:     l.conditions,
			AttachedRoutes: int32(len(l.attached)),
		})
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
