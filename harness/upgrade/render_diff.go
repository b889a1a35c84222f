package upgrade

// The side-by-side diffs of the HTML report: the xDS resources the findings point at,
// rendered as YAML once per side and diffed once per pair.

import (
	"slices"
	"strings"
	"sync"

	"github.com/pmezard/go-difflib/difflib"
	"google.golang.org/protobuf/proto"

	"github.com/egharness/egharness/internal/yamlout"
	"github.com/egharness/egharness/translator/result"
)

// resourceRenderer renders the xDS resources of one side as YAML for the page's diffs, each
// at most once: a report's findings point at the same listeners and route tables many
// times. Every pair of resources is diffed once (writeHTML), on every core, and only the
// rows the page shows are kept; the YAML is let go once the diffs are made (the 10k mix's
// route tables are about 100 MB of it per side).
type resourceRenderer struct {
	byKey    map[xdsLoc]proto.Message
	rendered map[xdsLoc]*renderOnce
}

// renderOnce is one resource's YAML, rendered by the first goroutine that asks.
type renderOnce struct {
	once sync.Once
	yaml string
}

func newResourceRenderer(res *result.Result) *resourceRenderer {
	r := &resourceRenderer{byKey: map[xdsLoc]proto.Message{}, rendered: map[xdsLoc]*renderOnce{}}
	if res == nil {
		return r
	}
	// The first of equal names wins, as a scan of the sorted lists would find it.
	add := func(typ, name string, m proto.Message) {
		k := xdsLoc{typ, name}
		if _, ok := r.byKey[k]; !ok {
			r.byKey[k] = m
		}
	}
	for _, x := range res.XDS.Listeners {
		add("Listener", x.GetName(), x)
	}
	for _, x := range res.XDS.Routes {
		add("RouteConfiguration", x.GetName(), x)
	}
	for _, x := range res.XDS.Clusters {
		add("Cluster", x.GetName(), x)
	}
	for _, x := range res.XDS.Endpoints {
		add("ClusterLoadAssignment", x.GetClusterName(), x)
	}
	for _, x := range res.XDS.Secrets {
		add("Secret", x.GetName(), x)
	}
	return r
}

// has reports whether the side has a resource of that type and name.
func (r *resourceRenderer) has(typ, name string) bool {
	return name != "" && r.byKey[xdsLoc{typ, name}] != nil
}

// want makes yaml ready for the resource; it is called before the goroutines that render.
func (r *resourceRenderer) want(typ, name string) {
	k := xdsLoc{typ, name}
	if r.rendered[k] == nil && r.has(typ, name) {
		r.rendered[k] = &renderOnce{}
	}
}

// yaml is the resource of that type and name as YAML, or "" when it does not exist (or
// want was not called for it). Safe on several goroutines.
func (r *resourceRenderer) yaml(typ, name string) string {
	k := xdsLoc{typ, name}
	e := r.rendered[k]
	if e == nil {
		return ""
	}
	e.once.Do(func() { e.yaml = r.render(r.byKey[k]) })
	return e.yaml
}

func (r *resourceRenderer) render(m proto.Message) string {
	js, err := result.MarshalResource(m)
	if err != nil {
		return ""
	}
	// yamlout prints JSONToYAML's bytes (keys in one order every run) without reading the
	// JSON with the YAML parser, which took seconds per large route table
	y, err := yamlout.FromJSON(js)
	if err != nil {
		return ""
	}
	return string(y)
}

// pairDiff is what the page needs of one pair of resources: whether either side rendered,
// the rows it shows (at most diffRows) and what identifies the change among others.
type pairDiff struct {
	before, after bool // the side rendered
	rows          []diffRow
	omitted       int
	same          bool
	signature     string
}

// diffPair renders both sides of x and diffs them, keeping only what the page shows.
func diffPair(render [2]*resourceRenderer, x XDSRef) pairDiff {
	before, after := render[0].yaml(x.Type, x.Before), render[1].yaml(x.Type, x.After)
	d := pairDiff{before: before != "", after: after != ""}
	if !d.before && !d.after {
		return d
	}
	rows := sideBySide(before, after)
	d.same, d.signature = before == after, changeSignature(rows)
	if len(rows) > diffRows {
		rows, d.omitted = rows[:diffRows], len(rows)-diffRows
	}
	d.rows = slices.Clip(rows)
	return d
}

// diffRow is one line of a side-by-side diff.
type diffRow struct {
	Left, Right string
	LeftNo      int
	RightNo     int
	Op          string // equal, delete, insert, replace, gap
}

// sideBySide diffs two texts line by line with three lines of context.
func sideBySide(a, b string) []diffRow {
	// SplitLines would add an empty last line for the final newline.
	al := difflib.SplitLines(strings.TrimSuffix(a, "\n"))
	bl := difflib.SplitLines(strings.TrimSuffix(b, "\n"))
	trim := func(s string) string { return strings.TrimRight(s, "\n") }
	var rows []diffRow
	m := difflib.NewMatcher(al, bl)
	for gi, group := range m.GetGroupedOpCodes(3) {
		if gi > 0 {
			rows = append(rows, diffRow{Op: "gap"})
		}
		for _, op := range group {
			switch op.Tag {
			case 'e':
				for i := 0; i < op.I2-op.I1; i++ {
					rows = append(rows,
						diffRow{Left: trim(al[op.I1+i]), Right: trim(bl[op.J1+i]), LeftNo: op.I1 + i + 1, RightNo: op.J1 + i + 1,
							Op: "equal"})
				}
			default:
				n := max(op.I2-op.I1, op.J2-op.J1)
				for i := 0; i < n; i++ {
					row := diffRow{Op: "replace"}
					if op.I1+i < op.I2 {
						row.Left, row.LeftNo = trim(al[op.I1+i]), op.I1+i+1
					} else {
						row.Op = "insert"
					}
					if op.J1+i < op.J2 {
						row.Right, row.RightNo = trim(bl[op.J1+i]), op.J1+i+1
					} else {
						row.Op = "delete"
					}
					rows = append(rows, row)
				}
			}
		}
	}
	return rows
}

// changeSignature is what a diff changes, without its context lines or line numbers.
func changeSignature(rows []diffRow) string {
	var b strings.Builder
	for _, r := range rows {
		if r.Op == "equal" || r.Op == "gap" {
			continue
		}
		b.WriteString(r.Op)
		b.WriteByte(0)
		b.WriteString(r.Left)
		b.WriteByte(0)
		b.WriteString(r.Right)
		b.WriteByte(0)
	}
	return b.String()
}
