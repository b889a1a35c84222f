package upgrade

import (
	"bufio"
	_ "embed"
	"encoding/json"
	"fmt"
	"html/template"
	"io"
	"slices"
	"strings"
	"sync"

	"github.com/pmezard/go-difflib/difflib"
	"google.golang.org/protobuf/proto"

	"github.com/egharness/egharness/internal/parallel"
	"github.com/egharness/egharness/internal/yamlout"
	"github.com/egharness/egharness/translator/resource"
	"github.com/egharness/egharness/translator/result"
)

// Formats lists the output formats Write knows.
var Formats = []string{"text", "json", "markdown", "html"}

// Write prints the report in format (text, json, markdown or html).
func (r *Report) Write(w io.Writer, format string) error {
	switch format {
	case "", "text":
		return r.writeText(w)
	case "json":
		return r.writeJSON(w)
	case "markdown", "md":
		return r.writeMarkdown(w)
	case "html":
		return r.writeHTML(w)
	}
	return fmt.Errorf("unknown output format %q (known: %s)", format, strings.Join(Formats, ", "))
}

func (r *Report) writeJSON(w io.Writer) error {
	out := struct {
		From     string    `json:"from"`
		To       string    `json:"to"`
		Findings []Finding `json:"findings"`
	}{r.From, r.To, r.Findings}
	if out.Findings == nil {
		out.Findings = []Finding{}
	}
	b, err := json.Marshal(out)
	if err != nil {
		return err
	}
	_, err = fmt.Fprintln(w, string(b))
	return err
}

// headline is "v1.8 → v1.9: 2 breaking, 1 warning, 0 info".
func (r *Report) headline() string {
	n := r.Count()
	plural := func(k int, s string) string {
		if k == 1 || s == "info" || s == "breaking" {
			return fmt.Sprintf("%d %s", k, s)
		}
		return fmt.Sprintf("%d %ss", k, s)
	}
	return fmt.Sprintf("upgrade %s → %s: %s, %s, %s", r.From, r.To, plural(n[Breaking], "breaking"),
		plural(n[Warning], "warning"), plural(n[Info], "info"))
}

// groups splits the findings by object, in report order.
func (r *Report) groups() [][]Finding {
	var out [][]Finding
	for i, f := range r.Findings {
		if i == 0 || r.Findings[i-1].Object != f.Object {
			out = append(out, nil)
		}
		out[len(out)-1] = append(out[len(out)-1], f)
	}
	return out
}

func objectName(ref resource.Ref) string {
	if ref.Namespace == "" {
		return ref.Kind + " " + ref.Name
	}
	return ref.Kind + " " + ref.Namespace + "/" + ref.Name
}

// refList names objects: "HTTPRoute shop/checkout, Gateway shop/eg".
func refList(refs []resource.Ref) string {
	names := make([]string, len(refs))
	for i, r := range refs {
		names[i] = objectName(r)
	}
	return strings.Join(names, ", ")
}

func (r *Report) writeText(w io.Writer) error {
	var b strings.Builder
	b.WriteString(r.headline() + "\n")
	for _, n := range r.Notes {
		b.WriteString("note: " + n + "\n")
	}
	for _, g := range r.groups() {
		fmt.Fprintf(&b, "\n%s\n", objectName(g[0].Object))
		for _, f := range g {
			fmt.Fprintf(&b, "  %-8s %-9s %s\n", f.Severity, f.ID, f.Summary)
			if len(f.Context) > 0 {
				fmt.Fprintf(&b, "  %-18s affects: %s\n", "", refList(f.Context))
			}
			if f.Before != "" || f.After != "" {
				fmt.Fprintf(&b, "  %-18s before: %s\n", "", orDash(f.Before))
				fmt.Fprintf(&b, "  %-18s after:  %s\n", "", orDash(f.After))
			}
		}
	}
	if len(r.Findings) == 0 {
		b.WriteString("\nNo differences: the objects translate the same way on both sides.\n")
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// mdEscape is mdCell's replacer, built once: a Replacer prepares its tables on first use,
// which per cell was a tenth of a large report's time.
var mdEscape = strings.NewReplacer("\\", "\\\\", "|", "\\|", "\n", " ", "\r", " ", "<", "&lt;", ">", "&gt;", "`", "'")

// mdCell escapes a table cell: pipes, line breaks, and HTML (GitHub renders it).
func mdCell(s string) string {
	s = mdEscape.Replace(s)
	if s == "" {
		return "-"
	}
	return s
}

func (r *Report) writeMarkdown(w io.Writer) error {
	var b strings.Builder
	n := r.Count()
	fmt.Fprintf(&b, "### Envoy Gateway upgrade check: %s → %s\n\n", mdCell(r.From), mdCell(r.To))
	fmt.Fprintf(&b, "**%d breaking**, %d warning(s), %d info.", n[Breaking], n[Warning], n[Info])
	if n[Breaking] > 0 {
		b.WriteString(" Fix the breaking findings before upgrading.")
	}
	b.WriteString("\n\n")
	if len(r.Findings) == 0 {
		b.WriteString("No differences: the objects translate the same way on both sides.\n")
	} else {
		b.WriteString(
			"| severity | behavior | object to change | affects | finding | before | after |\n|---|---|---|---|---|---|---|\n")
		for _, f := range r.Findings {
			sev := string(f.Severity)
			if f.Severity == Breaking {
				sev = "**breaking**"
			}
			fmt.Fprintf(&b, "| %s | %s | `%s` | %s | %s | %s | %s |\n", sev, mdCell(f.ID), mdCell(f.Object.String()),
				mdCell(refList(f.Context)), mdCell(f.Summary), mdCell(f.Before), mdCell(f.After))
		}
	}
	if len(r.Notes) > 0 {
		fmt.Fprintf(&b, "\n<details><summary>%d note(s) about the input</summary>\n\n", len(r.Notes))
		for _, note := range r.Notes {
			b.WriteString("- " + mdCell(note) + "\n")
		}
		b.WriteString("\n</details>\n")
	}
	_, err := io.WriteString(w, b.String())
	return err
}

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

type htmlDiff struct {
	Title, Anchor string
	Before, After string
	Rows          []diffRow
	Omitted       int // rows past diffRows, not shown
	Same          bool
}

// diffRows is how many rows of one side-by-side diff the page shows: a route table that
// changes on every route would otherwise make a page no browser opens.
const diffRows = 120

type htmlGroup struct {
	Kind, Name, Anchor string
	Findings           []htmlFinding
	More               []htmlFinding // past groupRows, folded
	Diffs              []htmlDiff
	Links              []htmlLink // diffs already shown under another object
	Breaking           bool
}

// htmlLink points at a diff shown under another object: the same resource, or (SameAs)
// another resource with the same change.
type htmlLink struct{ Title, Anchor, SameAs string }

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

type htmlFinding struct {
	Finding
	Severity string // in words: Breaking, Warning, Info
	Summary  string // in words (HumanSummary)
	Affects  string
}

// xdsWords names the xDS resource types the way a platform engineer reads them.
var xdsWords = map[string]string{
	"Listener":              "listener",
	"RouteConfiguration":    "route table",
	"Cluster":               "upstream cluster",
	"ClusterLoadAssignment": "upstream endpoints",
	"Secret":                "TLS secret",
}

// diffTitle words the resource a side-by-side diff shows: what it is, and whether it is
// new, gone or renamed on the upgraded side.
func diffTitle(x XDSRef, from, to string, inBefore, inAfter bool) string {
	what := xdsWords[x.Type]
	if what == "" {
		what = x.Type
	}
	switch {
	case !inBefore:
		return fmt.Sprintf("Envoy %s %q: new in %s", what, x.After, to)
	case !inAfter:
		return fmt.Sprintf("Envoy %s %q: not generated in %s", what, x.Before, to)
	case x.Before != x.After:
		return fmt.Sprintf("Envoy %s %q, named %q in %s", what, x.Before, x.After, to)
	}
	return fmt.Sprintf("Envoy %s %q in %s and %s", what, x.Before, from, to)
}

// entityWords are the xDS entity kinds of finding summaries as a platform engineer says
// them, for the HTML page (text and JSON keep the kinds: tools and scenarios match on them).
var entityWords = []struct{ kind, words string }{
	{"PerFilterConfig", "per-route filter config"},
	{"HTTPFilter", "HTTP filter"},
	{"JWTProvider", "JWT provider"},
	{"RateLimit", "rate limit rule"},
	{"LuaScript", "Lua script"},
	{"UpstreamTLS", "upstream TLS of cluster"},
	{"RouteConfiguration", "route table"},
	{"VirtualHost", "virtual host"},
	{"FilterChain", "filter chain"},
	{"Cluster", "upstream cluster"},
	{"Listener", "Envoy listener"},
	{"Secret", "TLS secret"},
}

// HumanSummary words a finding's summary for the HTML page: the xDS entity kind it starts
// with (after "new ") in words.
func HumanSummary(s string) string {
	prefix, rest := "", s
	if r, ok := strings.CutPrefix(s, "new "); ok {
		prefix, rest = "new ", r
	}
	for _, e := range entityWords {
		if r, ok := strings.CutPrefix(rest, e.kind+" "); ok {
			return prefix + e.words + " " + r
		}
	}
	return s
}

func severityWord(s Severity) string {
	switch s {
	case Breaking:
		return "Breaking"
	case Warning:
		return "Warning"
	}
	return "Info"
}

func sideName(name string) string {
	if name == "" {
		return "not generated"
	}
	return name
}

// groupRows is how many findings of one object the page lists before it folds the rest.
const groupRows = 25

func (r *Report) writeHTML(w io.Writer) error {
	var render [2]*resourceRenderer
	for i := range render {
		var res *result.Result
		if r.sides[i] != nil {
			res = r.sides[i].res
		}
		render[i] = newResourceRenderer(res)
	}
	// A part that comes or goes inside a resource that stays (a Lua script in a route
	// table): show that resource on both sides, not as created or deleted.
	pairOf := func(x XDSRef) XDSRef {
		if x.After == "" && render[1].has(x.Type, x.Before) {
			x.After = x.Before
		}
		if x.Before == "" && render[0].has(x.Type, x.After) {
			x.Before = x.After
		}
		return x
	}
	// Every pair of resources the findings point at is rendered and diffed once, first, on
	// every core: rendering large route tables as YAML is most of the page's cost.
	var pairs []XDSRef
	index := map[XDSRef]int{}
	for _, f := range r.Findings {
		if f.XDS == nil {
			continue
		}
		x := pairOf(*f.XDS)
		if _, ok := index[x]; !ok {
			index[x] = len(pairs)
			pairs = append(pairs, x)
			render[0].want(x.Type, x.Before)
			render[1].want(x.Type, x.After)
		}
	}
	diffs := make([]pairDiff, len(pairs))
	parallel.Each(len(pairs), func(i int) { diffs[i] = diffPair(render, pairs[i]) })
	for _, r := range render {
		r.rendered = nil // the YAML is in the diffs now
	}

	// Each pair is shown under the first object whose findings point at it; the other
	// objects link to it.
	shownAt := map[XDSRef]string{}
	type shownDiff struct{ anchor, title string }
	sameChange := map[string]shownDiff{}
	var groups []htmlGroup
	for gi, g := range r.groups() {
		o := g[0].Object
		name := o.Name
		if o.Namespace != "" {
			name = o.Namespace + "/" + o.Name
		}
		hg := htmlGroup{Kind: o.Kind, Name: name, Anchor: fmt.Sprintf("g%d", gi)}
		seen := map[XDSRef]bool{}
		for _, f := range g {
			hg.Findings = append(hg.Findings,
				htmlFinding{Finding: f, Severity: severityWord(f.Severity), Summary: HumanSummary(f.Summary),
					Affects: refList(f.Context)})
			if f.Severity == Breaking {
				hg.Breaking = true
			}
			if f.XDS == nil {
				continue
			}
			x := pairOf(*f.XDS)
			if seen[x] {
				continue
			}
			seen[x] = true
			pd := diffs[index[x]]
			if !pd.before && !pd.after {
				continue
			}
			if !pd.before {
				x.Before = ""
			}
			if !pd.after {
				x.After = ""
			}
			title := diffTitle(x, r.From, r.To, pd.before, pd.after)
			if at, ok := shownAt[x]; ok {
				hg.Links = append(hg.Links, htmlLink{Title: title, Anchor: at})
				continue
			}
			anchor := fmt.Sprintf("d%d", len(shownAt))
			shownAt[x] = anchor
			// The same change in many resources (a TLS version on every upstream cluster)
			// is shown once; the others link to it.
			sig := x.Type + "\x00" + pd.signature
			if first, ok := sameChange[sig]; ok && !pd.same {
				shownAt[x] = first.anchor
				hg.Links = append(hg.Links, htmlLink{Title: title, Anchor: first.anchor, SameAs: first.title})
				continue
			}
			sameChange[sig] = shownDiff{anchor, title}
			hg.Diffs = append(hg.Diffs, htmlDiff{Title: title, Anchor: anchor, Before: sideName(x.Before),
				After: sideName(x.After), Rows: pd.rows, Omitted: pd.omitted, Same: pd.same})
		}
		if len(hg.Findings) > groupRows {
			hg.Findings, hg.More = hg.Findings[:groupRows], hg.Findings[groupRows:]
		}
		groups = append(groups, hg)
	}
	n := r.Count()
	bw := bufio.NewWriter(w)
	err := pageTemplate.Execute(bw, struct {
		Title                   string
		From, To                string
		Breaking, Warning, Info int
		Report                  *Report
		Groups                  []htmlGroup
		Notes                   []string
	}{"Envoy Gateway upgrade check: " + r.From + " → " + r.To, r.From, r.To, n[Breaking], n[Warning], n[Info], r, groups,
		r.Notes})
	if err != nil {
		return err
	}
	return bw.Flush()
}

// pageHTML is the report page's template, kept in its own file so the HTML and its style
// read as HTML rather than as one long Go string.
//
//go:embed page.html
var pageHTML string

// The page carries its own style and nothing else: no script, no external asset.
// html/template escapes every value.
var pageTemplate = template.Must(template.New("page").Funcs(template.FuncMap{
	"rows": func(from, to string, rows []htmlFinding) any {
		return struct {
			From, To string
			Rows     []htmlFinding
		}{from, to, rows}
	},
}).Parse(pageHTML))
