package scenario_test

import (
	"strings"
	"testing"
)

// The base scenario has Gateway default/eg (listener http), HTTPRoute default/app (one
// rule, host app.example.com) and Service default/app.
func TestAbsentNames(t *testing.T) {
	root := t.TempDir()
	cases := []struct {
		kind, name string
		ok         bool
	}{
		{"Listener", "default/eg/http", true},
		{"Listener", "default/eg/http-quic", true},
		{"Listener", "tcp-8080", true},
		{"Listener", "default/eg/https", false}, // no such listener in the Gateway
		{"Listener", "default/gw/http", false},  // no such Gateway
		{"Listener", "default-eg-http", false},  // no scheme makes it
		{"RouteConfiguration", "http-80", true},
		{"VirtualHost", "default/eg/http/app_example_com", true},
		{"VirtualHost", "default/eg/htp/app_example_com", false},
		{"Route", "httproute/default/app/rule/0/match/0/app_example_com", true},
		{"Route", "httproute/default/app/rule/1/match/0/app_example_com", false}, // one rule only
		{"Route", "httproute/defualt/app/rule/0/match/0/app_example_com", false}, // namespace typo
		{"Cluster", "httproute/default/app/rule/0", true},
		{"Cluster", "httproute/default/app/rule/0-mirror-1", true},
		{"Cluster", "httproute/default/app/rule/0/backend/1", true},
		{"Cluster", "httproute/default/ap/rule/0", false},
		{"Cluster", "tcproute/default/app/rule/-1", false}, // no TCPRoute app
		{"Cluster", "securitypolicy/default/auth/extauth/0", false},
		{"Cluster", "system_ca_certificates", true},
		{"Secret", "default/app", false}, // a Service, not a Secret
		{"Secret", "gateway/default/eg/default/ca.crt", true},
		{"HTTPFilter", "envoy.filters.http.cors", true},
		{"HTTPFilter", "envoy.filters.http.lua/0", true},
		{"HTTPFilter", "envoy.filters.http.basic_auth/securitypolicy/default/auth", false},
		{"RouteFilter", "envoy.filters.http.cors/extra/part", false},
	}
	for i, c := range cases {
		xds := "  - {kind: " + c.kind + ", name: \"" + c.name + "\", absent: true}\n"
		text := strings.Replace(validScenario, "  xds:\n", "  xds:\n"+xds, 1)
		path := write(t, root, "routing/absent"+string(rune('a'+i))+".yaml", text)
		_, err := loader(t, root).LoadFile(path)
		switch {
		case c.ok && err != nil:
			t.Errorf("absent %s %q refused: %v", c.kind, c.name, err)
		case !c.ok && err == nil:
			t.Errorf("absent %s %q accepted: it fits no name the translator can produce", c.kind, c.name)
		case !c.ok && !strings.Contains(err.Error(), "fits no name the translator can produce"):
			t.Errorf("absent %s %q: error %v", c.kind, c.name, err)
		}
	}
}
