package gatewayapi

import (
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	gwapiv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/egharness/egharness/translator/conditions"
	"github.com/egharness/egharness/translator/resource"
	"github.com/egharness/egharness/translator/result"
)

// setCtx is a ListenerSet whose parentRef names a Gateway of ours.
type setCtx struct {
	ls      *gwapiv1.ListenerSet
	allowed bool
}

// attachListenerSets adds the listeners of every ListenerSet the Gateway admits
// (spec.allowedListeners; none by default) after its own, oldest set first.
func (g *gatewayCtx) attachListenerSets(objects *index, permitted permitFunc) {
	for _, ls := range objects.listenerSets {
		ns := ls.Namespace
		if ls.Spec.ParentRef.Namespace != nil {
			ns = string(*ls.Spec.ParentRef.Namespace)
		}
		if ns != g.gw.Namespace || string(ls.Spec.ParentRef.Name) != g.gw.Name {
			continue
		}
		sc := &setCtx{ls: ls, allowed: g.allowsListenerSet(ls, objects)}
		g.sets = append(g.sets, sc)
		if !sc.allowed {
			continue
		}
		for _, l := range ls.Spec.Listeners {
			g.addListener(gwapiv1.Listener{
				Name: l.Name, Hostname: l.Hostname, Port: l.Port, Protocol: l.Protocol,
				TLS: l.TLS, AllowedRoutes: l.AllowedRoutes,
			}, ls, objects, permitted)
		}
	}
}

func (g *gatewayCtx) allowsListenerSet(ls *gwapiv1.ListenerSet, objects *index) bool {
	al := g.gw.Spec.AllowedListeners
	if al == nil || al.Namespaces == nil || al.Namespaces.From == nil {
		return false
	}
	switch *al.Namespaces.From {
	case gwapiv1.NamespacesFromAll:
		return true
	case gwapiv1.NamespacesFromSame:
		return ls.Namespace == g.gw.Namespace
	case gwapiv1.NamespacesFromSelector:
		if al.Namespaces.Selector == nil {
			return false
		}
		sel, err := metav1.LabelSelectorAsSelector(al.Namespaces.Selector)
		if err != nil {
			return false
		}
		n := objects.namespaces[ls.Namespace]
		if n == nil {
			return false // EG looks the Namespace object up; without it nothing matches
		}
		return sel.Matches(labels.Set(n.Labels))
	}
	return false
}

// finishSets writes each ListenerSet's status: its listeners, then Accepted and Programmed
// summed up over them.
func (g *gatewayCtx) finishSets(status *statusBook) {
	for _, sc := range g.sets {
		s := status.object(resource.Ref{Kind: "ListenerSet", Namespace: sc.ls.Namespace, Name: sc.ls.Name})
		if !sc.allowed {
			s.Conditions = []result.Condition{
				conditions.New("Accepted", "False", "NotAllowed",
					fmt.Sprintf("ListenerSet attachment from namespace %s not allowed by Gateway %s/%s", sc.ls.Namespace,
						g.gw.Namespace, g.gw.Name)),
				conditions.New("Programmed", "False", "NotAllowed", "Not Programmed"),
			}
			continue
		}
		allAcc, anyAcc, allProg, anyProg := true, false, true, false
		for _, l := range g.listeners {
			if l.listenerSet != sc.ls {
				continue
			}
			s.Listeners = append(s.Listeners,
				result.ListenerStatus{Name: string(l.spec.Name), Conditions: l.conditions, AttachedRoutes: int32(len(l.attached)),
					SupportedKinds: l.supportedKinds})
			acc, prog := conditions.IsTrue(l.conditions, "Accepted"), conditions.IsTrue(l.conditions, "Programmed")
			allAcc, anyAcc = allAcc && acc, anyAcc || acc
			allProg, anyProg = allProg && prog, anyProg || prog
		}
		s.Conditions = []result.Condition{setAccepted.of(allAcc, anyAcc), setProgrammed.of(allProg, anyProg)}
		// Only an accepted ListenerSet counts as attached to its Gateway.
		if anyAcc {
			gs := status.object(resource.Ref{Kind: "Gateway", Namespace: g.gw.Namespace, Name: g.gw.Name})
			if gs.AttachedListenerSets == nil {
				gs.AttachedListenerSets = new(int32(0))
			}
			*gs.AttachedListenerSets++
		}
	}
}

// listenersOutcome is a ListenerSet condition of one type as it reads when all, some or
// none of the set's listeners have that type True.
type listenersOutcome struct{ all, some, none result.Condition }

var (
	setAccepted = listenersOutcome{
		all:  conditions.New("Accepted", "True", "Accepted", "All listeners are accepted"),
		some: conditions.New("Accepted", "True", "ListenersNotValid", "Some listeners are invalid"),
		none: conditions.New("Accepted", "False", "ListenersNotValid", "No listeners are accepted"),
	}
	setProgrammed = listenersOutcome{
		all:  conditions.New("Programmed", "True", "Programmed", "All listeners are programmed"),
		some: conditions.New("Programmed", "True", "Programmed", "Some listeners are not programmed"),
		none: conditions.New("Programmed", "False", "ListenersNotValid", "No listeners are programmed"),
	}
)

// of picks the condition for whether all and whether any listeners have the type True.
func (o listenersOutcome) of(all, some bool) result.Condition {
	switch {
	case all:
		return o.all
	case some:
		return o.some
	}
	return o.none
}

// findListenerSet returns the attached ListenerSet ns/name and its Gateway.
func (translation *routeTranslator) findListenerSet(ns, name string) (*gatewayCtx, *gwapiv1.ListenerSet) {
	for _, g := range translation.gateways {
		for _, sc := range g.sets {
			if sc.allowed && sc.ls.Namespace == ns && sc.ls.Name == name {
				return g, sc.ls
			}
		}
	}
	return nil, nil
}
