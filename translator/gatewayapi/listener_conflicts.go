package gatewayapi

import (
	"fmt"
	"sort"
	"strings"

	gwapiv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/egharness/egharness/translator/conditions"
	"github.com/egharness/egharness/translator/result"
)

// Conflicts between a Gateway's listeners, as EG v1.9 finds them: the same port with
// incompatible protocols, HTTP listeners with the same port and hostname, a second TCP or
// UDP listener on a port, and listeners merged across Gateways (mergeGateways) that
// collide.

// checkMergedListenerTuples: when Gateways merge into one proxy, EG v1.9 wants each
// (protocol, hostname, port) once across all of them; a later Gateway's listener that repeats
// one is Conflicted (HostnameConflict) and not programmed (EG's testdata:
// merge-invalid-multiple-gateways). Listeners already invalid on their own do not count.
func checkMergedListenerTuples(gateways []*gatewayCtx) {
	seen := map[string]bool{}
	for _, g := range gateways {
		for _, l := range g.listeners {
			if specInvalid(l.conditions) {
				continue
			}
			key := fmt.Sprintf("%s:%s:%d", l.spec.Protocol, l.hostname(), l.spec.Port)
			if seen[key] {
				l.conditions = conditions.Set(l.conditions, conditions.New("Conflicted", "True", "HostnameConflict",
					"Port, protocol and hostname tuple must be unique for every listener"))
			}
			seen[key] = true
		}
	}
}

// checkL4Conflicts: a port carries one TCP (or one UDP) listener; every later one is
// Conflicted. Listeners already conflicted for another reason still count.
func (g *gatewayCtx) checkL4Conflicts(proto gwapiv1.ProtocolType) {
	seen := map[gwapiv1.PortNumber]bool{}
	for _, l := range g.listeners {
		if l.spec.Protocol != proto || specInvalid(l.conditions) {
			continue
		}
		if seen[l.spec.Port] {
			l.conditions = conditions.Set(l.conditions, conditions.New("Conflicted", "True", "ProtocolConflict",
				fmt.Sprintf("Only one %s listener is allowed in a given port", proto)))
		}
		seen[l.spec.Port] = true
	}
}

// specInvalid: the listener failed its own validation (not merely a conflict).
func specInvalid(cs []result.Condition) bool {
	for _, c := range cs {
		if c.Status == "False" && c.Reason != "ProtocolConflict" && c.Reason != "HostnameConflict" && c.Type != "Conflicted" {
			return true
		}
	}
	return false
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

// checkProtocolConflicts marks listeners of one port that speak incompatible protocols
// (UDP shares a port with anything; HTTPS and TLS are one family). Gateway listeners that
// disagree among themselves leave no winner; otherwise the Gateway's protocol wins over
// ListenerSet listeners, and without Gateway listeners the first one met wins, except that
// a ListenerSet mixing protocols on the port loses all its listeners there.
func (g *gatewayCtx) checkProtocolConflicts() {
	byPort := map[gwapiv1.PortNumber][]*listenerCtx{}
	var ports []gwapiv1.PortNumber
	for _, l := range g.listeners {
		if protocolFamily(l.spec.Protocol) == "" || hasFailure(l.conditions) {
			continue
		}
		if _, ok := byPort[l.spec.Port]; !ok {
			ports = append(ports, l.spec.Port)
		}
		byPort[l.spec.Port] = append(byPort[l.spec.Port], l)
	}
	for _, p := range ports {
		ls := byPort[p]
		all, gatewayOwn := map[string]bool{}, map[string]bool{}
		perSet := map[*gwapiv1.ListenerSet]map[string]bool{}
		for _, l := range ls {
			f := protocolFamily(l.spec.Protocol)
			all[f] = true
			if l.listenerSet == nil {
				gatewayOwn[f] = true
				continue
			}
			if perSet[l.listenerSet] == nil {
				perSet[l.listenerSet] = map[string]bool{}
			}
			perSet[l.listenerSet][f] = true
		}
		if len(all) < 2 {
			continue
		}
		msg := conflictMessage("use a compatible protocol", ls)
		if len(gatewayOwn) > 1 {
			for _, l := range ls {
				l.setConflicted("ProtocolConflict", msg)
			}
			continue
		}
		winner := ""
		for f := range gatewayOwn {
			winner = f
		}
		for _, l := range ls {
			f := protocolFamily(l.spec.Protocol)
			if l.listenerSet != nil && len(gatewayOwn) == 0 && len(perSet[l.listenerSet]) > 1 {
				l.setConflicted("ProtocolConflict", msg)
				continue
			}
			switch {
			case winner == "":
				winner = f
			case f != winner:
				l.setConflicted("ProtocolConflict", msg)
			}
		}
	}
}

// conflictMessage is the message of listeners on one port that conflict because they do not
// all <rule>: the rule, then the listeners' names in sorted order.
func conflictMessage(rule string, ls []*listenerCtx) string {
	names := make([]string, 0, len(ls))
	for _, l := range ls {
		names = append(names, l.displayName())
	}
	sort.Strings(names)
	return "All listeners for a given port must " + rule + ", conflicting listeners: " + strings.Join(names, ", ")
}

// checkHostnameConflicts marks HTTP listeners that share a port and a hostname.
func (g *gatewayCtx) checkHostnameConflicts() {
	type key struct {
		port int32
		host string
	}
	groups := map[key][]*listenerCtx{}
	var order []key
	for _, l := range g.listeners {
		if hasFailure(l.conditions) || l.spec.Protocol == gwapiv1.TCPProtocolType ||
			l.spec.Protocol == gwapiv1.UDPProtocolType {
			continue
		}
		k := key{int32(l.spec.Port), l.hostname()}
		if _, ok := groups[k]; !ok {
			order = append(order, k)
		}
		groups[k] = append(groups[k], l)
	}
	for _, k := range order {
		ls := groups[k]
		if len(ls) < 2 {
			continue
		}
		msg := conflictMessage("use a unique hostname", ls)
		winner := hostnameWinner(ls)
		for _, l := range ls {
			if winner != nil && l == winner {
				continue
			}
			if winner != nil {
				l.conflictLoser = true
			}
			l.setConflicted("HostnameConflict", msg)
		}
	}
}

// hostnameWinner decides a hostname conflict as EG does: one Gateway listener beats
// ListenerSet listeners; two Gateway listeners, or two listeners of one ListenerSet, leave
// no winner (all are conflicted), and neither do ListenerSet listeners when one set repeats
// the hostname; otherwise the first ListenerSet (by age, then name) wins.
func hostnameWinner(ls []*listenerCtx) *listenerCtx {
	gatewayOwned := 0
	perSet := map[*gwapiv1.ListenerSet]int{}
	for _, l := range ls {
		if l.listenerSet == nil {
			gatewayOwned++
		} else {
			perSet[l.listenerSet]++
		}
	}
	if gatewayOwned > 1 {
		return nil
	}
	setDup := false // one ListenerSet repeats the hostname: no ListenerSet listener may win
	for _, n := range perSet {
		setDup = setDup || n > 1
	}
	var winner *listenerCtx
	for _, l := range ls {
		if l.listenerSet != nil && setDup {
			continue
		}
		if winner == nil || (winner.listenerSet != nil && l.listenerSet == nil) {
			winner = l
		}
	}
	return winner
}

// setConflicted marks a conflict; a ListenerSet listener is then also neither accepted nor
// programmed (Gateway API asks this of ListenerSet listeners).
func (l *listenerCtx) setConflicted(reason, msg string) {
	l.conditions = conditions.Set(l.conditions, conditions.New("Conflicted", "True", reason, msg))
	if l.listenerSet != nil {
		l.conditions = conditions.Set(l.conditions, conditions.New("Accepted", "False", reason, msg))
		l.conditions = conditions.Set(l.conditions, conditions.New("Programmed", "False", reason, msg))
	}
}
