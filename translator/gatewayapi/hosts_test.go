package gatewayapi

import (
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	gwapiv1 "sigs.k8s.io/gateway-api/apis/v1"
)

type lspec struct {
	name     string
	port     int32
	hostname string // "" for none
}

// gatewayOf builds a gateway context with the listeners; they are returned in order.
func gatewayOf(specs ...lspec) []*listenerCtx {
	g := &gatewayCtx{gw: &gwapiv1.Gateway{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "eg"}}}
	for _, s := range specs {
		l := gwapiv1.Listener{Name: gwapiv1.SectionName(s.name), Port: gwapiv1.PortNumber(s.port),
			Protocol: gwapiv1.HTTPProtocolType}
		if s.hostname != "" {
			h := gwapiv1.Hostname(s.hostname)
			l.Hostname = &h
		}
		g.listeners = append(g.listeners, &listenerCtx{gateway: g, spec: l, attached: map[string]bool{}})
	}
	return g.listeners
}

func TestWildcardCovers(t *testing.T) {
	tests := []struct {
		pattern, host string
		want          bool
	}{
		{"*.example.com", "a.example.com", true},
		{"*.example.com", "a.b.example.com", true},
		{"*.example.com", "example.com", false},
		{"*.example.com", ".example.com", false},
		{"*.example.com", "aexample.com", false},
		{"*.example.com", "a.example.org", false},
		{"*.example.com", "*.a.example.com", true},
		{"*.example.com", "*.example.com", false}, // equal wildcards: the caller handles equality
		{"*.a.example.com", "*.example.com", false},
		{"*.com", "*.example.com", true},
	}
	for _, tt := range tests {
		if got := wildcardCovers(tt.pattern, tt.host); got != tt.want {
			t.Errorf("wildcardCovers(%q, %q) = %t, want %t", tt.pattern, tt.host, got, tt.want)
		}
	}
}

func TestComputeHosts(t *testing.T) {
	tests := []struct {
		name       string
		listener   string // the listener's hostname
		routeHosts []string
		want       string
	}{
		{"no hostnames at all", "", nil, "*"},
		{"route without hostnames takes the listener's", "app.example.com", nil, "app.example.com"},
		{"route without hostnames takes the listener's wildcard", "*.example.com", nil, "*.example.com"},
		{"listener without hostname takes the route's, sorted", "", []string{"b.example.com", "a.example.com", "*.c.com"},
			"*.c.com a.example.com b.example.com"},
		{"equal hostnames", "app.example.com", []string{"app.example.com", "other.example.com"}, "app.example.com"},
		{"wildcard listener keeps the route hosts it covers", "*.example.com",
			[]string{"example.com", "a.example.com", "a.b.example.com", "a.example.org"}, "a.b.example.com a.example.com"},
		{"wildcard route gives the listener's hostname", "app.example.com", []string{"*.example.com"}, "app.example.com"},
		{"wildcard route that does not cover the listener", "example.com", []string{"*.example.com"}, ""},
		{"wildcard / wildcard: route narrower", "*.example.com", []string{"*.a.example.com"}, "*.a.example.com"},
		{"wildcard / wildcard: listener narrower", "*.a.example.com", []string{"*.example.com"}, "*.a.example.com"},
		{"wildcard / wildcard: equal", "*.example.com", []string{"*.example.com"}, "*.example.com"},
		{"wildcard / wildcard: disjoint", "*.example.com", []string{"*.example.org"}, ""},
		{"duplicates collapse", "", []string{"a.com", "a.com"}, "a.com"},
		{"no intersection", "app.example.com", []string{"other.example.com"}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l := gatewayOf(lspec{"http", 80, tt.listener})[0]
			got := computeHosts(tt.routeHosts, l)
			if strings.Join(got, " ") != tt.want {
				t.Errorf("computeHosts(%v, %q) = %q, want %q", tt.routeHosts, tt.listener, got, tt.want)
			}
		})
	}
}

// A route hostname that is exactly another listener's hostname on the same port is left to
// that listener; other ports do not count.
func TestComputeHostsLeavesOtherListenersHostnames(t *testing.T) {
	ls := gatewayOf(
		lspec{"catchall", 80, ""},
		lspec{"app", 80, "app.example.com"},
		lspec{"wild", 80, "*.example.com"},
		lspec{"other-port", 8080, "b.example.com"},
	)
	route := []string{"app.example.com", "b.example.com", "c.example.com"}
	if got := strings.Join(computeHosts(route, ls[0]), " "); got != "b.example.com c.example.com" {
		t.Errorf("catch-all listener hosts = %q, want b.example.com c.example.com", got)
	}
	if got := strings.Join(computeHosts(route, ls[1]), " "); got != "app.example.com" {
		t.Errorf("app listener hosts = %q", got)
	}
	if got := strings.Join(computeHosts(route, ls[2]), " "); got != "b.example.com c.example.com" {
		t.Errorf("wildcard listener hosts = %q, want app.example.com left to its own listener", got)
	}
	if got := strings.Join(computeHosts(route, ls[3]), " "); got != "b.example.com" {
		t.Errorf("other-port listener hosts = %q", got)
	}
}
