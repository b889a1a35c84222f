package golden

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"

	"github.com/egharness/egharness/translator/result"
)

// SummaryFile is the compact, readable view of a golden folder's xDS (issue #22): a reviewer
// reads its diff first, and the protojson files beside it stay the byte-exact record.
const SummaryFile = "summary.txt"

const summaryHeader = "# What the xDS files beside this one say, one line per thing a reviewer checks:\n" +
	"# listeners (address, filter chains, network and HTTP filters), routes (match -> action),\n" +
	"# clusters (type, load balancer, endpoints) and secrets. Written by `egharness golden --update`\n" +
	"# from the same translation; the *.yaml files are the byte-exact truth.\n"

// node is one protojson resource decoded into plain Go values.
type node = map[string]any

func decodeProto(m proto.Message) (node, error) {
	b, err := protojson.Marshal(m)
	if err != nil {
		return nil, err
	}
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	var n node
	if err := d.Decode(&n); err != nil {
		return nil, err
	}
	return n, nil
}

// decodeAll decodes every message of list. The first error is kept in *err, and once it
// holds one nothing more is decoded, so that a caller decoding several lists checks once.
func decodeAll[T proto.Message](list []T, err *error) []node {
	if *err != nil {
		return nil
	}
	out := make([]node, 0, len(list))
	for _, m := range list {
		n, decodeErr := decodeProto(m)
		if decodeErr != nil {
			*err = decodeErr
			return nil
		}
		out = append(out, n)
	}
	return out
}

// Summary renders the summary of a translation's xDS.
func Summary(res *result.Result) ([]byte, error) {
	var err error
	listeners := decodeAll(res.XDS.Listeners, &err)
	routes := decodeAll(res.XDS.Routes, &err)
	clusters := decodeAll(res.XDS.Clusters, &err)
	endpoints := decodeAll(res.XDS.Endpoints, &err)
	secrets := decodeAll(res.XDS.Secrets, &err)
	if err != nil {
		return nil, err
	}
	var w bytes.Buffer
	w.WriteString(summaryHeader)
	section := func(title string, n int) {
		fmt.Fprintf(&w, "\n%s (%d)\n", title, n)
	}
	section("listeners", len(listeners))
	for _, l := range listeners {
		summarizeListener(&w, l)
	}
	section("routes", len(routes))
	for _, rc := range routes {
		summarizeRouteConfig(&w, rc)
	}
	section("clusters", len(clusters))
	cla := map[string]node{}
	for _, e := range endpoints {
		cla[str(e, "clusterName")] = e
	}
	used := map[string]bool{}
	for _, c := range clusters {
		summarizeCluster(&w, c, cla, used)
	}
	var orphans []string
	for name := range cla {
		if !used[name] {
			orphans = append(orphans, name)
		}
	}
	sort.Strings(orphans)
	for _, name := range orphans {
		fmt.Fprintf(&w, "endpoints %s (no cluster)\n", name)
		summarizeEndpoints(&w, cla[name], "  ")
	}
	section("secrets", len(secrets))
	for _, s := range secrets {
		fmt.Fprintf(&w, "%s: %s\n", str(s, "name"), strings.Join(secretKinds(s), ", "))
	}
	return w.Bytes(), nil
}

func summarizeListener(w *bytes.Buffer, l node) {
	fmt.Fprintf(w, "%s %s", str(l, "name"), address(get(l, "address")))
	if lf := names(list(l, "listenerFilters")); len(lf) > 0 {
		fmt.Fprintf(w, " listener filters [%s]", strings.Join(lf, " "))
	}
	w.WriteString("\n")
	for _, fc := range list(l, "filterChains") {
		summarizeChain(w, asNode(fc), "chain")
	}
	if dc := asNode(get(l, "defaultFilterChain")); dc != nil {
		summarizeChain(w, dc, "default chain")
	}
}

func summarizeChain(w *bytes.Buffer, fc node, what string) {
	name := str(fc, "name")
	if name == "" {
		name = "(unnamed)"
	}
	fmt.Fprintf(w, "  %s %s", what, name)
	if m := asNode(get(fc, "filterChainMatch")); m != nil {
		var parts []string
		for _, k := range sortedKeys(m) {
			parts = append(parts, k+"="+compact(m[k]))
		}
		fmt.Fprintf(w, " match {%s}", strings.Join(parts, " "))
	}
	if ts := asNode(get(fc, "transportSocket")); ts != nil {
		fmt.Fprintf(w, " %s", shortName(str(ts, "name")))
		if tc := asNode(get(ts, "typedConfig")); tc != nil {
			if alpn := list(asNode(get(tc, "commonTlsContext")), "alpnProtocols"); len(alpn) > 0 {
				fmt.Fprintf(w, " alpn %s", compact(alpn))
			}
			var certs []string
			for _, c := range list(asNode(get(tc, "commonTlsContext")), "tlsCertificateSdsSecretConfigs") {
				certs = append(certs, str(asNode(c), "name"))
			}
			if len(certs) > 0 {
				fmt.Fprintf(w, " certs [%s]", strings.Join(certs, " "))
			}
		}
	}
	w.WriteString("\n")
	for _, f := range list(fc, "filters") {
		fn := asNode(f)
		fmt.Fprintf(w, "    %s", str(fn, "name"))
		tc := asNode(get(fn, "typedConfig"))
		if tc == nil {
			w.WriteString("\n")
			continue
		}
		if rds := asNode(get(tc, "rds")); rds != nil {
			fmt.Fprintf(w, " rds %s", str(rds, "routeConfigName"))
		}
		if rc := asNode(get(tc, "routeConfig")); rc != nil {
			fmt.Fprintf(w, " inline routes %s", str(rc, "name"))
		}
		if c := str(tc, "cluster"); c != "" {
			fmt.Fprintf(w, " -> %s", c)
		}
		if wc := asNode(get(tc, "weightedClusters")); wc != nil {
			fmt.Fprintf(w, " -> %s", weighted(list(wc, "clusters")))
		}
		w.WriteString("\n")
		for _, hf := range list(tc, "httpFilters") {
			h := asNode(hf)
			fmt.Fprintf(w, "      http %s", str(h, "name"))
			if b, _ := get(h, "disabled").(bool); b {
				w.WriteString(" (disabled)")
			}
			w.WriteString("\n")
		}
	}
}

func summarizeRouteConfig(w *bytes.Buffer, rc node) {
	fmt.Fprintf(w, "%s\n", str(rc, "name"))
	for _, vh := range list(rc, "virtualHosts") {
		v := asNode(vh)
		fmt.Fprintf(w, "  %s %s\n", str(v, "name"), compact(get(v, "domains")))
		for _, r := range list(v, "routes") {
			route := asNode(r)
			fmt.Fprintf(w, "    %s\n      %s -> %s", str(route, "name"), match(asNode(get(route, "match"))), action(route))
			if pf := asNode(get(route, "typedPerFilterConfig")); len(pf) > 0 {
				fmt.Fprintf(w, " filters [%s]", strings.Join(sortedKeys(pf), " "))
			}
			w.WriteString("\n")
		}
	}
}

func match(m node) string {
	var parts []string
	for _, k := range []string{"prefix", "path", "pathSeparatedPrefix"} {
		if v, ok := m[k]; ok {
			parts = append(parts, k+" "+fmt.Sprint(v))
		}
	}
	if re := asNode(get(m, "safeRegex")); re != nil {
		parts = append(parts, "regex "+str(re, "regex"))
	}
	if pmp := asNode(get(m, "pathMatchPolicy")); pmp != nil {
		parts = append(parts, "path "+compact(pmp))
	}
	for _, h := range list(m, "headers") {
		parts = append(parts, "header "+keyed(asNode(h)))
	}
	for _, q := range list(m, "queryParameters") {
		parts = append(parts, "query "+keyed(asNode(q)))
	}
	for _, c := range list(m, "cookies") {
		parts = append(parts, "cookie "+keyed(asNode(c)))
	}
	for _, k := range sortedKeys(m) {
		switch k {
		case "prefix", "path", "pathSeparatedPrefix", "safeRegex", "pathMatchPolicy", "headers", "queryParameters", "cookies":
		default:
			parts = append(parts, k+" "+compact(m[k]))
		}
	}
	if len(parts) == 0 {
		return "any"
	}
	return strings.Join(parts, ", ")
}

// keyed is a header or query parameter matcher: its name, then `= v` (exact), `^= v`
// (prefix), `$= v` (suffix), `*= v` (contains), `~ re` (regex) or `present`; anything else
// as JSON.
func keyed(n node) string {
	rest := node{}
	for k, v := range n {
		if k != "name" {
			rest[k] = v
		}
	}
	s := str(n, "name")
	if b, _ := rest["invertMatch"].(bool); b {
		s = "not " + s
		delete(rest, "invertMatch")
	}
	if sm := asNode(rest["stringMatch"]); sm != nil && len(rest) == 1 {
		ic, n := "", len(sm)
		if b, _ := sm["ignoreCase"].(bool); b {
			ic, n = " (ignore case)", n-1
		}
		ops := map[string]string{"exact": "=", "prefix": "^=", "suffix": "$=", "contains": "*="}
		for k, op := range ops {
			if v, ok := sm[k].(string); ok && n == 1 {
				return fmt.Sprintf("%s %s %q%s", s, op, v, ic)
			}
		}
		if re := asNode(sm["safeRegex"]); re != nil && n == 1 {
			return fmt.Sprintf("%s ~ %q%s", s, str(re, "regex"), ic)
		}
	}
	if b, _ := rest["presentMatch"].(bool); b && len(rest) == 1 {
		return s + " present"
	}
	return s + " " + compact(rest)
}

func action(route node) string {
	switch {
	case get(route, "route") != nil:
		r := asNode(get(route, "route"))
		var s string
		switch {
		case str(r, "cluster") != "":
			s = "cluster " + str(r, "cluster")
		case get(r, "weightedClusters") != nil:
			s = "clusters " + weighted(list(asNode(get(r, "weightedClusters")), "clusters"))
		case str(r, "clusterHeader") != "":
			s = "cluster from header " + str(r, "clusterHeader")
		default:
			s = "route"
		}
		var with []string
		for _, k := range sortedKeys(r) {
			switch k {
			case "cluster", "weightedClusters", "clusterHeader", "upgradeConfigs":
				continue
			}
			// Values short enough for the line are shown; a long one only by its name (the
			// routes file has it).
			if v := compact(r[k]); len(v) <= 60 {
				with = append(with, k+"="+v)
			} else {
				with = append(with, k)
			}
		}
		if len(with) > 0 {
			s += " with " + strings.Join(with, " ")
		}
		return s
	case get(route, "redirect") != nil:
		return "redirect " + compact(get(route, "redirect"))
	case get(route, "directResponse") != nil:
		d := asNode(get(route, "directResponse"))
		s := "direct response " + fmt.Sprint(get(d, "status"))
		if b := asNode(get(d, "body")); b != nil {
			s += " body " + compact(b)
		}
		return s
	}
	return "no action"
}

func weighted(cs []any) string {
	var parts []string
	for _, c := range cs {
		n := asNode(c)
		parts = append(parts, fmt.Sprintf("%s:%v", str(n, "name"), get(n, "weight")))
	}
	return "[" + strings.Join(parts, " ") + "]"
}

func summarizeCluster(w *bytes.Buffer, c node, cla map[string]node, used map[string]bool) {
	name := str(c, "name")
	typ := str(c, "type")
	if ct := asNode(get(c, "clusterType")); ct != nil {
		typ = str(ct, "name")
	}
	if typ == "" {
		typ = "STATIC" // the enum's zero value, which protojson leaves out
	}
	lb := str(c, "lbPolicy")
	if p := list(asNode(get(c, "loadBalancingPolicy")), "policies"); len(p) > 0 {
		lb = shortName(str(asNode(get(asNode(p[0]), "typedExtensionConfig")), "name"))
	}
	fmt.Fprintf(w, "%s %s", name, typ)
	if lb != "" {
		fmt.Fprintf(w, " %s", lb)
	}
	if get(c, "transportSocket") != nil || get(c, "transportSocketMatches") != nil {
		w.WriteString(" upstream-tls")
	}
	if hc := list(c, "healthChecks"); len(hc) > 0 {
		fmt.Fprintf(w, " health checks %d", len(hc))
	}
	if get(c, "outlierDetection") != nil {
		w.WriteString(" outlier detection")
	}
	w.WriteString("\n")
	if la := asNode(get(c, "loadAssignment")); la != nil {
		summarizeEndpoints(w, la, "  ")
	}
	service := name
	if eds := asNode(get(c, "edsClusterConfig")); eds != nil && str(eds, "serviceName") != "" {
		service = str(eds, "serviceName")
	}
	if e, ok := cla[service]; ok && typ == "EDS" {
		used[service] = true
		summarizeEndpoints(w, e, "  ")
	}
}

func summarizeEndpoints(w *bytes.Buffer, la node, indent string) {
	eps := list(la, "endpoints")
	if len(eps) == 0 {
		fmt.Fprintf(w, "%sno endpoints\n", indent)
	}
	for _, l := range eps {
		loc := asNode(l)
		var addrs []string
		for _, e := range list(loc, "lbEndpoints") {
			ep := asNode(e)
			a := address(get(asNode(get(ep, "endpoint")), "address"))
			if wt := get(ep, "loadBalancingWeight"); wt != nil && fmt.Sprint(wt) != "1" {
				a += fmt.Sprintf("*%v", wt)
			}
			if hs := str(ep, "healthStatus"); hs != "" {
				a += " " + hs
			}
			addrs = append(addrs, a)
		}
		where := compact(get(loc, "locality"))
		if r := str(asNode(get(loc, "locality")), "region"); r != "" && len(asNode(get(loc, "locality"))) == 1 {
			where = r
		}
		fmt.Fprintf(w, "%s%s", indent, where)
		if wt := get(loc, "loadBalancingWeight"); wt != nil {
			fmt.Fprintf(w, " weight %v", wt)
		}
		if p := get(loc, "priority"); p != nil {
			fmt.Fprintf(w, " priority %v", p)
		}
		fmt.Fprintf(w, ": %s\n", strings.Join(addrs, " "))
	}
}

func secretKinds(s node) []string {
	var kinds []string
	for _, k := range sortedKeys(s) {
		if k != "name" {
			kinds = append(kinds, k)
		}
	}
	return kinds
}

func address(a any) string {
	n := asNode(a)
	if sa := asNode(get(n, "socketAddress")); sa != nil {
		s := fmt.Sprintf("%s:%v", str(sa, "address"), get(sa, "portValue"))
		if p := str(sa, "protocol"); p != "" {
			s += "/" + p
		}
		return s
	}
	if p := asNode(get(n, "pipe")); p != nil {
		return "unix:" + str(p, "path")
	}
	if n == nil {
		return "(no address)"
	}
	return compact(n)
}

func names(l []any) []string {
	var out []string
	for _, x := range l {
		out = append(out, str(asNode(x), "name"))
	}
	return out
}

// shortName is an extension name without Envoy's common prefixes.
func shortName(s string) string {
	for _, p := range []string{"envoy.load_balancing_policies.", "envoy.transport_sockets."} {
		s = strings.TrimPrefix(s, p)
	}
	return s
}

func compact(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}

func get(n node, k string) any {
	if n == nil {
		return nil
	}
	return n[k]
}

func asNode(v any) node {
	n, _ := v.(map[string]any)
	return n
}

func list(n node, k string) []any {
	l, _ := get(n, k).([]any)
	return l
}

func str(n node, k string) string {
	s, _ := get(n, k).(string)
	return s
}

func sortedKeys(n node) []string {
	keys := make([]string, 0, len(n))
	for k := range n {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
