package gatewayapi

import (
	"fmt"

	gwapiv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/egharness/egharness/translator/conditions"
	"github.com/egharness/egharness/translator/ir"
	"github.com/egharness/egharness/translator/resource"
	"github.com/egharness/egharness/translator/result"
)

// checkTLSListener validates a TLS-protocol listener: Passthrough needs no certificate,
// Terminate resolves them as HTTPS does.
func (l *listenerCtx) checkTLSListener(objects *index, permitted permitFunc) {
	t := l.spec.TLS
	if t == nil {
		l.conditions = conditions.Set(l.conditions, conditions.New("Programmed", "False", "Invalid",
			fmt.Sprintf("Listener must have TLS set when protocol is %s.", l.spec.Protocol)))
		return
	}
	if t.Mode == nil || *t.Mode == gwapiv1.TLSModePassthrough {
		if len(t.CertificateRefs) > 0 {
			l.conditions = conditions.Set(l.conditions, conditions.New("Programmed", "False", "Invalid",
				"Listener must not have TLS certificate refs set for TLS mode Passthrough."))
		}
		return
	}
	l.checkTLS(objects, permitted)
}

// buildL4IR makes the IR of a programmed TCP, TLS or UDP listener; false for HTTP(S).
func (l *listenerCtx) buildL4IR() bool {
	port := containerPort(int32(l.spec.Port))
	switch l.spec.Protocol {
	case gwapiv1.TCPProtocolType, gwapiv1.TLSProtocolType:
		l.tcp = &ir.TCPListener{Name: l.irName(), Gateway: l.gateway.gw.Namespace + "/" + l.gateway.gw.Name,
			Address: "0.0.0.0", Port: port, GatewayPort: uint32(l.spec.Port), Protocol: string(l.spec.Protocol)}
		if len(l.certs) > 0 {
			l.tcp.TLS = &ir.TLSConfig{Certificates: l.certs}
		}
		return true
	case gwapiv1.UDPProtocolType:
		l.udp = &ir.UDPListener{Name: l.irName(), Address: "0.0.0.0", Port: port, GatewayPort: uint32(l.spec.Port)}
		return true
	}
	return false
}

// l4Input is what attachment needs of a TCPRoute, TLSRoute or UDPRoute.
type l4Input struct {
	ref        resource.Ref
	parentRefs []gwapiv1.ParentReference
	hostnames  []string // TLSRoute only
	rules      [][]gwapiv1.BackendRef
	// oneRule: TCPRoute and UDPRoute take exactly one rule.
	oneRule bool
}

func (translation *routeTranslator) processTCPRoute(r *gwapiv1.TCPRoute) {
	translation.processL4(l4Input{ref: resource.Ref{Kind: "TCPRoute", Namespace: r.Namespace, Name: r.Name},
		parentRefs: r.Spec.ParentRefs, oneRule: true, rules: l4Rules(r.Spec.Rules)})
}

func (translation *routeTranslator) processUDPRoute(r *gwapiv1.UDPRoute) {
	translation.processL4(l4Input{ref: resource.Ref{Kind: "UDPRoute", Namespace: r.Namespace, Name: r.Name},
		parentRefs: r.Spec.ParentRefs, oneRule: true, rules: l4Rules(r.Spec.Rules)})
}

func (translation *routeTranslator) processTLSRoute(r *gwapiv1.TLSRoute) {
	translation.processL4(l4Input{ref: resource.Ref{Kind: "TLSRoute", Namespace: r.Namespace, Name: r.Name},
		parentRefs: r.Spec.ParentRefs, hostnames: hostnameStrings(r.Spec.Hostnames), rules: l4Rules(r.Spec.Rules)})
}

// l4Rules are the backendRefs of each of a TCPRoute's, UDPRoute's or TLSRoute's rules (the
// three rule types have the same fields).
func l4Rules[R gwapiv1.TCPRouteRule | gwapiv1.UDPRouteRule | gwapiv1.TLSRouteRule](rules []R) [][]gwapiv1.BackendRef {
	var out [][]gwapiv1.BackendRef
	for _, rule := range rules {
		out = append(out, gwapiv1.TCPRouteRule(rule).BackendRefs)
	}
	return out
}

// processL4 attaches a layer-4 route. Its backends form one destination named
// <kind>/<ns>/<name>/rule/-1 (EG's name for a route-wide destination); backends that do not
// resolve are left out of it and reported in ResolvedRefs.
func (translation *routeTranslator) processL4(in l4Input) {
	kindLower := map[string]string{"TCPRoute": "tcproute", "UDPRoute": "udproute", "TLSRoute": "tlsroute"}[in.ref.Kind]
	routeName := fmt.Sprintf("%s/%s/%s", kindLower, in.ref.Namespace, in.ref.Name)
	translation.eachParent(in.ref, in.parentRefs, func(g *gatewayCtx, parentRef gwapiv1.ParentReference,
		parentStatus *result.ParentStatus) {
		if in.oneRule && len(in.rules) != 1 {
			parentStatus.Conditions = conditions.Set(parentStatus.Conditions,
				conditions.New("Accepted", "False", "InvalidRule", "One and only one rule is supported"))
			return
		}
		dest := &ir.Destination{Name: routeName + "/rule/-1"}
		translation.curAncestors = translation.ancestorsOf(in.ref, in.parentRefs)
		var errs refErrors
		k := 0
		for _, refs := range in.rules {
			for _, backendRef := range refs {
				b, err := translation.resolveBackend(in.ref.Kind, in.ref.Namespace, backendRef, dest.Name, k)
				k++
				if err != nil {
					errs.add(err.reason, err.msg)
					continue
				}
				if b.Weight > 0 {
					dest.Settings = append(dest.Settings, b)
				}
			}
		}
		// A dynamic resolver takes a route of its own (dynamic_resolver.go): next to other
		// backendRefs, neither it nor they make a cluster.
		dynamic := false
		refCount := 0
		for _, refs := range in.rules {
			refCount += len(refs)
			dynamic = dynamic || translation.anyDynamicResolver(in.ref.Namespace, refs)
		}
		if dynamic && refCount > 1 {
			errs.add("InvalidBackendRef", msgDynamicResolverMultiple)
			dest.Settings = nil
		}
		selected, allowed := translation.selectListeners(g, parentRef, in.ref)
		accepted := conditions.New("Accepted", "True", "Accepted", msgRouteAccepted)
		switch {
		case len(selected) == 0:
			accepted = conditions.New("Accepted", "False", "NoMatchingParent", msgNoMatchingParent)
		case len(allowed) == 0:
			accepted = conditions.New("Accepted", "False", "NotAllowedByListeners", msgNotAllowed)
		}
		parentStatus.Conditions = conditions.Set(parentStatus.Conditions, accepted)
		if errs.empty() {
			parentStatus.Conditions = conditions.Set(parentStatus.Conditions,
				conditions.New("ResolvedRefs", "True", "ResolvedRefs", msgRouteResolvedRefs))
		} else {
			parentStatus.Conditions = conditions.Set(parentStatus.Conditions, errs.rawCondition("ResolvedRefs"))
		}
		hostsFound := in.ref.Kind != "TLSRoute"
		for _, l := range allowed {
			var snis []string
			if in.ref.Kind == "TLSRoute" {
				hosts := computeHosts(in.hostnames, l)
				if len(hosts) == 0 {
					continue
				}
				hostsFound = true
				if !(len(hosts) == 1 && hosts[0] == "*") {
					snis = hosts
				}
			} else if l.tcp != nil && l.tcp.TLS != nil && l.spec.Hostname != nil {
				// A TCPRoute on a terminating TLS listener is selected by the listener's name.
				snis = []string{string(*l.spec.Hostname)}
			}
			l.attached[in.ref.String()] = true
			if dynamic && in.ref.Kind == "TLSRoute" && l.tcp != nil && l.tcp.TLS != nil {
				parentStatus.Conditions = conditions.Set(parentStatus.Conditions,
					conditions.New("ResolvedRefs", "False", "UnsupportedValue", msgDynamicResolverTerminate))
				continue
			}
			src := ir.Source{Kind: in.ref.Kind, Namespace: in.ref.Namespace, Name: in.ref.Name, Rule: -1}
			switch {
			case l.tcp != nil:
				// A TCPRoute takes a whole listener: the first one wins (TLS-01). TLSRoutes share
				// one by SNI.
				if in.ref.Kind == "TCPRoute" && len(l.tcp.Routes) > 0 {
					continue
				}
				l.tcp.Routes = append(l.tcp.Routes, &ir.TCPRoute{Name: routeName, Source: src, SNIs: snis, Destination: dest})
			case l.udp != nil:
				if l.udp.Route == nil {
					l.udp.Route = &ir.UDPRoute{Name: routeName, Source: src, Destination: dest}
				}
			}
		}
		if !hostsFound && len(allowed) > 0 {
			parentStatus.Conditions = conditions.Set(parentStatus.Conditions,
				conditions.New("Accepted", "False", "NoMatchingListenerHostname",
					fmt.Sprintf(msgNoHostnameFormat, in.ref.Kind)))
		}
	})
}
