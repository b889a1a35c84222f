package gatewayapi

import (
	"fmt"
	"net/netip"
	"regexp"
	"strings"

	egv1a1 "github.com/envoyproxy/gateway/api/v1alpha1"
	"k8s.io/apimachinery/pkg/util/validation"
	gwapiv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/egharness/egharness/translator/ir"
)

// Redirect and URL rewrite filters of HTTPRoute rules: Gateway API's, and EG's HTTPRouteFilter
// urlRewrite (path regex, host from a header or the backend), which never combine.

// validateFilterHostname is EG's check of a hostname a redirect or rewrite writes: a DNS
// subdomain, not an IP address, no label over 63 characters.
func validateFilterHostname(h string) error {
	if errs := validation.IsDNS1123Subdomain(h); errs != nil {
		return fmt.Errorf("hostname %q is invalid: %v", h, errs)
	}
	if _, err := netip.ParseAddr(h); err == nil {
		return fmt.Errorf("hostname: %q cannot be an ip address", h)
	}
	for _, label := range strings.Split(h, ".") {
		if len(label) > 63 {
			return fmt.Errorf("label: %q in hostname %q cannot exceed 63 characters", label, h)
		}
	}
	return nil
}

func (filters *ruleFilters) requestRedirect(redirect *gwapiv1.HTTPRequestRedirectFilter) *filterErr {
	if filters.redirect != nil {
		return acceptedErr("cannot configure multiple requestRedirect filters for a single HTTPRouteRule")
	}
	if redirect == nil {
		return nil
	}
	out := &ir.Redirect{}
	if redirect.Scheme != nil {
		if *redirect.Scheme != "http" && *redirect.Scheme != "https" {
			return acceptedErr(fmt.Sprintf("scheme: %s is unsupported, only 'https' and 'http' are supported", *redirect.Scheme))
		}
		out.Scheme = ptr(*redirect.Scheme)
	}
	if redirect.Hostname != nil {
		if err := validateFilterHostname(string(*redirect.Hostname)); err != nil {
			return acceptedErr(err.Error())
		}
		out.Hostname = ptr(string(*redirect.Hostname))
	}
	if p := redirect.Path; p != nil {
		switch p.Type {
		case gwapiv1.FullPathHTTPPathModifier:
			if p.ReplaceFullPath != nil {
				out.Path = &ir.PathModifier{FullReplace: ptr(*p.ReplaceFullPath)}
			}
		case gwapiv1.PrefixMatchHTTPPathModifier:
			if p.ReplacePrefixMatch != nil {
				out.Path = &ir.PathModifier{PrefixMatchReplace: ptr(*p.ReplacePrefixMatch)}
			}
		default:
			return acceptedErr(
				fmt.Sprintf("redirect path type: %s is invalid, only \"ReplaceFullPath\" and \"ReplacePrefixMatch\" are supported",
					p.Type))
		}
	}
	code := int32(302) // the CRD default
	if redirect.StatusCode != nil {
		code = int32(*redirect.StatusCode)
	}
	switch code {
	case 301, 302, 303, 307, 308:
		out.StatusCode = &code
	default:
		return acceptedErr(fmt.Sprintf("status code %d is invalid, only 302 and 301 are supported", code))
	}
	if redirect.Port != nil {
		out.Port = ptr(uint32(*redirect.Port))
	}
	filters.redirect = out
	return nil
}

func (filters *ruleFilters) urlRewrite(rewrite *gwapiv1.HTTPURLRewriteFilter) *filterErr {
	if rewrite == nil {
		return nil
	}
	if cur := (*ruleRewrite)(filters.rewrite); cur != nil {
		rewrites := rewrite.Hostname != nil || rewrite.Path != nil
		if (cur.coreRewrites() && rewrites) || (rewrite.Hostname != nil && cur.Host != nil) ||
			(rewrite.Path != nil && cur.extensionPath()) {
			return acceptedErr(msgMultipleRewrites)
		}
	}
	if rewrite.Hostname != nil {
		if err := validateFilterHostname(string(*rewrite.Hostname)); err != nil {
			return acceptedErr(err.Error())
		}
		if filters.rewrite == nil {
			filters.rewrite = &ir.URLRewrite{}
		}
		if filters.rewrite.Hostname == nil {
			filters.rewrite.Hostname = ptr(string(*rewrite.Hostname))
		}
	}
	if p := rewrite.Path; p != nil {
		var pm *ir.PathModifier
		switch p.Type {
		case gwapiv1.FullPathHTTPPathModifier:
			path, err := rewritePath(p.Type, p.ReplaceFullPath, gwapiv1.PrefixMatchHTTPPathModifier, p.ReplacePrefixMatch)
			if err != nil {
				return err
			}
			pm = &ir.PathModifier{FullReplace: path}
		case gwapiv1.PrefixMatchHTTPPathModifier:
			path, err := rewritePath(p.Type, p.ReplacePrefixMatch, gwapiv1.FullPathHTTPPathModifier, p.ReplaceFullPath)
			if err != nil {
				return err
			}
			pm = &ir.PathModifier{PrefixMatchReplace: path}
		default:
			return acceptedErr(
				fmt.Sprintf("rewrite path type: %s is invalid, only \"ReplaceFullPath\" and \"ReplacePrefixMatch\" are supported",
					p.Type))
		}
		if filters.rewrite == nil {
			filters.rewrite = &ir.URLRewrite{}
		}
		if filters.rewrite.Path == nil {
			filters.rewrite.Path = pm
		}
	}
	return nil
}

// rewritePath is the path a URLRewrite of path type pathType writes: path, the field named
// after that type, which must be set, while other, the field named after otherType, must not.
func rewritePath(pathType gwapiv1.HTTPPathModifierType, path *string, otherType gwapiv1.HTTPPathModifierType,
	other *string) (*string, *filterErr) {
	switch {
	case other != nil:
		return nil, acceptedErr(fmt.Sprintf("%s cannot be set when rewrite path type is %q", otherType, pathType))
	case path == nil:
		return nil, acceptedErr(fmt.Sprintf("%s must be set when rewrite path type is %q", pathType, pathType))
	}
	return ptr(*path), nil
}

const msgMultipleRewrites = "cannot configure multiple urlRewrite filters for a single HTTPRouteRule"

// coreRewrites: a URLRewrite filter of Gateway API already rewrites the host or the path.
func (rewrite *ruleRewrite) coreRewrites() bool { return rewrite.Hostname != nil || rewrite.corePath() }

// corePath: a URLRewrite filter of Gateway API already rewrites the path.
func (rewrite *ruleRewrite) corePath() bool {
	return rewrite.Path != nil && (rewrite.Path.FullReplace != nil || rewrite.Path.PrefixMatchReplace != nil)
}

// extensionPath: an HTTPRouteFilter already rewrites the path.
func (rewrite *ruleRewrite) extensionPath() bool {
	return rewrite.Path != nil && rewrite.Path.RegexMatchReplace != nil
}

// extensionRewrite applies an HTTPRouteFilter's urlRewrite: the path by regular expression,
// the host from a header, the backend or the path, and whether x-forwarded-host is kept. A
// part another filter of the rule rewrites already refuses the rule, as EG does; within
// the rules EG checks, the first filter to rewrite a part wins.
func (filters *ruleFilters) extensionRewrite(rewrite *egv1a1.HTTPURLRewriteFilter) *filterErr {
	if rewrite == nil {
		return nil
	}
	if cur := (*ruleRewrite)(filters.rewrite); cur != nil {
		rewrites := rewrite.Hostname != nil || rewrite.Path != nil
		if ((cur.Host != nil || cur.extensionPath()) && rewrites) ||
			(rewrite.Hostname != nil && cur.Hostname != nil) || (rewrite.Path != nil && cur.corePath()) {
			return acceptedErr(msgMultipleRewrites)
		}
	}
	if p := rewrite.Path; p != nil && p.Type == egv1a1.RegexHTTPPathModifier {
		rr, err := regexReplace(p.ReplaceRegexMatch,
			`ReplaceRegexMatch Pattern must be set when rewrite path type is "ReplaceRegexMatch"`,
			"ReplaceRegexMatch must be a valid RE2 regular expression")
		if err != nil {
			return err
		}
		filters.rewriteOf().setPath(&ir.PathModifier{RegexMatchReplace: rr})
	}
	if h := rewrite.Hostname; h != nil {
		var hm *ir.HostModifier
		switch h.Type {
		case egv1a1.HeaderHTTPHostnameModifier:
			if h.Header == nil {
				return acceptedErr(`Header must be set when rewrite path type is "Header"`)
			}
			hm = &ir.HostModifier{Header: ptr(*h.Header)}
		case egv1a1.BackendHTTPHostnameModifier:
			hm = &ir.HostModifier{Backend: true}
		case egv1a1.PathRegexHTTPHostnameModifier:
			if h.PathRegex == nil || h.PathRegex.Substitution == "" {
				return acceptedErr(`PathRegex Pattern and Substitution must be set when rewrite hostname type is "PathRegex"`)
			}
			rr, err := regexReplace(
				&egv1a1.ReplaceRegexMatch{Pattern: h.PathRegex.Pattern, Substitution: h.PathRegex.Substitution},
				`PathRegex Pattern and Substitution must be set when rewrite hostname type is "PathRegex"`,
				"PathRegex must be a valid RE2 regular expression")
			if err != nil {
				return err
			}
			hm = &ir.HostModifier{PathRegex: rr}
		}
		if r := filters.rewriteOf(); r.Host == nil {
			r.Host = hm
		}
	}
	if rewrite.AppendXForwardedHost != nil {
		filters.rewriteOf().AppendXForwardedHost = ptr(*rewrite.AppendXForwardedHost)
	}
	return nil
}

// regexReplace checks an HTTPRouteFilter's pattern and substitution: a pattern must be
// given (missing) and compile as RE2 (invalid), which keeps Envoy from refusing the route.
func regexReplace(m *egv1a1.ReplaceRegexMatch, missing, invalid string) (*ir.RegexReplace, *filterErr) {
	if m == nil || m.Pattern == "" {
		return nil, acceptedErr(missing)
	}
	if _, err := regexp.Compile(m.Pattern); err != nil {
		return nil, acceptedErr(invalid)
	}
	return &ir.RegexReplace{Pattern: m.Pattern, Substitution: m.Substitution}, nil
}

// rewriteOf is the rule's URL rewrite, made on first use.
func (filters *ruleFilters) rewriteOf() *ruleRewrite {
	if filters.rewrite == nil {
		filters.rewrite = &ir.URLRewrite{}
	}
	return (*ruleRewrite)(filters.rewrite)
}

// ruleRewrite is the rule's ir.URLRewrite with the checks filters make on it.
type ruleRewrite ir.URLRewrite

// setPath sets the path rewrite unless a filter before set one.
func (rewrite *ruleRewrite) setPath(p *ir.PathModifier) {
	if rewrite.Path == nil {
		rewrite.Path = p
	}
}
