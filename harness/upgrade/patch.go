package upgrade

import (
	"fmt"
	"sort"
	"strings"

	egv1a1 "github.com/envoyproxy/gateway/api/v1alpha1"

	"github.com/egharness/egharness/translator/resource"
	"github.com/egharness/egharness/translator/result"
)

// patchOp describes one EnvoyPatchPolicy operation in words: what it addresses and where.
type patchOp struct {
	typ, name, op, path string
}

func (p patchOp) String() string {
	t := p.typ
	if i := strings.LastIndex(t, "."); i >= 0 {
		t = t[i+1:]
	}
	s := strings.TrimSpace(p.op + " " + p.path)
	return fmt.Sprintf("%s on %s %s", s, t, p.name)
}

// opOf reads operation i of an EnvoyPatchPolicy among the input objects.
func (d *differ) opOf(ref resource.Ref, i int) (patchOp, bool) {
	o, ok := d.objects[ref]
	if !ok {
		return patchOp{}, false
	}
	epp, ok := o.Obj.(*egv1a1.EnvoyPatchPolicy)
	if !ok || i < 0 || i >= len(epp.Spec.JSONPatches) {
		return patchOp{}, false
	}
	jp := epp.Spec.JSONPatches[i]
	p := patchOp{typ: string(jp.Type), name: jp.Name, op: string(jp.Operation.Op)}
	switch {
	case jp.Operation.Path != nil:
		p.path = *jp.Operation.Path
	case jp.Operation.JSONPath != nil:
		p.path = *jp.Operation.JSONPath
	}
	return p, true
}

// patches reports every operation that hits before and misses after (and the reverse). The
// ID is that of the xDS rename or move the operation addresses when there is one (NAME-02,
// SP-06, EEP-03, BTP-03, SDS-02, SDS-03...), else what the rules say (EPP-04).
func (d *differ) patches() {
	type key struct {
		ref resource.Ref
		op  int
	}
	after := map[key]result.PatchOutcome{}
	for _, p := range d.after.Patches {
		after[key{p.Policy, p.Operation}] = p
	}
	before := append([]result.PatchOutcome(nil), d.before.Patches...)
	sort.SliceStable(before, func(i, j int) bool {
		if before[i].Policy != before[j].Policy {
			return before[i].Policy.Less(before[j].Policy)
		}
		return before[i].Operation < before[j].Operation
	})
	for _, pb := range before {
		pa, ok := after[key{pb.Policy, pb.Operation}]
		if !ok || d.refused[pb.Policy] {
			continue
		}
		op, known := d.opOf(pb.Policy, pb.Operation)
		what := fmt.Sprintf("operation %d", pb.Operation)
		if known {
			what = fmt.Sprintf("operation %d (%s)", pb.Operation, op)
		}
		if pb.Hit && pa.Hit {
			// It still applies; it is a trap when what its path addressed moved out of the
			// resource (BTP-03: a shared rule leaves route.rateLimits): an add then creates
			// the old place anew and the change reaches nothing it used to.
			if k, moved := d.movedKey(op); known && moved {
				id, sev := classify(d.cat, PatchRetargeted, nil, op.name+" "+op.path)
				if k.id != Unmapped {
					id = k.id
				}
				d.findings = append(d.findings, Finding{ID: id, Object: pb.Policy, Severity: sev, Change: PatchRetargeted,
					Summary: what + " still applies, but what it addressed under " + k.key + " has moved: " +
						"it now changes something else",
					Before: "hit: " + op.String(), After: "hit, elsewhere: " + op.String(), XDS: d.patchXDS(op)})
			}
			continue
		}
		if pb.Hit == pa.Hit {
			continue
		}
		if pb.Hit {
			id, sev := d.patchCause(op, pa.Reason)
			after := "miss"
			if pa.Reason != "" {
				after += ": " + pa.Reason
			}
			d.findings = append(d.findings, Finding{ID: id, Object: pb.Policy, Severity: sev, Change: PatchMissed,
				Summary: what + " hits before and misses after",
				Before:  "hit: " + op.String(), After: after, XDS: d.patchXDS(op)})
			continue
		}
		d.add(PatchHits, pb.Policy, []string{pb.Policy.Kind}, pa.Reason, what+" missed before and hits after",
			"miss: "+pb.Reason, "hit: "+op.String(), d.patchXDS(op))
	}
}

// patchCause finds why an operation stopped hitting: the rename of the resource it names,
// or of a key in its path, or a key that moved out of the resource.
func (d *differ) patchCause(op patchOp, reason string) (string, Severity) {
	if id, ok := d.renames[op.name]; ok && op.name != "" {
		return renameID(id), Breaking
	}
	escaped := strings.ReplaceAll(strings.ReplaceAll(op.path, "~1", "/"), "~0", "~")
	olds := make([]string, 0, len(d.renames))
	for old := range d.renames {
		olds = append(olds, old)
	}
	sort.Strings(olds) // a deterministic pick when several renames appear in one path
	for _, old := range olds {
		if old != "" && strings.Contains(escaped, old) {
			return renameID(d.renames[old]), Breaking
		}
	}
	if k, ok := d.movedKey(op); ok {
		return renameID(k.id), Breaking
	}
	return classify(d.cat, PatchMissed, nil, op.name+" "+op.path+" "+reason, reason)
}

// movedKey is the key (rate_limits...) of a thing that moved out of the resource the
// operation names, when its path goes through it.
func (d *differ) movedKey(op patchOp) (keyID, bool) {
	for _, k := range d.movedKeys[op.name] {
		if strings.Contains(normKey(op.path), normKey(k.key)) {
			return k, true
		}
	}
	return keyID{}, false
}

// renameID is the ID a missed patch gets from the rename it addresses: a name-scheme
// rename is EPP-05's case (patches written for one scheme miss under the other).
func renameID(id string) string {
	if id == "NAME-02" {
		return "EPP-05"
	}
	if id == Unmapped {
		return "EPP-04"
	}
	return id
}

// normKey compares JSON keys in either spelling: rate_limits, rateLimits.
func normKey(s string) string {
	return strings.ToLower(strings.ReplaceAll(s, "_", ""))
}

// patchXDS names the resource an operation addresses, on both sides.
func (d *differ) patchXDS(op patchOp) *XDSRef {
	if op.typ == "" {
		return nil
	}
	t := op.typ
	if i := strings.LastIndex(t, "."); i >= 0 {
		t = t[i+1:]
	}
	after := op.name
	if n, ok := d.resRenamed[t+"\x00"+op.name]; ok {
		after = n
	}
	return &XDSRef{Type: t, Before: op.name, After: after}
}
