package ir

// ResponseOverride is a BackendTrafficPolicy's responseOverride: one custom_response
// filter per policy, named after Config (backendtrafficpolicy/<namespace>/<name>), whose
// rules are tried in order.
type ResponseOverride struct {
	Config string                 `json:"config"`
	Rules  []ResponseOverrideRule `json:"rules"`
}

// ResponseOverrideRule is one rule: Index is its place in the policy's list (EG names the
// rule's action after it). It matches a response whose status is any of StatusCodes, whose
// headers match all of ResponseHeaders (a rule with neither cannot be built) and, with
// LocalReply set, that Envoy answered itself (true, source Local) or not (false, source
// Backend). It answers with Redirect when set, else with Response.
type ResponseOverrideRule struct {
	Index           int               `json:"index"`
	StatusCodes     []StatusCodeMatch `json:"statusCodes,omitempty"`
	ResponseHeaders []StringMatch     `json:"responseHeaders,omitempty"`
	LocalReply      *bool             `json:"localReply,omitempty"`
	Redirect        *ResponseRedirect `json:"redirect,omitempty"`
	Response        *OverrideResponse `json:"response,omitempty"`
}

// StatusCodeMatch is one status code (Value), or the inclusive range Range.
type StatusCodeMatch struct {
	Value int              `json:"value,omitempty"`
	Range *StatusCodeRange `json:"range,omitempty"`
}

// StatusCodeRange is an inclusive range of status codes.
type StatusCodeRange struct {
	Start int `json:"start"`
	End   int `json:"end"`
}

// ResponseRedirect is a redirect answer; empty fields keep the request's. Path replaces
// the whole path (EG v1.9 drops a prefix replacement); StatusCode has EG's default, 302.
type ResponseRedirect struct {
	Scheme     *string `json:"scheme,omitempty"`
	Hostname   string  `json:"hostname,omitempty"`
	Port       uint32  `json:"port,omitempty"`
	Path       *string `json:"path,omitempty"`
	StatusCode uint32  `json:"statusCode"`
}

// OverrideResponse is a local answer: Body is the inline body or the ConfigMap's (""
// for none), headers are added in order (Overwrite: set rather than appended).
type OverrideResponse struct {
	Body        string           `json:"body,omitempty"`
	ContentType string           `json:"contentType,omitempty"`
	StatusCode  *uint32          `json:"statusCode,omitempty"`
	Headers     []OverrideHeader `json:"headers,omitempty"`
}

// OverrideHeader is one response header of a local answer.
type OverrideHeader struct {
	Name      string `json:"name"`
	Value     string `json:"value"`
	Overwrite bool   `json:"overwrite,omitempty"`
}
