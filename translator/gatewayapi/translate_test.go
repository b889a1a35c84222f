package gatewayapi

import (
	"strings"
	"testing"

	"github.com/egharness/egharness/internal/testutil"
	"github.com/egharness/egharness/translator/resource"
	"github.com/egharness/egharness/translator/result"
)

const portObjects = testutil.GatewayAndApp + `---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: app, namespace: default}
spec:
  parentRefs: PARENTS
  hostnames: [app.example.com]
  rules:
  - backendRefs: [{name: app, port: 8080}]
`

func translateYAML(t *testing.T, text string) Output {
	t.Helper()
	objs, p := testutil.DecodeV19(t, "in.yaml", text)
	return Translator{Profile: p}.Translate(objs)
}

func routeParents(t *testing.T, out Output) []result.ParentStatus {
	t.Helper()
	for _, s := range out.Statuses {
		if s.Object == (resource.Ref{Kind: "HTTPRoute", Namespace: "default", Name: "app"}) {
			return s.Parents
		}
	}
	t.Fatal("no status for HTTPRoute/default/app")
	return nil
}

func accepted(ps result.ParentStatus) string {
	for _, c := range ps.Conditions {
		if c.Type == "Accepted" {
			return c.Status + "/" + c.Reason
		}
	}
	return "none"
}

func TestParentRefPort(t *testing.T) {
	tests := []struct {
		parents  string
		want     string // Accepted status/reason of the single parent entry
		attached int32
	}{
		{"[{name: eg, port: 80}]", "True/Accepted", 1},
		{"[{name: eg, port: 9999}]", "False/NoMatchingParent", 0},
		{"[{name: eg, sectionName: http, port: 80}]", "True/Accepted", 1},
		{"[{name: eg, sectionName: nope}]", "False/NoMatchingParent", 0},
	}
	for _, tt := range tests {
		out := translateYAML(t, strings.Replace(portObjects, "PARENTS", tt.parents, 1))
		ps := routeParents(t, out)
		if len(ps) != 1 || accepted(ps[0]) != tt.want {
			t.Errorf("parentRefs %s: parents %+v, want one entry with Accepted %s", tt.parents, ps, tt.want)
		}
		var gw *result.ObjectStatus
		for i := range out.Statuses {
			if out.Statuses[i].Object.Kind == "Gateway" {
				gw = &out.Statuses[i]
			}
		}
		if gw == nil || len(gw.Listeners) != 1 || gw.Listeners[0].AttachedRoutes != tt.attached {
			t.Errorf("parentRefs %s: Gateway status %+v, want %d attached", tt.parents, gw, tt.attached)
		}
	}
}

// Two parentRefs that differ only by port are two entries of status.parents (Gateway API
// keys them by the whole ParentReference, port included); here they share one entry and
// the second one's conditions overwrite the first's.
func TestParentRefsDifferingByPort(t *testing.T) {
	out := translateYAML(t, strings.Replace(portObjects, "PARENTS", "[{name: eg, port: 80}, {name: eg, port: 9999}]", 1))
	ps := routeParents(t, out)
	if len(ps) != 2 {
		t.Fatalf("parents %+v, want two entries", ps)
	}
	got := accepted(ps[0]) + " " + accepted(ps[1])
	if got != "True/Accepted False/NoMatchingParent" {
		t.Errorf("Accepted of the two entries: %s", got)
	}
}
