package admission

import (
	"fmt"
	"regexp"
	"time"

	gwapiv1 "sigs.k8s.io/gateway-api/apis/v1"
)

// The HTTPRoute CRD's rules on rule filters and timeouts (Gateway API v1.6): the schema
// pattern of durations and the CEL rules, with the API server's wording. A CEL rule's
// value is printed as its type, "object".

// durationPattern is Gateway API's Duration schema pattern (GEP-2257).
const durationPattern = `^([0-9]{1,5}(h|m|s|ms)){1,4}$`

var durationRE = regexp.MustCompile(durationPattern)

// celProblem is a failed CEL rule at path.
func celProblem(path, msg string) problem {
	return problem{path: path, value: "object", detail: msg}
}

// httpRouteRuleProblems checks each rule's timeouts and filters, and each backendRef's
// filters.
func httpRouteRuleProblems(r *gwapiv1.HTTPRoute) []problem {
	var out []problem
	for i, rule := range r.Spec.Rules {
		rp := fmt.Sprintf("spec.rules[%d]", i)
		out = append(out, filterListProblems(rp+".filters", rule.Filters)...)
		for k, br := range rule.BackendRefs {
			out = append(out, filterListProblems(fmt.Sprintf("%s.backendRefs[%d].filters", rp, k), br.Filters)...)
			out = append(out, backendPortProblems(fmt.Sprintf("%s.backendRefs[%d]", rp, k), br.BackendObjectReference)...)
		}
		out = append(out, timeoutProblems(rp+".timeouts", rule.Timeouts)...)
		out = append(out, ruleFilterProblems(rp, rule)...)
	}
	return out
}

// timeoutProblems: both timeouts are durations, and backendRequest may not exceed request
// unless request is 0s (no timeout).
func timeoutProblems(path string, t *gwapiv1.HTTPRouteTimeouts) []problem {
	if t == nil {
		return nil
	}
	var out []problem
	var request, backend *time.Duration
	for _, f := range []struct {
		name string
		v    *gwapiv1.Duration
		dst  **time.Duration
	}{{"request", t.Request, &request}, {"backendRequest", t.BackendRequest, &backend}} {
		if f.v == nil {
			continue
		}
		p := path + "." + f.name
		if !durationRE.MatchString(string(*f.v)) {
			out = append(out, problem{path: p, value: string(*f.v), detail: fmt.Sprintf("%s in body should match '%s'", p, durationPattern)})
			continue
		}
		d, err := time.ParseDuration(string(*f.v))
		if err == nil {
			*f.dst = &d
		}
	}
	if len(out) == 0 && request != nil && backend != nil && *request != 0 && *backend > *request {
		out = append(out, celProblem(path, "backendRequest timeout cannot be longer than request timeout"))
	}
	return out
}

// ruleFilterProblems are the rule-level CEL rules: no redirect with backendRefs, and a
// prefix replacement only with exactly one PathPrefix match (a rule without matches gets
// the CRD's default PathPrefix "/" match first).
func ruleFilterProblems(path string, rule gwapiv1.HTTPRouteRule) []problem {
	var out []problem
	if len(rule.BackendRefs) > 0 {
		for _, f := range rule.Filters {
			if f.RequestRedirect != nil {
				out = append(out, celProblem(path, "RequestRedirect filter must not be used together with backendRefs"))
				break
			}
		}
	}
	onePrefixMatch := len(rule.Matches) == 0 || len(rule.Matches) == 1 &&
		(rule.Matches[0].Path == nil || rule.Matches[0].Path.Type == nil || *rule.Matches[0].Path.Type == gwapiv1.PathMatchPathPrefix)
	replacesPrefix := func(p *gwapiv1.HTTPPathModifier) bool {
		return p != nil && p.Type == gwapiv1.PrefixMatchHTTPPathModifier && p.ReplacePrefixMatch != nil
	}
	count := func(filters []gwapiv1.HTTPRouteFilter, redirect bool) int {
		n := 0
		for _, f := range filters {
			if redirect && f.RequestRedirect != nil && replacesPrefix(f.RequestRedirect.Path) ||
				!redirect && f.URLRewrite != nil && replacesPrefix(f.URLRewrite.Path) {
				n++
			}
		}
		return n
	}
	for _, redirect := range []bool{true, false} {
		name := "URLRewrite"
		if redirect {
			name = "RequestRedirect"
		}
		if count(rule.Filters, redirect) == 1 && !onePrefixMatch {
			out = append(out, celProblem(path, fmt.Sprintf("When using %s filter with path.replacePrefixMatch, exactly one PathPrefix match must be specified", name)))
		}
	}
	for _, redirect := range []bool{true, false} {
		name, verb := "URLRewrite", "When"
		if redirect {
			name, verb = "RequestRedirect", "when"
		}
		backends := 0
		for _, br := range rule.BackendRefs {
			if count(br.Filters, redirect) == 1 {
				backends++
			}
		}
		if backends == 1 && !onePrefixMatch {
			out = append(out, celProblem(path, fmt.Sprintf("Within backendRefs, %s using %s filter with path.replacePrefixMatch, exactly one PathPrefix match must be specified", verb, name)))
		}
	}
	return out
}

// filterListProblems are the CEL rules of one filter list (a rule's or a backendRef's).
func filterListProblems(path string, filters []gwapiv1.HTTPRouteFilter) []problem {
	if len(filters) == 0 {
		return nil
	}
	var out []problem
	seen := map[gwapiv1.HTTPRouteFilterType]int{}
	for i, f := range filters {
		seen[f.Type]++
		out = append(out, filterProblems(fmt.Sprintf("%s[%d]", path, i), f)...)
	}
	if seen[gwapiv1.HTTPRouteFilterRequestRedirect] > 0 && seen[gwapiv1.HTTPRouteFilterURLRewrite] > 0 {
		out = append(out, celProblem(path, "May specify either httpRouteFilterRequestRedirect or httpRouteFilterRequestRewrite, but not both"))
	}
	for _, t := range []gwapiv1.HTTPRouteFilterType{gwapiv1.HTTPRouteFilterCORS, gwapiv1.HTTPRouteFilterRequestHeaderModifier,
		gwapiv1.HTTPRouteFilterResponseHeaderModifier, gwapiv1.HTTPRouteFilterRequestRedirect, gwapiv1.HTTPRouteFilterURLRewrite} {
		if seen[t] > 1 {
			out = append(out, celProblem(path, fmt.Sprintf("%s filter cannot be repeated", t)))
		}
	}
	return out
}

// filterProblems: the field named by the type is set and no other one; path modifiers
// carry the value their type names; a mirror has a percent or a fraction, not both.
func filterProblems(path string, f gwapiv1.HTTPRouteFilter) []problem {
	var out []problem
	for _, c := range []struct {
		typ   gwapiv1.HTTPRouteFilterType
		field string
		set   bool
	}{
		{gwapiv1.HTTPRouteFilterCORS, "cors", f.CORS != nil},
		{gwapiv1.HTTPRouteFilterRequestHeaderModifier, "requestHeaderModifier", f.RequestHeaderModifier != nil},
		{gwapiv1.HTTPRouteFilterResponseHeaderModifier, "responseHeaderModifier", f.ResponseHeaderModifier != nil},
		{gwapiv1.HTTPRouteFilterRequestMirror, "requestMirror", f.RequestMirror != nil},
		{gwapiv1.HTTPRouteFilterRequestRedirect, "requestRedirect", f.RequestRedirect != nil},
		{gwapiv1.HTTPRouteFilterURLRewrite, "urlRewrite", f.URLRewrite != nil},
		{gwapiv1.HTTPRouteFilterExtensionRef, "extensionRef", f.ExtensionRef != nil},
		{gwapiv1.HTTPRouteFilterExternalAuth, "externalAuth", f.ExternalAuth != nil},
	} {
		switch {
		case c.set && f.Type != c.typ:
			out = append(out, celProblem(path, fmt.Sprintf("filter.%s must be nil if the filter.type is not %s", c.field, c.typ)))
		case !c.set && f.Type == c.typ:
			out = append(out, celProblem(path, fmt.Sprintf("filter.%s must be specified for %s filter.type", c.field, c.typ)))
		}
	}
	if f.RequestRedirect != nil {
		out = append(out, pathModifierProblems(path+".requestRedirect.path", f.RequestRedirect.Path)...)
	}
	if f.URLRewrite != nil {
		out = append(out, pathModifierProblems(path+".urlRewrite.path", f.URLRewrite.Path)...)
	}
	if m := f.RequestMirror; m != nil {
		if m.Percent != nil && m.Fraction != nil {
			out = append(out, celProblem(path+".requestMirror", "Only one of percent or fraction may be specified in HTTPRequestMirrorFilter"))
		}
		if fr := m.Fraction; fr != nil {
			den := int32(100)
			if fr.Denominator != nil {
				den = *fr.Denominator
			}
			if fr.Numerator > den {
				out = append(out, celProblem(path+".requestMirror.fraction", "numerator must be less than or equal to denominator"))
			}
		}
	}
	return out
}

func pathModifierProblems(path string, p *gwapiv1.HTTPPathModifier) []problem {
	if p == nil {
		return nil
	}
	var out []problem
	full, prefix := gwapiv1.FullPathHTTPPathModifier, gwapiv1.PrefixMatchHTTPPathModifier
	if p.Type == full && p.ReplaceFullPath == nil {
		out = append(out, celProblem(path, "replaceFullPath must be specified when type is set to 'ReplaceFullPath'"))
	}
	if p.ReplaceFullPath != nil && p.Type != full {
		out = append(out, celProblem(path, "type must be 'ReplaceFullPath' when replaceFullPath is set"))
	}
	if p.Type == prefix && p.ReplacePrefixMatch == nil {
		out = append(out, celProblem(path, "replacePrefixMatch must be specified when type is set to 'ReplacePrefixMatch'"))
	}
	if p.ReplacePrefixMatch != nil && p.Type != prefix {
		out = append(out, celProblem(path, "type must be 'ReplacePrefixMatch' when replacePrefixMatch is set"))
	}
	return out
}

// backendPortProblems is the CRD's rule that a Service reference names its port.
func backendPortProblems(path string, ref gwapiv1.BackendObjectReference) []problem {
	core := ref.Group == nil || *ref.Group == ""
	service := ref.Kind == nil || *ref.Kind == "Service"
	if core && service && ref.Port == nil {
		return []problem{celProblem(path, "Must have port for Service reference")}
	}
	return nil
}
