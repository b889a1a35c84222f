package upgrade

import (
	"bufio"
	_ "embed"
	"encoding/json"
	"fmt"
	"html/template"
	"io"
	"strings"

	"github.com/egharness/egharness/internal/parallel"
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
