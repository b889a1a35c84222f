package upgrade

import (
	"bytes"
	"encoding/json"
	"fmt"
	"html/template"
	"io"
	"strings"

	"github.com/pmezard/go-difflib/difflib"
	"google.golang.org/protobuf/proto"
	"sigs.k8s.io/yaml"

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
	return fmt.Sprintf("upgrade %s → %s: %s, %s, %s", r.From, r.To, plural(n[Breaking], "breaking"), plural(n[Warning], "warning"), plural(n[Info], "info"))
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

// mdCell escapes a table cell: pipes, line breaks, and HTML (GitHub renders it).
func mdCell(s string) string {
	s = strings.NewReplacer("\\", "\\\\", "|", "\\|", "\n", " ", "\r", " ", "<", "&lt;", ">", "&gt;", "`", "'").Replace(s)
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
		b.WriteString("| severity | behavior | object | finding | before | after |\n|---|---|---|---|---|---|\n")
		for _, f := range r.Findings {
			sev := string(f.Severity)
			if f.Severity == Breaking {
				sev = "**breaking**"
			}
			fmt.Fprintf(&b, "| %s | %s | `%s` | %s | %s | %s |\n", sev, mdCell(f.ID), mdCell(f.Object.String()), mdCell(f.Summary), mdCell(f.Before), mdCell(f.After))
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

// resourceYAML renders one xDS resource of a result as YAML, or "" when it does not exist.
func resourceYAML(res *result.Result, typ, name string) string {
	if res == nil || name == "" {
		return ""
	}
	var m proto.Message
	switch typ {
	case "Listener":
		for _, x := range res.XDS.Listeners {
			if x.GetName() == name {
				m = x
			}
		}
	case "RouteConfiguration":
		for _, x := range res.XDS.Routes {
			if x.GetName() == name {
				m = x
			}
		}
	case "Cluster":
		for _, x := range res.XDS.Clusters {
			if x.GetName() == name {
				m = x
			}
		}
	case "ClusterLoadAssignment":
		for _, x := range res.XDS.Endpoints {
			if x.GetClusterName() == name {
				m = x
			}
		}
	case "Secret":
		for _, x := range res.XDS.Secrets {
			if x.GetName() == name {
				m = x
			}
		}
	}
	if m == nil {
		return ""
	}
	js, err := result.MarshalResource(m)
	if err != nil {
		return ""
	}
	y, err := yaml.JSONToYAML(js)
	if err != nil {
		return ""
	}
	return string(y)
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
					rows = append(rows, diffRow{Left: trim(al[op.I1+i]), Right: trim(bl[op.J1+i]), LeftNo: op.I1 + i + 1, RightNo: op.J1 + i + 1, Op: "equal"})
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
	Title         string
	Before, After string
	Rows          []diffRow
	Same          bool
}

type htmlGroup struct {
	Object   string
	Findings []Finding
	Diffs    []htmlDiff
	Breaking bool
}

func (r *Report) writeHTML(w io.Writer) error {
	var groups []htmlGroup
	for _, g := range r.groups() {
		hg := htmlGroup{Object: g[0].Object.String(), Findings: g}
		seen := map[XDSRef]bool{}
		for _, f := range g {
			if f.Severity == Breaking {
				hg.Breaking = true
			}
			if f.XDS == nil || seen[*f.XDS] {
				continue
			}
			seen[*f.XDS] = true
			var before, after string
			if r.sides[0] != nil {
				before = resourceYAML(r.sides[0].res, f.XDS.Type, f.XDS.Before)
			}
			if r.sides[1] != nil {
				after = resourceYAML(r.sides[1].res, f.XDS.Type, f.XDS.After)
			}
			if before == "" && after == "" {
				continue
			}
			title := f.XDS.Type + " " + orDash(f.XDS.Before)
			if f.XDS.After != f.XDS.Before {
				title += " → " + orDash(f.XDS.After)
			}
			hg.Diffs = append(hg.Diffs, htmlDiff{Title: title, Before: orDash(f.XDS.Before), After: orDash(f.XDS.After),
				Rows: sideBySide(before, after), Same: before == after})
		}
		groups = append(groups, hg)
	}
	var buf bytes.Buffer
	err := pageTemplate.Execute(&buf, struct {
		Title    string
		Headline string
		Report   *Report
		Groups   []htmlGroup
		Notes    []string
	}{"Envoy Gateway upgrade check: " + r.From + " → " + r.To, r.headline(), r, groups, r.Notes})
	if err != nil {
		return err
	}
	_, err = w.Write(buf.Bytes())
	return err
}

// The page carries its own style and nothing else: no script, no external asset.
// html/template escapes every value.
var pageTemplate = template.Must(template.New("page").Parse(`<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>{{.Title}}</title>
<style>
body{font-family:system-ui,-apple-system,Segoe UI,sans-serif;margin:2em;color:#1b1f24;max-width:1400px}
h1{font-size:1.4em}h2{font-size:1.1em;margin-top:2em;border-bottom:1px solid #d0d7de;padding-bottom:.2em}
table{border-collapse:collapse;width:100%;margin:.5em 0}
th,td{border:1px solid #d0d7de;padding:.3em .5em;text-align:left;vertical-align:top;font-size:.9em}
th{background:#f6f8fa}
.breaking{color:#fff;background:#cf222e;font-weight:bold}
.warning{background:#fff8c5}
.info{background:#ddf4ff}
.sev{white-space:nowrap}
code,pre{font-family:ui-monospace,SFMono-Regular,Menlo,monospace;font-size:.85em}
details{margin:.5em 0}
table.diff td{font-family:ui-monospace,SFMono-Regular,Menlo,monospace;font-size:.78em;white-space:pre-wrap;word-break:break-all;width:50%;border:none;padding:0 .4em}
table.diff td.no{width:3em;color:#57606a;text-align:right;user-select:none}
tr.delete td.l,tr.replace td.l{background:#ffebe9}
tr.insert td.r,tr.replace td.r{background:#dafbe1}
tr.gap td{background:#f6f8fa;text-align:center;color:#57606a}
.notes{color:#57606a;font-size:.85em}
</style>
</head>
<body>
<h1>{{.Title}}</h1>
<p>{{.Headline}}</p>
{{if .Notes}}<details class="notes"><summary>{{len .Notes}} note(s) about the input</summary><ul>{{range .Notes}}<li>{{.}}</li>{{end}}</ul></details>{{end}}
{{if not .Groups}}<p>No differences: the objects translate the same way on both sides.</p>{{end}}
{{range .Groups}}
<h2>{{.Object}}</h2>
<table>
<tr><th>severity</th><th>behavior</th><th>finding</th><th>before</th><th>after</th></tr>
{{range .Findings}}<tr><td class="sev {{.Severity}}">{{.Severity}}</td><td>{{.ID}}</td><td>{{.Summary}}</td><td><code>{{.Before}}</code></td><td><code>{{.After}}</code></td></tr>
{{end}}</table>
{{range .Diffs}}<details><summary>xDS {{.Title}}{{if .Same}} (no change in this resource){{end}}</summary>
<table class="diff">
<tr><th colspan="2">before: {{.Before}}</th><th colspan="2">after: {{.After}}</th></tr>
{{range .Rows}}{{if eq .Op "gap"}}<tr class="gap"><td colspan="4">…</td></tr>{{else}}<tr class="{{.Op}}"><td class="no">{{if .LeftNo}}{{.LeftNo}}{{end}}</td><td class="l">{{.Left}}</td><td class="no">{{if .RightNo}}{{.RightNo}}{{end}}</td><td class="r">{{.Right}}</td></tr>{{end}}
{{end}}</table>
</details>
{{end}}{{end}}
</body>
</html>
`))
