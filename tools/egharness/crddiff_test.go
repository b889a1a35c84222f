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
	code, stdout, _ = execute(t, "", "crd-diff", "--from", "v1.9", "--to", "v1.10-preview")
	if code != 0 || !strings.HasSuffix(stdout, "\n0 change(s)\n") {
		t.Errorf("v1.9 and v1.10-preview share v1.9.1's CRDs: exit %d, %q", code, stdout)
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
