package gatewayapi

import (
	"fmt"
	"regexp"
	"strings"
	"time"

	gwapiv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/egharness/egharness/translator/ir"
)

// Header modifier and CORS filters of HTTPRoute rules.

// headerValueRE is what EG accepts as a header value (RFC 7230 field content).
var headerValueRE = regexp.MustCompile(`^[!-~]+([\t ]?[!-~]+)*$`)

// modifiableHeader: no pseudo-headers, no "/" and no Host (EG's rule).
func modifiableHeader(name string) bool {
	return !strings.ContainsAny(name, "/:") && !strings.EqualFold(name, "host")
}

// headerEdit is one direction (request or response) of a header modifier.
type headerEdit struct {
	filter  string // RequestHeaderModifier or ResponseHeaderModifier
	add     *[]ir.AddHeader
	remove  *[]string
	request bool
}

func (filters *ruleFilters) requestHeaders(m *gwapiv1.HTTPHeaderFilter) *filterErr {
	return headerEdit{filter: "RequestHeaderModifier", add: &filters.addRequest, remove: &filters.removeRequest,
		request: true}.apply(m)
}

func (filters *ruleFilters) responseHeaders(m *gwapiv1.HTTPHeaderFilter) *filterErr {
	return headerEdit{filter: "ResponseHeaderModifier", add: &filters.addResponse, remove: &filters.removeResponse}.apply(
		m)
}

// apply adds "add" headers first (appending), then "set" ones (replacing), then removals;
// a name already added (case-insensitively) is skipped, an invalid entry is reported and
// skipped while the valid ones are kept.
func (h headerEdit) apply(m *gwapiv1.HTTPHeaderFilter) *filterErr {
	if m == nil {
		return nil
	}
	var problems []string
	badName := func(verb, name string) string {
		if h.request && verb != "remove" {
			return fmt.Sprintf(
				"Header: %q. The %s filter cannot %s the Host header or headers with a '/' or ':' character in them. "+
					"To modify the Host header use the URLRewrite or the HTTPRouteFilter filter.", name, h.filter, verb)
		}
		if !h.request && verb != "remove" {
			verb = "set" // EG's wording for added response headers too
		}
		return fmt.Sprintf(
			"Header: %q. The %s filter cannot %s the Host header or headers with a '/' or ':' character in them.", name,
			h.filter, verb)
	}
	has := func(name string) bool {
		for _, a := range *h.add {
			if strings.EqualFold(a.Name, name) {
				return true
			}
		}
		return false
	}
	empty := len(m.Add) == 0 && len(m.Set) == 0 && len(m.Remove) == 0
	for _, group := range []struct {
		verb    string
		headers []gwapiv1.HTTPHeader
	}{{"add", m.Add}, {"set", m.Set}} {
		for _, hd := range group.headers {
			name := string(hd.Name)
			switch {
			case name == "":
				problems = append(problems, fmt.Sprintf("%s Filter cannot %s a header with an empty name", h.filter, group.verb))
			case !modifiableHeader(name):
				problems = append(problems, badName(group.verb, name))
			case !headerValueRE.MatchString(hd.Value):
				problems = append(problems,
					fmt.Sprintf("Header: %q. %s Filter cannot %s a header with an invalid value.", name, h.filter, group.verb))
			case !has(name):
				*h.add = append(*h.add, ir.AddHeader{Name: name, Value: hd.Value, Append: group.verb == "add"})
			}
		}
	}
	for _, name := range m.Remove {
		switch {
		case name == "":
			problems = append(problems, fmt.Sprintf("%s Filter cannot remove a header with an empty name", h.filter))
		case !modifiableHeader(name):
			problems = append(problems, badName("remove", name))
		default:
			dup := false
			for _, r := range *h.remove {
				dup = dup || strings.EqualFold(r, name)
			}
			if !dup {
				*h.remove = append(*h.remove, name)
			}
		}
	}
	if len(*h.add) == 0 && len(*h.remove) == 0 && !empty {
		what := "add/set/remove"
		if !h.request {
			what = "add/remove"
		}
		return acceptedErr(fmt.Sprintf("%s Filter did not provide valid configuration to %s any headers", h.filter, what))
	}
	if len(problems) > 0 {
		return acceptedErr(strings.Join(problems, "\n"))
	}
	return nil
}

// corsFilter takes a rule's CORS filter (Gateway API) as the route's CORS policy, the shape
// a SecurityPolicy's cors resolves to: maxAge is in seconds and always given. The CRD
// defaults maxAge to 5 and refuses 0, so 0 here is an unset field: the default is applied,
// as the API server does.
func (filters *ruleFilters) corsFilter(c *gwapiv1.HTTPCORSFilter) {
	if c == nil {
		return
	}
	maxAge := c.MaxAge
	if maxAge == 0 {
		maxAge = 5
	}
	out := &ir.CORS{
		AllowCredentials: c.AllowCredentials != nil && *c.AllowCredentials,
		MaxAge:           ptr(time.Duration(maxAge) * time.Second),
	}
	for _, o := range c.AllowOrigins {
		out.AllowOrigins = append(out.AllowOrigins, string(o))
	}
	for _, m := range c.AllowMethods {
		out.AllowMethods = append(out.AllowMethods, string(m))
	}
	for _, h := range c.AllowHeaders {
		out.AllowHeaders = append(out.AllowHeaders, string(h))
	}
	for _, h := range c.ExposeHeaders {
		out.ExposeHeaders = append(out.ExposeHeaders, string(h))
	}
	filters.cors = out
}
