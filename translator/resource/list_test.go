package resource

import (
	"strings"
	"testing"
)

// kubectl get -o yaml prints a List; with ExpandLists its items are objects, each with the
// line where it starts, and an item's error names that line.
func TestExpandLists(t *testing.T) {
	data := `apiVersion: v1
kind: List
metadata: {resourceVersion: ""}
items:
- apiVersion: v1
  kind: Service
  metadata: {name: a, namespace: shop}
  spec: {clusterIP: 10.0.0.1}
- apiVersion: apps/v1
  kind: Deployment
  metadata: {name: b, namespace: shop}
---
apiVersion: v1
kind: Service
metadata: {name: c, namespace: shop}
`
	dec, err := Decode("dump.yaml", []byte(data), Options{ExpandLists: true, SkipUnknownKinds: true})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, o := range dec.Objects {
		got = append(got, o.Where()+" "+o.Ref().String())
	}
	if strings.Join(got, ",") != "dump.yaml:5 Service/shop/a,dump.yaml:13 Service/shop/c" {
		t.Errorf("objects: %v", got)
	}
	if len(dec.Notes) != 1 || !strings.HasPrefix(dec.Notes[0], "dump.yaml:9: skipped Deployment shop/b") {
		t.Errorf("notes: %v", dec.Notes)
	}
	// Without the option a List stays one skipped document.
	dec, _ = Decode("dump.yaml", []byte(data), Options{SkipUnknownKinds: true})
	if len(dec.Objects) != 1 || len(dec.Notes) != 1 || !strings.Contains(dec.Notes[0], "skipped List") {
		t.Errorf("without ExpandLists: %v %v", dec.Objects, dec.Notes)
	}
	bad := "apiVersion: v1\nkind: List\nitems:\n- apiVersion: v1\n  kind: Service\n  metadata: {name: a}\n  spec: {clusterIP: 7}\n"
	_, err = Decode("dump.yaml", []byte(bad), Options{ExpandLists: true})
	if err == nil || !strings.HasPrefix(err.Error(), "dump.yaml:7: Service a: ") {
		t.Errorf("an item's error: %v", err)
	}
}
