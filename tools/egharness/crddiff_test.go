package main

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestCRDDiff(t *testing.T) {
	code, stdout, msg := execute(t, "", "crd-diff", "--from", "v1.8", "--to", "v1.9", "--kind", "TCPRoute", "-o", "json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, msg)
	}
	var doc struct {
		From, To string
		Changes  []struct{ Kind, Version, Path, What, Before, After string }
	}
	if err := json.Unmarshal([]byte(stdout), &doc); err != nil {
		t.Fatalf("not JSON: %v\n%.300s", err, stdout)
	}
	if !strings.Contains(doc.From, "v1.8.0") || !strings.Contains(doc.To, "v1.9.1") || len(doc.Changes) == 0 {
		t.Fatalf("from %q to %q, %d changes", doc.From, doc.To, len(doc.Changes))
	}
	for _, c := range doc.Changes {
		if !strings.HasPrefix(c.Kind, "TCPRoute.") {
			t.Errorf("--kind TCPRoute let %s through", c.Kind)
		}
	}
	// v1.10-preview is v1.9.1's CRDs with its named additions: the diff is theirs alone.
	code, stdout, _ = execute(t, "", "crd-diff", "--from", "v1.9", "--to", "v1.10-preview")
	for _, want := range []string{"ctp-max-request-header-limit, envoyproxy-lua-config",
		"spec.headers.maxRequestHeaderLimit: field added", "spec.lua: field added",
		`"only one of luaValidation or lua may be set"`, "\n3 change(s)\n"} {
		if code != 0 || !strings.Contains(stdout, want) {
			t.Errorf("v1.9 → v1.10-preview: exit %d, no %q in %q", code, want, stdout)
		}
	}
	for _, bad := range [][]string{
		{"crd-diff", "--from", "v1.8"},
		{"crd-diff", "--from", "v1.8", "--to", "v2"},
		{"crd-diff", "--from", "v1.8", "--to", "v1.9", "-o", "yaml"},
	} {
		if code, _, msg := execute(t, "", bad...); code != exitBad || msg == "" {
			t.Errorf("%v: exit %d (%q), want 2 with a message", bad, code, msg)
		}
	}
}

// A route whose filters cannot be built is that route's problem: translate prints the rest
// and names the route in a warning, instead of failing the whole file.
func TestTranslateLeavesOutOneRoute(t *testing.T) {
	code, stdout, msg := execute(t, "", "translate", "-f", "testdata/route-left-out.yaml", "-o", "json")
	if code != 0 {
		t.Fatalf("exit %d (%s), want the translation", code, msg)
	}
	var out struct {
		Warnings []string `json:"warnings"`
		XDS      struct {
			Routes []struct {
				VirtualHosts []struct {
					Name   string            `json:"name"`
					Routes []json.RawMessage `json:"routes"`
				} `json:"virtualHosts"`
			} `json:"routes"`
		} `json:"xds"`
	}
	if err := json.Unmarshal([]byte(stdout), &out); err != nil {
		t.Fatal(err)
	}
	routes := map[string]int{}
	for _, rc := range out.XDS.Routes {
		for _, vh := range rc.VirtualHosts {
			routes[vh.Name] = len(vh.Routes)
		}
	}
	if routes["default/eg/http/open_example_com"] != 1 || routes["default/eg/http/guarded_example_com"] != 0 {
		t.Errorf("routes per virtual host %v: want the open route kept and the guarded one left out", routes)
	}
	// the route it left out, with the reason
	if len(out.Warnings) != 1 || !strings.Contains(out.Warnings[0], "httproute/default/guarded/rule/0") ||
		!strings.Contains(out.Warnings[0], "jwt provider idp") || !strings.Contains(out.Warnings[0], "left out of the xDS") {
		t.Errorf("warnings %q, want the guarded route named with its provider", out.Warnings)
	}
}
