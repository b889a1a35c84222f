package gatewayapi

import (
	"sort"
	"strings"

	gwapiv1 "sigs.k8s.io/gateway-api/apis/v1"
)

// A route's hostnames on a listener: the intersection EG computes.

func hostnameStrings(hs []gwapiv1.Hostname) []string {
	out := make([]string, 0, len(hs))
	for _, h := range hs {
		out = append(out, string(h))
	}
	return out
}

// computeHosts intersects the route's hostnames with the listener's (RT-03). A route
// hostname that is exactly another listener's hostname on the same port is left to that
// listener. The result is sorted.
func computeHosts(routeHosts []string, l *listenerCtx) []string {
	lh := l.hostname()
	if len(routeHosts) == 0 {
		if lh != "" {
			return []string{lh}
		}
		return []string{"*"}
	}
	set := map[string]bool{}
	for _, rh := range routeHosts {
		switch {
		case lh == "" || lh == rh:
			set[rh] = true
		case strings.HasPrefix(lh, "*") && strings.HasPrefix(rh, "*"):
			if wildcardCovers(rh, lh) {
				set[lh] = true
			}
			if wildcardCovers(lh, rh) {
				set[rh] = true
			}
		case strings.HasPrefix(lh, "*"):
			if wildcardCovers(lh, rh) {
				set[rh] = true
			}
		case strings.HasPrefix(rh, "*"):
			if wildcardCovers(rh, lh) {
				set[lh] = true
			}
		}
	}
	for _, other := range l.gateway.listeners {
		if other == l || other.conflictLoser || other.spec.Port != l.spec.Port || other.spec.Hostname == nil {
			continue
		}
		delete(set, other.hostname())
	}
	out := make([]string, 0, len(set))
	for h := range set {
		out = append(out, h)
	}
	sort.Strings(out)
	return out
}

// wildcardCovers reports whether the wildcard pattern (e.g. *.example.com) matches host,
// itself possibly a wildcard. At least one label must stand in for the "*":
// *.example.com matches a.example.com and a.b.example.com, never example.com.
func wildcardCovers(pattern, host string) bool {
	suffix := strings.TrimPrefix(pattern, "*")
	h := strings.TrimPrefix(host, "*")
	if !strings.HasSuffix(h, suffix) {
		return false
	}
	return len(strings.TrimSuffix(h, suffix)) > 0
}
