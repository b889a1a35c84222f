package gatewayapi

import (
	"github.com/egharness/egharness/translator/resource"
	"github.com/egharness/egharness/translator/result"
)

// statusBook collects statuses per object in the order objects are first touched.
type statusBook struct {
	order []resource.Ref
	byRef map[resource.Ref]*result.ObjectStatus
}

// newStatusBook is sized for n objects: growing a map of 10k statuses step by step costs
// more than the statuses.
func newStatusBook(n int) *statusBook {
	return &statusBook{byRef: make(map[resource.Ref]*result.ObjectStatus, n), order: make([]resource.Ref, 0, n)}
}

func (b *statusBook) object(ref resource.Ref) *result.ObjectStatus {
	if s, ok := b.byRef[ref]; ok {
		return s
	}
	s := &result.ObjectStatus{Object: ref}
	b.byRef[ref] = s
	b.order = append(b.order, ref)
	return s
}

// parent returns the parent entry of ref for p, creating it.
func (b *statusBook) parent(ref resource.Ref, p result.ParentRef) *result.ParentStatus {
	s := b.object(ref)
	for i := range s.Parents {
		if s.Parents[i].Ref == p {
			return &s.Parents[i]
		}
	}
	s.Parents = append(s.Parents, result.ParentStatus{Ref: p})
	return &s.Parents[len(s.Parents)-1]
}

func (b *statusBook) list() []result.ObjectStatus {
	out := make([]result.ObjectStatus, 0, len(b.order))
	for _, r := range b.order {
		out = append(out, *b.byRef[r])
	}
	return out
}
