package upgrade

import (
	"strings"
	"testing"

	routev3 "github.com/envoyproxy/go-control-plane/envoy/config/route/v3"

	"github.com/egharness/egharness/translator/resource"
	"github.com/egharness/egharness/translator/result"
)

func decodeObjects(t *testing.T, y string) []resource.Object {
	t.Helper()
	dec, err := resource.Decode("test.yaml", []byte(y), resource.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return dec.Objects
}

// Admission and status differences get their IDs from the messages; a route that fails
// closed takes the ID of the policy that targets it.
func TestStatusFindings(t *testing.T) {
	objs := decodeObjects(t, `apiVersion: gateway.envoyproxy.io/v1alpha1
kind: EnvoyExtensionPolicy
metadata: {name: lua, namespace: default}
spec:
  targetRefs: [{group: gateway.networking.k8s.io, kind: HTTPRoute, name: app}]
  lua: [{type: Inline, inline: "function envoy_on_request(h) end"}]
`)
	gw := result.ParentRef{Kind: "Gateway", Namespace: "default", Name: "eg"}
	app := resource.Ref{Kind: "HTTPRoute", Namespace: "default", Name: "app"}
	eep := resource.Ref{Kind: "EnvoyExtensionPolicy", Namespace: "default", Name: "lua"}
	btp := resource.Ref{Kind: "BackendTrafficPolicy", Namespace: "default", Name: "base"}
	ctp := resource.Ref{Kind: "ClientTrafficPolicy", Namespace: "default", Name: "ip"}
	accepted := result.Condition{Type: "Accepted", Status: "True", Reason: "Accepted",
		Message: "Policy has been accepted."}
	before := &result.Result{
		Admission: []result.Admission{{Object: btp, Allowed: true}, {Object: ctp, Allowed: true},
			{Object: eep, Allowed: true}, {Object: app, Allowed: true}},
		Statuses: []result.ObjectStatus{
			{Object: app,
				Parents: []result.ParentStatus{{Ref: gw, Conditions: []result.Condition{{Type: "Accepted", Status: "True"}}}}},
			{Object: eep, Parents: []result.ParentStatus{{Ref: gw, Conditions: []result.Condition{accepted}}}},
		},
	}
	after := &result.Result{
		Admission: []result.Admission{
			{Object: btp, Message: "spec: Invalid value: \"object\": mergeType can only be used with xRoute targets"},
			{Object: ctp,
				Message: "spec.clientIPDetection: Invalid value: \"object\": one of xForwardedFor, customHeader " +
					"or directSourceIP must be set"},
			{Object: eep, Allowed: true}, {Object: app, Allowed: true}},
		Statuses: []result.ObjectStatus{
			{Object: app,
				Parents: []result.ParentStatus{{Ref: gw, Conditions: []result.Condition{{Type: "Accepted", Status: "True"},
					{Type: "RouteRulesOverlap", Status: "True", Reason: "RouteRulesOverlap",
						Message: "Overlapping match conditions with route(s): HTTPRoute default/other"}}}}},
			{Object: eep,
				Parents: []result.ParentStatus{
					{Ref: gw, Conditions: []result.Condition{{Type: "Accepted", Status: "False", Reason: "Invalid",
						Message: "Lua: Skipping Lua EnvoyExtensionPolicy as feature is disabled in the Gateway."}}}}},
		},
	}
	// the route forwards before and answers 500 after
	vh := func(action *routev3.Route) *result.XDS {
		return &result.XDS{
			Routes: []*routev3.RouteConfiguration{{Name: "default/eg/http", VirtualHosts: []*routev3.VirtualHost{{
				Name: "default/eg/http/www", Domains: []string{"*"}, Routes: []*routev3.Route{action}}}}}}
	}
	match := &routev3.RouteMatch{PathSpecifier: &routev3.RouteMatch_Prefix{Prefix: "/"}}
	before.XDS = *vh(&routev3.Route{Name: "httproute/default/app/rule/0/match/0/www", Match: match,
		Action: &routev3.Route_Route{
			Route: &routev3.RouteAction{ClusterSpecifier: &routev3.RouteAction_Cluster{Cluster: "c"}}}})
	after.XDS = *vh(&routev3.Route{Name: "httproute/default/app/rule/0/match/0/www", Match: match,
		Action: &routev3.Route_DirectResponse{DirectResponse: &routev3.DirectResponseAction{Status: 500}}})

	rep := Compare("v1.8", "v1.9", before, after, objs)
	want := []struct {
		obj      resource.Ref
		id       string
		sev      Severity
		contains string
	}{
		{btp, "MRG-01", Breaking, "refuses"},
		{ctp, "CTP-04", Breaking, "refuses"},
		{eep, "EEP-02", Breaking, "Accepted turns False on Gateway/default/eg: the policy is no longer in force"},
		{eep, "EEP-02", Breaking, "fails closed"}, // the policy to change; the route is context
		{app, "RT-11", Warning, "new condition RouteRulesOverlap=True"},
	}
	for _, w := range want {
		found := false
		for _, f := range rep.Findings {
			if f.Object == w.obj && f.ID == w.id && f.Severity == w.sev && strings.Contains(f.Summary, w.contains) {
				found = true
			}
		}
		if !found {
			t.Errorf("no %s %s finding on %s containing %q in %+v", w.sev, w.id, w.obj, w.contains, rep.Findings)
		}
	}
	for _, f := range rep.Findings {
		if f.ID == Unmapped {
			t.Errorf("unmapped finding: %+v", f)
		}
		if f.Change == FailClosed && (len(f.Context) == 0 || f.Context[0] != app) {
			t.Errorf("fail-closed finding without its route as context: %+v", f)
		}
	}
}
