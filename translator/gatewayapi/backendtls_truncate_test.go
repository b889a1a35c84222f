package gatewayapi

import (
	"fmt"
	"testing"

	"github.com/egharness/egharness/translator/conditions"
	"github.com/egharness/egharness/translator/result"
)

// Truncating again (policy backends added ancestors after the routes' were written) leaves
// the Aggregated mark on the last kept ancestor only.
func TestBTLSAncestorsTruncatedTwice(t *testing.T) {
	s := &result.ObjectStatus{}
	add := func(from, to int) {
		for i := from; i < to; i++ {
			s.Parents = append(s.Parents,
				result.ParentStatus{Ref: result.ParentRef{Kind: "Gateway", Namespace: "default", Name: fmt.Sprintf("gw-%02d", i)}})
		}
	}
	add(10, 27)
	truncateBTLSAncestors(s)
	s.Parents = append(s.Parents,
		result.ParentStatus{Ref: result.ParentRef{Kind: "SecurityPolicy", Namespace: "default", Name: "auth"}})
	add(0, 2)
	truncateBTLSAncestors(s)
	if len(s.Parents) != maxBTLSAncestors {
		t.Fatalf("%d ancestors", len(s.Parents))
	}
	for i, p := range s.Parents {
		if got, want := conditions.Has(p.Conditions, "Aggregated"), i == maxBTLSAncestors-1; got != want {
			t.Errorf("ancestor %d (%s): Aggregated %v", i, p.Ref.Name, got)
		}
	}
}
