package ir

// BasicAuth is a SecurityPolicy's basicAuth on a route; the users are
// PolicyData.BasicAuthUsers. Owner is the policy that declared it (after a merge, possibly
// the parent): EG names one filter per owner.
type BasicAuth struct {
	Owner                 PolicyRef `json:"owner"`
	ForwardUsernameHeader string    `json:"forwardUsernameHeader,omitempty"`
}

// APIKeyAuth is a SecurityPolicy's apiKeyAuth on a route; the keys are PolicyData.APIKeys.
// KeySources are where a key is looked for, in spec order; ForwardClientIDHeader ("" for
// none) carries the client's ID upstream, and Sanitize removes the key from the request.
type APIKeyAuth struct {
	KeySources            []APIKeySource `json:"keySources,omitempty"`
	ForwardClientIDHeader string         `json:"forwardClientIDHeader,omitempty"`
	Sanitize              bool           `json:"sanitize,omitempty"`
}

// APIKeySource is one place a key is read from: a header, a query parameter or a cookie
// (exactly one is set).
type APIKeySource struct {
	Header string `json:"header,omitempty"`
	Query  string `json:"query,omitempty"`
	Cookie string `json:"cookie,omitempty"`
}
