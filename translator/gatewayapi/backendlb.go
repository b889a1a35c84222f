package gatewayapi

import (
	"fmt"
	"sort"
	"strings"

	"k8s.io/apimachinery/pkg/types"

	"github.com/egharness/egharness/translator/apis/backendlb"
	"github.com/egharness/egharness/translator/conditions"
	"github.com/egharness/egharness/translator/ir"
	"github.com/egharness/egharness/translator/resource"
)

// BackendLBPolicy as seed 002 describes it (BLP-01 … BLP-07). The winner for each Service
// is decided before routes are translated; routes then copy it onto their backends.

// lbPrecedes orders policies: older first, then name, then namespace (BLP-06).
func lbPrecedes(a, b *backendlb.BackendLBPolicy) bool {
	ta, tb := a.CreationTimestamp.Time, b.CreationTimestamp.Time
	if !ta.Equal(tb) {
		return ta.Before(tb)
	}
	if a.Name != b.Name {
		return a.Name < b.Name
	}
	return a.Namespace < b.Namespace
}

// resolveBackendLB validates every policy, picks one winner per Service and writes the
// policies' conditions. Policies are never merged: the winner's features are all a Service
// gets.
func resolveBackendLB(objects *index, status *statusBook) {
	policies := append([]*backendlb.BackendLBPolicy(nil), objects.lbPolicies...)
	sort.SliceStable(policies, func(i, j int) bool { return lbPrecedes(policies[i], policies[j]) })
	objects.lbWinners = map[types.NamespacedName]*ir.BackendLB{}
	owner := map[types.NamespacedName]*backendlb.BackendLBPolicy{}
	for _, p := range policies {
		obj := status.object(resource.Ref{Kind: "BackendLBPolicy", Namespace: p.Namespace, Name: p.Name})
		resolved, problems := lbFeatures(p)
		if len(problems) > 0 {
			msg := strings.Join(problems, "; ") + "."
			obj.Conditions = conditions.Set(obj.Conditions, conditions.New("Accepted", "False", "Invalid", msg))
			obj.Conditions = conditions.Set(obj.Conditions, conditions.New("Invalid", "True", "Invalid", msg))
			continue
		}
		if resolved == nil {
			// BLP-05: nothing to apply, and nothing to take precedence with.
			obj.Conditions = conditions.Set(obj.Conditions,
				conditions.New("Accepted", "True", "Accepted", "Policy has been accepted; it sets no feature and has no effect."))
			continue
		}
		var missing, lost []string
		applied := 0
		for _, t := range p.Spec.TargetRefs {
			key := types.NamespacedName{Namespace: p.Namespace, Name: string(t.Name)}
			if objects.services[key] == nil {
				missing = append(missing, fmt.Sprintf("Service %s does not exist", key))
				continue
			}
			if w := owner[key]; w != nil {
				if w != p {
					lost = append(lost,
						fmt.Sprintf("Service %s is configured by BackendLBPolicy %s/%s, which takes precedence", key, w.Namespace,
							w.Name))
				}
				continue
			}
			owner[key] = p
			objects.lbWinners[key] = resolved
			applied++
		}
		switch {
		case applied > 0:
			obj.Conditions = conditions.Set(obj.Conditions,
				conditions.New("Accepted", "True", "Accepted", "Policy has been accepted."))
		case len(lost) > 0:
			obj.Conditions = conditions.Set(obj.Conditions,
				conditions.New("Accepted", "False", "Conflicted", strings.Join(lost, "; ")+"."))
		default:
			obj.Conditions = conditions.Set(obj.Conditions,
				conditions.New("Accepted", "False", "TargetNotFound", strings.Join(missing, "; ")+"."))
		}
		if len(lost) > 0 {
			obj.Conditions = conditions.Set(obj.Conditions,
				conditions.New("Conflicted", "True", "Conflicted", strings.Join(lost, "; ")+"."))
		}
		if len(missing) > 0 {
			obj.Conditions = conditions.Set(obj.Conditions,
				conditions.New("TargetNotFound", "True", "TargetNotFound", strings.Join(missing, "; ")+"."))
		}
	}
}

// lbFeatures checks a policy and returns what it resolves to (nil for an empty policy), or
// the problems that make it Invalid.
func lbFeatures(p *backendlb.BackendLBPolicy) (*ir.BackendLB, []string) {
	var problems []string
	bad := func(format string, args ...any) { problems = append(problems, fmt.Sprintf(format, args...)) }
	if len(p.Spec.TargetRefs) == 0 {
		bad("targetRefs must name at least one Service")
	}
	for i, t := range p.Spec.TargetRefs {
		if t.Group != "" || t.Kind != "Service" {
			bad("targetRefs[%d]: only Services (group \"\", kind Service) can be targeted, not %s/%s", i, t.Group, t.Kind)
		}
	}
	out := &ir.BackendLB{Policy: p.Namespace + "/" + p.Name}
	s := p.Spec
	if sp := s.SessionPersistence; sp != nil {
		res := &ir.SessionPersistence{CookieName: sp.SessionName}
		if sp.Type != "" && sp.Type != "Cookie" {
			bad("session_persistence.type %q is not supported, only Cookie", sp.Type)
		}
		if sp.Cookie != nil {
			switch sp.Cookie.LifetimeType {
			case "", "Session":
			case "Permanent":
				res.Permanent = true
			default:
				bad("session_persistence.cookie.lifetimeType must be Session or Permanent, not %q", sp.Cookie.LifetimeType)
			}
		}
		if sp.AbsoluteTimeout != nil {
			res.AbsoluteTimeout = string(*sp.AbsoluteTimeout)
		}
		if sp.IdleTimeout != nil {
			res.IdleTimeout = string(*sp.IdleTimeout)
		}
		if res.CookieName == "" {
			// Without a session name the cookie still needs one; Gateway API's default.
			res.CookieName = "session-persistence"
		}
		out.SessionPersistence = res
	}
	if lb := s.LoadBalancing; lb != nil {
		res := &ir.LoadBalancing{Type: lb.Type}
		switch lb.Type {
		case "":
			res.Type = "RoundRobin" // the default: weighted round robin
		case "RoundRobin", "LeastRequest", "Random":
			// consistentHash is ignored for these (BLP-03).
		case "ConsistentHash":
			ch := lb.ConsistentHash
			switch {
			case ch == nil || ch.KeyType == "":
				bad("loadBalancing.consistentHash.keyType is required when type is ConsistentHash")
			case ch.KeyType == "Header" && ch.HeaderName == "":
				bad("loadBalancing.consistentHash.headerName is required when keyType is Header")
			case ch.KeyType == "Header":
				res.HashKey, res.HashHeader = "Header", ch.HeaderName
			case ch.KeyType == "SourceIP" || ch.KeyType == "Hostname":
				res.HashKey = ch.KeyType
			default:
				bad("loadBalancing.consistentHash.keyType must be SourceIP, Header or Hostname, not %q", ch.KeyType)
			}
		default:
			bad("loadBalancing.type must be RoundRobin, ConsistentHash, LeastRequest or Random, not %q", lb.Type)
		}
		out.LoadBalancing = res
	}
	if cb := s.CircuitBreaker; cb != nil && cb.MaxInflightRequests != nil {
		switch n := *cb.MaxInflightRequests; {
		case n < 0:
			bad("circuitBreaker.maxInflightRequests must not be negative")
		case n > 0: // 0 turns it off (BLP-04)
			out.CircuitBreaker = &ir.CircuitBreaker{MaxInflightRequests: uint32(n)}
		}
	}
	if len(problems) > 0 {
		return nil, problems
	}
	// BLP-05: a policy is empty only when it sets none of the three features. A circuit
	// breaker of maxInflightRequests 0 is set (to off): the policy resolves nothing for
	// the cluster, yet it is a real policy that takes precedence by age (seed 002).
	if s.SessionPersistence == nil && s.LoadBalancing == nil && s.CircuitBreaker == nil {
		return nil, nil
	}
	return out, nil
}

// destinationLB is the cluster's policy: that of its first backend that has one.
func destinationLB(d *ir.Destination) *ir.BackendLB {
	for _, s := range d.Settings {
		if s.BackendLB != nil && !s.Invalid {
			return s.BackendLB
		}
	}
	return nil
}
