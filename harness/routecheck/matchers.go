package routecheck

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"

	routev3 "github.com/envoyproxy/go-control-plane/envoy/config/route/v3"
	matcherv3 "github.com/envoyproxy/go-control-plane/envoy/type/matcher/v3"
)

type strKind int

const (
	strExact strKind = iota
	strPrefix
	strSuffix
	strContains
	strRegex
)

// stringMatcher mirrors Matchers::StringMatcherImpl.
type stringMatcher struct {
	kind       strKind
	val        string // lower-cased when ignoreCase
	ignoreCase bool
	re         *regexp.Regexp
}

func compileStringMatcher(m *matcherv3.StringMatcher) (stringMatcher, error) {
	stringMatch := stringMatcher{ignoreCase: m.GetIgnoreCase()}
	switch p := m.GetMatchPattern().(type) {
	case *matcherv3.StringMatcher_Exact:
		stringMatch.kind, stringMatch.val = strExact, p.Exact
	case *matcherv3.StringMatcher_Prefix:
		stringMatch.kind, stringMatch.val = strPrefix, p.Prefix
	case *matcherv3.StringMatcher_Suffix:
		stringMatch.kind, stringMatch.val = strSuffix, p.Suffix
	case *matcherv3.StringMatcher_Contains:
		stringMatch.kind, stringMatch.val = strContains, p.Contains
	case *matcherv3.StringMatcher_SafeRegex:
		re, err := compileFullRegex(p.SafeRegex.GetRegex())
		if err != nil {
			return stringMatch, err
		}
		stringMatch.kind, stringMatch.re = strRegex, re
	case *matcherv3.StringMatcher_Custom:
		return stringMatch, fmt.Errorf("%w: custom string matcher %q", ErrUnsupported, p.Custom.GetName())
	case nil:
		if m == nil {
			return stringMatch, fmt.Errorf("string matcher missing")
		}
		return stringMatch, fmt.Errorf("string matcher has no pattern")
	}
	if stringMatch.ignoreCase {
		stringMatch.val = asciiLower(stringMatch.val)
	}
	return stringMatch, nil
}

func (m *stringMatcher) match(s string) bool {
	if m.kind == strRegex {
		return m.re.MatchString(s) // ignore_case does not apply to regexes
	}
	if m.ignoreCase {
		s = asciiLower(s)
	}
	switch m.kind {
	case strExact:
		return s == m.val
	case strPrefix:
		return strings.HasPrefix(s, m.val)
	case strSuffix:
		return strings.HasSuffix(s, m.val)
	case strContains:
		return strings.Contains(s, m.val)
	}
	return false
}

type hdrKind int

const (
	hdrPresent hdrKind = iota
	hdrRange
	hdrString // string_match, and the legacy specifiers as the string matchers they are
)

// headerMatcher mirrors HeaderUtility::HeaderData / matchHeaders.
type headerMatcher struct {
	name                 string // lower-case
	kind                 hdrKind
	rangeStart, rangeEnd int64
	stringMatch          stringMatcher
	present              bool
	invert               bool
	treatMissingAsEmpty  bool
}

func compileHeaderMatcher(h *routev3.HeaderMatcher) (headerMatcher, error) {
	headerMatch := headerMatcher{
		name:                asciiLower(h.GetName()),
		invert:              h.GetInvertMatch(),
		treatMissingAsEmpty: h.GetTreatMissingHeaderAsEmpty(),
	}
	specifier := h.GetHeaderMatchSpecifier()
	if legacy := legacyStringMatcher(h); legacy != nil {
		specifier = &routev3.HeaderMatcher_StringMatch{StringMatch: legacy}
	}
	switch s := specifier.(type) {
	case *routev3.HeaderMatcher_RangeMatch:
		headerMatch.kind, headerMatch.rangeStart, headerMatch.rangeEnd = hdrRange, s.RangeMatch.GetStart(),
			s.RangeMatch.GetEnd()
	case *routev3.HeaderMatcher_PresentMatch:
		headerMatch.kind, headerMatch.present = hdrPresent, s.PresentMatch
	case *routev3.HeaderMatcher_StringMatch:
		stringMatch, err := compileStringMatcher(s.StringMatch)
		if err != nil {
			return headerMatch, err
		}
		headerMatch.kind, headerMatch.stringMatch = hdrString, stringMatch
	default:
		// No specifier means "header is present".
		headerMatch.kind, headerMatch.present = hdrPresent, true
	}
	return headerMatch, nil
}

// legacyStringMatcher is the case-sensitive StringMatcher that a deprecated specifier
// (exact_match, prefix_match, suffix_match, contains_match, safe_regex_match) matches
// like, so that string_match's matcher serves them too; nil for the other specifiers.
func legacyStringMatcher(h *routev3.HeaderMatcher) *matcherv3.StringMatcher {
	switch s := h.GetHeaderMatchSpecifier().(type) {
	case *routev3.HeaderMatcher_ExactMatch:
		if s.ExactMatch == "" {
			// Envoy's legacy exact_match with no value matches any value of the header
			// (HeaderData: value_.empty() || value == value_), as an empty prefix does.
			return &matcherv3.StringMatcher{MatchPattern: &matcherv3.StringMatcher_Prefix{}}
		}
		return &matcherv3.StringMatcher{MatchPattern: &matcherv3.StringMatcher_Exact{Exact: s.ExactMatch}}
	case *routev3.HeaderMatcher_PrefixMatch:
		return &matcherv3.StringMatcher{MatchPattern: &matcherv3.StringMatcher_Prefix{Prefix: s.PrefixMatch}}
	case *routev3.HeaderMatcher_SuffixMatch:
		return &matcherv3.StringMatcher{MatchPattern: &matcherv3.StringMatcher_Suffix{Suffix: s.SuffixMatch}}
	case *routev3.HeaderMatcher_ContainsMatch:
		return &matcherv3.StringMatcher{MatchPattern: &matcherv3.StringMatcher_Contains{Contains: s.ContainsMatch}}
	case *routev3.HeaderMatcher_SafeRegexMatch:
		return &matcherv3.StringMatcher{MatchPattern: &matcherv3.StringMatcher_SafeRegex{SafeRegex: s.SafeRegexMatch}}
	}
	return nil
}

func (h *headerMatcher) matches(headers map[string]string) bool {
	v, ok := headers[h.name]
	if !ok && !h.treatMissingAsEmpty {
		if h.invert {
			return h.kind == hdrPresent && h.present
		}
		return h.kind == hdrPresent && !h.present
	}
	var m bool
	switch h.kind {
	case hdrPresent:
		m = h.present
	case hdrRange:
		n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
		m = err == nil && n >= h.rangeStart && n < h.rangeEnd
	case hdrString:
		m = h.stringMatch.match(v)
	}
	return m != h.invert
}

// anyHeaderMatches reports whether one of matchers matches headers.
func anyHeaderMatches(matchers []*routev3.HeaderMatcher, headers map[string]string) (bool, error) {
	return findHeaderMatcher(matchers, headers, true)
}

// allHeadersMatch reports whether every one of matchers matches headers (true for none).
func allHeadersMatch(matchers []*routev3.HeaderMatcher, headers map[string]string) (bool, error) {
	mismatch, err := findHeaderMatcher(matchers, headers, false)
	if err != nil {
		return false, err
	}
	return !mismatch, nil
}

// findHeaderMatcher compiles matchers in turn and reports whether one of them gives
// matching for headers. It stops at that one: the matchers after it are not compiled.
func findHeaderMatcher(matchers []*routev3.HeaderMatcher, headers map[string]string, matching bool) (bool, error) {
	for _, m := range matchers {
		headerMatch, err := compileHeaderMatcher(m)
		if err != nil {
			return false, err
		}
		if headerMatch.matches(headers) == matching {
			return true, nil
		}
	}
	return false, nil
}

// queryMatcher mirrors ConfigUtility::QueryParameterMatcher: the parameter
// must be present; present_match (true or false) or no specifier only checks
// presence.
type queryMatcher struct {
	name        string
	stringMatch *stringMatcher
}

func compileQueryMatcher(q *routev3.QueryParameterMatcher) (queryMatcher, error) {
	queryMatch := queryMatcher{name: q.GetName()}
	if s := q.GetStringMatch(); s != nil {
		stringMatch, err := compileStringMatcher(s)
		if err != nil {
			return queryMatch, err
		}
		queryMatch.stringMatch = &stringMatch
	}
	return queryMatch, nil
}

func (q *queryMatcher) matches(params map[string]string) bool {
	v, ok := params[q.name]
	if !ok {
		return false
	}
	return q.stringMatch == nil || q.stringMatch.match(v)
}

// cookieMatcher: an absent cookie does not match, so invert_match matches it.
type cookieMatcher struct {
	name   string
	m      stringMatcher
	invert bool
}

func (c *cookieMatcher) matches(cookieHeader string) bool {
	v, ok := findCookie(cookieHeader, c.name)
	if !ok {
		return c.invert
	}
	return c.m.match(v) != c.invert
}

// findCookie follows Http::Utility::parseCookieValue: "; "-separated k=v
// pairs, optional surrounding double quotes stripped, first match wins.
func findCookie(header, name string) (string, bool) {
	for _, part := range strings.Split(header, ";") {
		part = strings.TrimLeft(part, " ")
		k, v, ok := strings.Cut(part, "=")
		if !ok || k != name {
			continue
		}
		if len(v) >= 2 && v[0] == '"' && v[len(v)-1] == '"' {
			v = v[1 : len(v)-1]
		}
		return v, true
	}
	return "", false
}

func asciiLower(s string) string {
	for i := 0; i < len(s); i++ {
		if 'A' <= s[i] && s[i] <= 'Z' {
			b := []byte(s)
			for j := i; j < len(b); j++ {
				if 'A' <= b[j] && b[j] <= 'Z' {
					b[j] += 'a' - 'A'
				}
			}
			return string(b)
		}
	}
	return s
}
