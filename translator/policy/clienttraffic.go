package policy

import (
	"errors"
	"fmt"
	"sort"
	"strings"

	egv1a1 "github.com/envoyproxy/gateway/api/v1alpha1"
	"k8s.io/apimachinery/pkg/types"
	gwapiv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/egharness/egharness/translator/conditions"
	"github.com/egharness/egharness/translator/gatewayapi"
	"github.com/egharness/egharness/translator/ir"
	"github.com/egharness/egharness/translator/result"
)

// ClientTrafficPolicy attaches to Gateways and ListenerSets only (CTP-01) and layers by
// section alone, without mergeType (CTP-05): a listener (sectionName) policy first, then a
// whole ListenerSet, then a whole Gateway, each taking the listeners no more specific
// policy took (CTP-03).

const wholeGateway = "<gateway>"

type ctpEngine struct {
	w    *world
	pols []*pol[egv1a1.ClientTrafficPolicySpec]
	// objs are what the policies' TLS settings read (CA references).
	objs *ctpObjects
	// claimed scopes (whole Gateway, whole ListenerSet) and sections (listener names,
	// prefixed ns/name/ for ListenerSet listeners), per Gateway.
	scopes   map[types.NamespacedName]map[string]bool
	sections map[types.NamespacedName]map[string]bool
	// merged: every Gateway of the class is one proxy (mergeGateways), so listeners of
	// other Gateways share Envoy ports too.
	merged bool
}

func (e *ctpEngine) claim(m map[types.NamespacedName]map[string]bool, gw types.NamespacedName, k string) {
	if m[gw] == nil {
		m[gw] = map[string]bool{}
	}
	m[gw][k] = true
}

func setPrefix(listenerSet *gwapiv1.ListenerSet) string {
	return listenerSet.Namespace + "/" + listenerSet.Name + "/"
}

// resolveCTP finds the Gateway (and ListenerSet) a target names; nil when it is not
// ours, which EG reports nowhere.
func (e *ctpEngine) resolve(t target) (*gatewayapi.GatewayNode, *gwapiv1.ListenerSet, *resolveErr) {
	namespacedName := types.NamespacedName{Namespace: t.namespace, Name: t.name}
	if t.kind == "ListenerSet" {
		listenerSet := e.w.sets[namespacedName]
		if listenerSet == nil {
			return nil, nil, nil
		}
		g := e.w.gateways[parentOf(listenerSet)]
		if g == nil {
			return nil, nil, nil
		}
		if t.section != nil && !hasSetListener(listenerSet, *t.section) {
			return g, listenerSet,
				&resolveErr{reasonTargetNotFound,
					fmt.Sprintf("ListenerSet %s/%s does not have a listener named %q", listenerSet.Namespace, listenerSet.Name,
						*t.section)}
		}
		return g, listenerSet, nil
	}
	g := e.w.gateways[namespacedName]
	if g == nil {
		return nil, nil, nil
	}
	if t.section != nil {
		found := false
		for _, l := range g.Listeners {
			found = found || l.Name == *t.section
		}
		if !found {
			return g, nil,
				&resolveErr{reasonTargetNotFound,
					fmt.Sprintf("No section name %s found for Gateway %s", *t.section, namespacedName)}
		}
	}
	return g, nil, nil
}

func (e *ctpEngine) ancestor(t target, g *gatewayapi.GatewayNode, listenerSet *gwapiv1.ListenerSet) result.ParentRef {
	if t.kind == "ListenerSet" {
		return setAncestor(types.NamespacedName{Namespace: listenerSet.Namespace, Name: listenerSet.Name}, t.sectionOr())
	}
	return gatewayAncestor(types.NamespacedName{Namespace: g.Object.Namespace, Name: g.Object.Name}, t.sectionOr())
}

func (e *ctpEngine) run() {
	e.scopes = map[types.NamespacedName]map[string]bool{}
	e.sections = map[types.NamespacedName]map[string]bool{}
	for _, p := range e.pols {
		for _, t := range fromRefs(p.refs, p.meta.GetNamespace()) {
			if t.section != nil {
				p.handled = true
				e.forSection(p, t)
			}
		}
	}
	targets := make([][]target, len(e.pols))
	for i, p := range e.pols {
		targets[i] = e.w.resolve("ClientTrafficPolicy", p.refs, p.meta.GetNamespace(), e.w.gatewayCands, e.w.setCands)
	}
	// Whole ListenerSets before whole Gateways, so the more specific one wins whatever
	// the policies' ages.
	for _, pass := range []string{"ListenerSet", "Gateway"} {
		for i, p := range e.pols {
			for _, t := range targets[i] {
				if t.section == nil && t.kind == pass {
					p.handled = true
					e.forWhole(p, t)
				}
			}
		}
	}
	for _, p := range e.pols {
		p.status.truncate()
	}
}

// resolveAncestor resolves the policy's target t and its ancestor; ok is false when the
// policy goes no further there: the target is not found, or the policy was rejected at anc.
func (e *ctpEngine) resolveAncestor(p *pol[egv1a1.ClientTrafficPolicySpec], t target) (g *gatewayapi.GatewayNode,
	listenerSet *gwapiv1.ListenerSet, anc result.ParentRef, ok bool) {
	g, listenerSet, rerr := e.resolve(t)
	if g == nil {
		return nil, nil, result.ParentRef{}, false
	}
	anc = e.ancestor(t, g, listenerSet)
	if rerr != nil {
		p.status.reject(anc, rerr.reason, rerr.msg)
		return g, listenerSet, anc, false
	}
	return g, listenerSet, anc, true
}

func (e *ctpEngine) forSection(p *pol[egv1a1.ClientTrafficPolicySpec], t target) {
	g, listenerSet, anc, ok := e.resolveAncestor(p, t)
	if !ok {
		return
	}
	gw := types.NamespacedName{Namespace: g.Object.Namespace, Name: g.Object.Name}
	key := *t.section
	if listenerSet != nil {
		key = setPrefix(listenerSet) + key
	}
	if e.sections[gw][key] {
		p.status.reject(anc, reasonConflicted,
			fmt.Sprintf("Unable to target section of %s, another ClientTrafficPolicy has already attached to it", t.name))
		return
	}
	e.claim(e.sections, gw, key)
	var err error
	var http3Off []string
	for _, l := range g.Listeners {
		if listenerSet != nil && !inSet(l, listenerSet) {
			continue
		}
		if l.Name == *t.section {
			if err = e.portOverlap(g, l, ""); err == nil {
				err = e.apply(p, l)
				if noHTTP3(p.spec, l) {
					http3Off = append(http3Off, l.Name)
				}
			}
			break
		}
	}
	if err != nil {
		p.status.reject(anc, reasonInvalid, conditions.ErrorMessage(err))
	}
	p.status.accept(anc)
	p.status.warn(anc, reasonUnsupportedHTTP3, http3OffMessage(http3Off))
	e.warnDeprecated(p, anc)
}

func (e *ctpEngine) forWhole(p *pol[egv1a1.ClientTrafficPolicySpec], t target) {
	g, listenerSet, anc, ok := e.resolveAncestor(p, t)
	if !ok {
		return
	}
	gw := types.NamespacedName{Namespace: g.Object.Namespace, Name: g.Object.Name}
	scopeKey := wholeGateway
	if listenerSet != nil {
		scopeKey = "listenerset/" + listenerSet.Namespace + "/" + listenerSet.Name
	}
	if e.scopes[gw][scopeKey] {
		what := "Gateway " + t.name
		if listenerSet != nil {
			what = "ListenerSet " + t.name
		}
		p.status.reject(anc, reasonConflicted,
			fmt.Sprintf("Unable to target %s, another ClientTrafficPolicy has already attached to it", what))
		return
	}
	var overriding []string
	for s := range e.sections[gw] {
		if listenerSet != nil {
			if strings.HasPrefix(s, setPrefix(listenerSet)) {
				overriding = append(overriding, strings.TrimPrefix(s, setPrefix(listenerSet)))
			}
			continue
		}
		overriding = append(overriding, s[strings.LastIndex(s, "/")+1:])
	}
	if len(overriding) > 0 {
		sort.Strings(overriding)
		p.status.set(anc, conditions.New(condOverridden, "True", reasonOverridden,
			fmt.Sprintf("There are existing ClientTrafficPolicies that are overriding these sections %v", overriding)))
	}
	e.claim(e.scopes, gw, scopeKey)
	var errs, http3Off []string
	for _, l := range g.Listeners {
		if listenerSet != nil && !inSet(l, listenerSet) {
			continue
		}
		key := l.Name
		if l.Set != nil {
			key = setPrefix(l.Set) + l.Name
		}
		if e.sections[gw][key] {
			continue
		}
		prefix := gw.Namespace + "/" + gw.Name
		if listenerSet != nil {
			prefix = gw.Namespace + "/" + gw.Name + "/" + listenerSet.Namespace + "/" + listenerSet.Name + "/"
		}
		if err := e.portOverlap(g, l, prefix); err != nil {
			errs = append(errs, err.Error())
			continue
		}
		if noHTTP3(p.spec, l) {
			http3Off = append(http3Off, l.Name)
		}
		if err := e.apply(p, l); err != nil {
			errs = append(errs, err.Error())
		}
		if listenerSet != nil {
			e.claim(e.sections, gw, key)
		}
	}
	if len(errs) > 0 {
		p.status.reject(anc, reasonInvalid, conditions.Message(strings.Join(errs, "\n")))
	}
	p.status.accept(anc)
	p.status.warn(anc, reasonUnsupportedHTTP3, http3OffMessage(http3Off))
	e.warnDeprecated(p, anc)
}

func inSet(l *gatewayapi.ListenerNode, listenerSet *gwapiv1.ListenerSet) bool {
	return l.Set != nil && l.Set.Namespace == listenerSet.Namespace && l.Set.Name == listenerSet.Name
}

// portOverlap refuses a policy on a plain HTTP listener that shares its Envoy port (and so
// its filter chain) with listeners outside the policy's scope. prefix is the IR name prefix
// of the scope (a whole Gateway or ListenerSet); "" for a single listener.
func (e *ctpEngine) portOverlap(g *gatewayapi.GatewayNode, l *gatewayapi.ListenerNode, prefix string) error {
	if l.HTTP == nil || l.HTTP.TLS != nil {
		return nil
	}
	var same []string
	// Without mergeGateways each Gateway has an IR (and Envoy listeners) of its own; with it
	// one proxy holds every Gateway's, and EG checks them all (EG's testdata:
	// conflicting-policies).
	candidates := g.Listeners
	if e.merged {
		candidates = nil
		for _, og := range e.w.topo.Gateways {
			candidates = append(candidates, og.Listeners...)
		}
	}
	for _, o := range candidates {
		if o == l || o.HTTP == nil || o.HTTP.Port != l.HTTP.Port {
			continue
		}
		if prefix != "" && strings.HasPrefix(o.HTTP.Name, prefix) {
			continue
		}
		same = append(same, o.HTTP.Name)
	}
	if len(same) == 0 {
		return nil
	}
	return fmt.Errorf(
		"ClientTrafficPolicy is being applied to multiple http (non https) listeners (%s) on the "+
			"same port, which is not allowed",
		strings.Join(same, ", "))
}

// apply puts the policy on the listener and resolves its settings in EG's order
// (connection, then on HTTP listeners headers, HTTP/1.1, HTTP/2 and HTTP/3, then TLS),
// collecting every error. When one fails, the listener keeps what resolved before it (the
// header, HTTP/1.1 and TLS settings) but not its connection limits or timeouts, and its
// routes fail closed: HTTP routes answer 500, TCP routes are dropped (EG's behavior).
func (e *ctpEngine) apply(p *pol[egv1a1.ClientTrafficPolicySpec], l *gatewayapi.ListenerNode) error {
	lp := listenerPolicies(l)
	if lp == nil || lp.ClientTraffic != nil {
		return nil
	}
	lp.ClientTraffic = &ir.Applied[egv1a1.ClientTrafficPolicySpec]{Policy: p.ref, Spec: p.spec}
	lp.ClientTrafficSettings = clientTraffic(p.spec)
	s := p.spec
	var errs []error
	fail := func(part string, err error) {
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", part, err))
		}
	}
	conn := clientSocket(s, fail)
	var err error
	h := &ir.ClientHTTP{}
	if l.HTTP != nil {
		h.Headers = clientHeaders(s.Headers)
		if h.Headers != nil {
			h.Headers.MaxRequestHeadersKB, err = maxRequestHeadersKB(p.added)
			fail("Headers", err)
		}
		h.HTTP1, err = clientHTTP1(s.HTTP1, s.Connection, l.HTTP)
		fail("HTTP1", err)
		h.HTTP2, err = clientHTTP2(s.HTTP2)
		fail("HTTP2", err)
		h.HTTP3 = l.HTTP.TLS != nil && s.HTTP3 != nil && !http3Blocked(s)
		h.MatchBackendScheme = s.Scheme != nil && *s.Scheme == egv1a1.SchemeHeaderTransformMatchBackend
		if s.GRPC != nil {
			h.GRPCWebSet, h.GRPCWeb = true, s.GRPC.EnableWeb != nil && *s.GRPC.EnableWeb
		}
	}
	terminates := (l.HTTP != nil && l.HTTP.TLS != nil) || (l.TCP != nil && l.TCP.TLS != nil)
	if terminates && e.objs != nil {
		var tlsErr error
		lp.ClientTLS, tlsErr = e.objs.downstreamTLS(p.ref, p.spec)
		fail("TLS", tlsErr)
	}
	if len(errs) == 0 {
		h.Connection = conn
	}
	if h.HTTP1 != nil || h.HTTP2 != nil || h.HTTP3 || h.MatchBackendScheme || h.GRPCWebSet || h.Headers != nil ||
		h.Connection != nil {
		lp.ClientHTTP = h
	}
	if len(errs) == 0 {
		return nil
	}
	err = errors.Join(errs...)
	lp.ClientTrafficError = err.Error()
	if l.HTTP != nil {
		for _, r := range l.HTTP.Routes {
			r.DirectResponse = &ir.DirectResponse{Status: 500}
		}
	}
	if l.TCP != nil {
		l.TCP.Routes = nil
	}
	return err
}

const reasonUnsupportedHTTP3 = "UnsupportedHTTP3ClientValidation"

// noHTTP3: the policy asks for HTTP/3 on an HTTPS listener but also validates client
// certificates, so the listener gets no HTTP/3.
func noHTTP3(s *egv1a1.ClientTrafficPolicySpec, l *gatewayapi.ListenerNode) bool {
	return l.HTTP != nil && l.HTTP.TLS != nil && http3Blocked(s)
}

// http3OffMessage is EG's warning for the listeners HTTP/3 was left off on.
func http3OffMessage(names []string) string {
	if len(names) == 0 {
		return ""
	}
	target := fmt.Sprintf("listener %q", names[0])
	if len(names) > 1 {
		sorted := append([]string(nil), names...)
		sort.Strings(sorted)
		target = fmt.Sprintf("listeners %v", sorted)
	}
	return "HTTP/3 was disabled for " + target + " because Envoy does not support downstream " +
		"client TLS validation over QUIC"
}

// http3Blocked: Envoy cannot validate client certificates over QUIC, so a policy with
// client validation leaves HTTP/3 off (and says so in a warning).
func http3Blocked(s *egv1a1.ClientTrafficPolicySpec) bool {
	return s.HTTP3 != nil && s.TLS != nil && s.TLS.ClientValidation != nil
}

func (e *ctpEngine) warnDeprecated(p *pol[egv1a1.ClientTrafficPolicySpec], anc result.ParentRef) {
	s := p.spec
	fields := map[string]string{}
	if s.EnableProxyProtocol != nil {
		fields["spec.enableProxyProtocol"] = "spec.proxyProtocol"
	}
	if s.Headers != nil && s.Headers.PreserveXRequestID != nil {
		fields["spec.headers.preserveXRequestID"] = "spec.headers.requestID"
	}
	if p.usesTargetRef {
		fields["spec.targetRef"] = "spec.targetRefs"
	}
	if s.TLS != nil && s.TLS.ClientValidation != nil && s.TLS.ClientValidation.Optional {
		fields["spec.tls.clientValidation.optional"] = "spec.tls.clientValidation.mode"
	}
	p.status.warn(anc, reasonDeprecated, deprecationMessage(fields))
}
