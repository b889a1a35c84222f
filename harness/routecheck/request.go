package routecheck

import (
	"github.com/egharness/egharness/harness/ratelimitsvc"

	"net/netip"
	"strconv"
	"strings"

	hcmv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/network/http_connection_manager/v3"
)

// requestState is the request after the HTTP connection manager's own
// mutations, i.e. what the router sees.
type requestState struct {
	req     Request
	method  string
	host    string // :authority
	path    string // :path, including query
	scheme  string // :scheme
	xfp     string // x-forwarded-proto
	headers map[string]string
	secrets map[string][]byte    // the table's generic secrets (credentials)
	rls     *ratelimitsvc.Limits // the rate limit service's limits (UseRateLimitService)

	localReply         int // non-zero: the HCM replied before routing
	localReplyLocation string

	// matched is the route entry the request matched, and matchedAns the answer before
	// the route's action (HTTP filters run on it, and may send the request again).
	matched    *route
	matchedAns Answer
	// jwtPayload is what jwt_authn put in dynamic metadata: payloads by provider.
	jwtPayload map[string]any
}

func newRequestState(req Request, h *hcmConfig) *requestState {
	state := &requestState{req: req, method: req.Method, host: req.Host, path: req.Path}
	state.headers = make(map[string]string, len(req.Headers)+5)
	for k, v := range req.Headers {
		state.headers[strings.ToLower(k)] = v
	}
	if state.method == "" {
		state.method = "GET"
	}
	if state.host == "" {
		if v, ok := state.headers[":authority"]; ok {
			state.host = v
		} else if v, ok := state.headers["host"]; ok {
			state.host = v
		}
	}
	if state.path == "" {
		state.path = "/"
	}
	// The codec refuses a header block over max_request_headers_kb before anything else
	// sees the request: Envoy counts each header's name and value (Host among them).
	if size := headerBytes(state); size > h.maxHeaderBytes {
		state.localReply = 431
		return state
	}
	connScheme := "http"
	if req.SNI != "" {
		connScheme = "https"
	}
	// Envoy keeps a client x-forwarded-proto only when it does not use the
	// remote address as the trust boundary.
	state.xfp = connScheme
	if v, ok := state.headers["x-forwarded-proto"]; ok && !h.useRemoteAddress {
		state.xfp = v
	}
	state.scheme = connScheme
	if v, ok := state.headers[":scheme"]; ok {
		state.scheme = v
	}

	// ConnectionManagerUtility::maybeNormalizeHost.
	if h.stripTrailingDot {
		state.host = stripTrailingHostDot(state.host)
	}
	if h.stripAnyPort || h.stripMatching {
		if i := portStart(state.host); i >= 0 {
			if p, err := strconv.ParseUint(state.host[i+1:], 10, 32); err == nil &&
				(h.stripAnyPort || uint32(p) == req.Port) {
				state.host = state.host[:i]
			}
		}
	}

	// ConnectionManagerUtility::maybeNormalizePath.
	redirect := false
	if h.escapedSlashes == hcmv3.HttpConnectionManager_REJECT_REQUEST ||
		h.escapedSlashes == hcmv3.HttpConnectionManager_UNESCAPE_AND_REDIRECT ||
		h.escapedSlashes == hcmv3.HttpConnectionManager_UNESCAPE_AND_FORWARD {
		if p, changed := unescapeSlashes(state.path); changed {
			switch h.escapedSlashes {
			case hcmv3.HttpConnectionManager_REJECT_REQUEST:
				state.localReply = 400
				return state
			case hcmv3.HttpConnectionManager_UNESCAPE_AND_REDIRECT:
				redirect = true
			}
			state.path = p
		}
	}
	if h.normalizePath {
		state.path = canonicalPath(state.path)
	}
	if h.mergeSlashes {
		state.path = mergeSlashes(state.path)
	}
	if redirect {
		state.localReply = 307
		state.localReplyLocation = state.path
		return state
	}

	// ConnectionManagerUtility::mutateRequestHeaders: original IP detection. A
	// custom_header extension with reject_with_status refuses a request whose header is
	// missing or holds no IP address.
	if h.ipHeader != "" && h.ipReject != 0 {
		if _, err := netip.ParseAddr(strings.TrimSpace(state.headers[h.ipHeader])); err != nil {
			state.localReply = h.ipReject
			return state
		}
	}

	state.headers[":method"] = state.method
	state.headers[":authority"] = state.host
	state.headers[":path"] = state.path
	state.headers[":scheme"] = state.scheme
	state.headers["x-forwarded-proto"] = state.xfp
	return state
}

// headerBytes is the size of the request's header block as Envoy's codec counts it: the
// names and values of its headers, the Host header included.
func headerBytes(state *requestState) int {
	n := 0
	if _, given := state.headers["host"]; !given {
		n += len("host") + len(state.host)
	}
	for k, v := range state.headers {
		n += len(k) + len(v)
	}
	return n
}

// portStart mirrors HeaderUtility::getPortStart: index of the ':' before a
// port, ignoring colons inside a bracketed IPv6 literal; -1 if none.
func portStart(host string) int {
	i := strings.LastIndexByte(host, ':')
	if i < 0 {
		return -1
	}
	if j := strings.LastIndexByte(host, ']'); j >= 0 && j > i {
		return -1
	}
	return i
}

func stripTrailingHostDot(host string) string {
	i := strings.LastIndexByte(host, '.')
	switch {
	case i < 0:
		return host
	case i == len(host)-1:
		return host[:i]
	case host[i+1] == ':':
		return host[:i] + host[i+1:]
	}
	return host
}

// splitPath separates the path from "?query" / "#fragment", like
// PathUtil::removeQueryAndFragment.
func splitPath(p string) (path, rest string) {
	if i := strings.IndexAny(p, "?#"); i >= 0 {
		return p[:i], p[i:]
	}
	return p, ""
}

func unescapeSlashes(p string) (string, bool) {
	path, rest := splitPath(p)
	if !strings.Contains(path, "%") {
		return p, false
	}
	r := strings.NewReplacer("%2F", "/", "%2f", "/", "%5C", `\`, "%5c", `\`)
	np := r.Replace(path)
	return np + rest, np != path
}

func mergeSlashes(p string) string {
	path, rest := splitPath(p)
	if !strings.Contains(path, "//") {
		return p
	}
	var b strings.Builder
	b.Grow(len(p))
	for i := 0; i < len(path); i++ {
		if path[i] == '/' && i > 0 && path[i-1] == '/' {
			continue
		}
		b.WriteByte(path[i])
	}
	return b.String() + rest
}

// canonicalPath approximates the Chromium URL path canonicalization Envoy uses
// for normalize_path: backslashes become slashes, percent-encoded unreserved
// characters are decoded, unsafe characters are percent-encoded, and dot
// segments (including %2e spellings) are removed per RFC 3986 5.2.4.
func canonicalPath(p string) string {
	path, rest := splitPath(p)
	var b strings.Builder
	b.Grow(len(path))
	for i := 0; i < len(path); i++ {
		c := path[i]
		switch {
		case c == '\\':
			b.WriteByte('/')
		case c == '%' && i+2 < len(path) && isHex(path[i+1]) && isHex(path[i+2]):
			d := unhex(path[i+1])<<4 | unhex(path[i+2])
			if isUnreserved(d) {
				b.WriteByte(d)
			} else {
				b.WriteString(path[i : i+3])
			}
			i += 2
		case c <= 0x20 || c >= 0x7f || strings.IndexByte("\"<>`{}", c) >= 0:
			b.WriteString(
				"%" + strings.ToUpper(strconv.FormatUint(uint64(c)>>4, 16)) + strings.ToUpper(strconv.FormatUint(uint64(c)&15, 16)))
		default:
			b.WriteByte(c)
		}
	}
	return removeDotSegments(b.String()) + rest
}

func isHex(c byte) bool {
	return ('0' <= c && c <= '9') || ('a' <= c && c <= 'f') || ('A' <= c && c <= 'F')
}

func unhex(c byte) byte {
	switch {
	case '0' <= c && c <= '9':
		return c - '0'
	case 'a' <= c && c <= 'f':
		return c - 'a' + 10
	default:
		return c - 'A' + 10
	}
}

func isUnreserved(c byte) bool {
	return ('a' <= c && c <= 'z') || ('A' <= c && c <= 'Z') || ('0' <= c && c <= '9') ||
		c == '-' || c == '.' || c == '_' || c == '~'
}

func removeDotSegments(path string) string {
	if !strings.HasPrefix(path, "/") {
		path = "/" + path
	}
	segs := strings.Split(path[1:], "/")
	out := make([]string, 0, len(segs))
	for i, s := range segs {
		last := i == len(segs)-1
		switch s {
		case ".":
			if last {
				out = append(out, "")
			}
		case "..":
			if len(out) > 0 {
				out = out[:len(out)-1]
			}
			if last {
				out = append(out, "")
			}
		default:
			out = append(out, s)
		}
	}
	return "/" + strings.Join(out, "/")
}
