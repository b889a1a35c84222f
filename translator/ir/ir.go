// Package ir is the reference translator's intermediate model: plain, serialisable values
// between the Gateway API stage and the xDS stage. It holds decisions (what routes exist, in
// what order, to which endpoints) and no Envoy types.
package ir

import (
	"time"

	egv1a1 "github.com/envoyproxy/gateway/api/v1alpha1"
)

// XDS is everything one translation puts on the data plane.
type XDS struct {
	HTTP []*HTTPListener `json:"http,omitempty"`
	TCP  []*TCPListener  `json:"tcp,omitempty"`
	UDP  []*UDPListener  `json:"udp,omitempty"`
	// Ready is the readiness listener of each proxy (one per Gateway, or per GatewayClass
	// with mergeGateways): EG v1.9 puts it in every proxy's LDS.
	Ready []ReadyListener `json:"ready,omitempty"`
}

// ReadyListener is a proxy's readiness listener (EG v1.9 internal/gatewayapi/listener.go
// processProxyReadyListener): port 19003, path /ready, on 0.0.0.0, or on :: when its
// EnvoyProxy's ipFamily is IPv6 or DualStack (then IPv4-compatible).
type ReadyListener struct {
	Address    string `json:"address"`
	IPv4Compat bool   `json:"ipv4Compat,omitempty"`
}

// TCPListener is a Gateway listener of protocol TCP or TLS.
type TCPListener struct {
	Name string `json:"name"`
	// Gateway (namespace/name) owns the listener: its proxy is the one Envoy listener of
	// the port shares, unless Gateways are merged.
	Gateway string `json:"gateway"`
	Address string `json:"address"`
	// IPv4Compat: the :: address also takes IPv4 (EnvoyProxy ipFamily DualStack).
	IPv4Compat  bool   `json:"ipv4Compat,omitempty"`
	Port        uint32 `json:"port"`
	GatewayPort uint32 `json:"gatewayPort"`
	// AccessLog is the proxy's access logging (nil: EG's default).
	AccessLog *AccessLog `json:"accessLog,omitempty"`
	// Protocol is TCP or TLS.
	Protocol string `json:"protocol"`
	// TLS is set when Envoy terminates TLS (mode Terminate); nil for TCP and passthrough.
	TLS    *TLSConfig  `json:"tls,omitempty"`
	Routes []*TCPRoute `json:"routes,omitempty"`
	// Policies are the EG policies in force on this listener (set by the policy stage).
	Policies ListenerPolicies `json:"policies,omitempty"`
}

// TCPRoute is a TCPRoute or TLSRoute on a TCP/TLS listener: a filter chain that proxies
// bytes to its destination.
type TCPRoute struct {
	Name   string `json:"name"` // tcproute/<ns>/<name> or tlsroute/<ns>/<name>
	Source Source `json:"source"`
	// SNIs select the filter chain by server name; empty means any connection.
	SNIs        []string     `json:"snis,omitempty"`
	Destination *Destination `json:"destination"`
	// Policies are the EG policies in force on this route (set by the policy stage).
	Policies RoutePolicies `json:"policies,omitempty"`
}

// UDPListener is a Gateway listener of protocol UDP with its one route.
type UDPListener struct {
	Name        string     `json:"name"`
	Address     string     `json:"address"`
	IPv4Compat  bool       `json:"ipv4Compat,omitempty"`
	AccessLog   *AccessLog `json:"accessLog,omitempty"`
	Port        uint32     `json:"port"`
	GatewayPort uint32     `json:"gatewayPort"`
	Route       *UDPRoute  `json:"route,omitempty"`
}

// UDPRoute is the UDPRoute a UDP listener forwards datagrams for.
type UDPRoute struct {
	Name        string       `json:"name"`
	Source      Source       `json:"source"`
	Destination *Destination `json:"destination"`
	// Policies are the EG policies in force on this route (set by the policy stage).
	Policies RoutePolicies `json:"policies,omitempty"`
}

// HTTPListener is one Gateway listener of protocol HTTP. Several may share an Envoy port;
// the xDS stage folds them into one Envoy listener.
type HTTPListener struct {
	// Name is <gateway namespace>/<gateway name>/<listener name>.
	Name        string `json:"name"`
	Gateway     string `json:"gateway"` // namespace/name
	SectionName string `json:"sectionName"`
	// Address is 0.0.0.0, or :: when the Gateway's EnvoyProxy ipFamily is IPv6 or
	// DualStack (IPv4Compat with DualStack).
	Address    string `json:"address"`
	IPv4Compat bool   `json:"ipv4Compat,omitempty"`
	// AccessLog is the proxy's access logging (nil: EG's default).
	AccessLog *AccessLog `json:"accessLog,omitempty"`
	// Tracing is the proxy's tracing (nil: none).
	Tracing     *Tracing     `json:"tracing,omitempty"`
	Port        uint32       `json:"port"`        // the Envoy listener port
	GatewayPort uint32       `json:"gatewayPort"` // the port written on the Gateway
	Hostnames   []string     `json:"hostnames"`   // "*" when the listener names none
	Routes      []*HTTPRoute `json:"routes,omitempty"`
	// GRPC is set when a GRPCRoute attaches: EG then adds the gRPC-Web and gRPC stats filters.
	GRPC bool `json:"grpc,omitempty"`
	// Policies are the EG policies in force on this listener (set by the policy stage).
	Policies ListenerPolicies `json:"policies,omitempty"`
	// TLS is set on HTTPS listeners (TLS terminated by Envoy).
	TLS *TLSConfig `json:"tls,omitempty"`
	// DynamicModules is the dynamicModules allowlist of the Gateway's EnvoyProxy: the
	// modules EnvoyExtensionPolicies may load on this listener's routes.
	DynamicModules []egv1a1.DynamicModuleEntry `json:"dynamicModules,omitempty"`
	// EnvoyProxyGeoIP is the geoIP provider of the Gateway's EnvoyProxy, which SecurityPolicy
	// clientIPGeoLocations need (set by the Gateway API stage).
	EnvoyProxyGeoIP *egv1a1.EnvoyProxyGeoIP `json:"envoyProxyGeoIP,omitempty"`
	// GeoIP is what the clientIPGeoLocations of the SecurityPolicies on this listener's
	// routes need (set by the policy stage; nil when none uses them).
	GeoIP *ListenerGeoIP `json:"geoIP,omitempty"`
	// GRPCStats is the Gateway's EnvoyProxy telemetry.metrics.enableGRPCStats: when set it
	// decides whether the listener has the grpc_stats filter (nil: a listener with a
	// GRPCRoute has it, others do not).
	GRPCStats *bool `json:"grpcStats,omitempty"`
	// FilterOrder is the Gateway's EnvoyProxy spec.filterOrder: moves applied, in order,
	// after the HTTP filters are put in EG's default order.
	FilterOrder []FilterPosition `json:"filterOrder,omitempty"`
	// LuaValidation is the luaValidation of the Gateway's EnvoyProxy (nil: Strict), how
	// the policy stage checks EnvoyExtensionPolicy Lua scripts.
	LuaValidation *egv1a1.LuaValidation `json:"luaValidation,omitempty"`
}

// ListenerGeoIP: the geolocation fields the authorization rules of a listener's routes
// match on, and the MaxMind databases the geoip filter looks them up in.
type ListenerGeoIP struct {
	// Fields are the geolocation fields in use (country, region, city, asn, isp, anon,
	// anonVPN, anonHosting, anonTor, anonProxy; in that order). EG's geoip filter writes
	// each to an internal request header the RBAC rules match, and every route of the
	// listener removes those headers before the request goes upstream, also when the
	// policy failed.
	Fields []string `json:"fields"`
	// MaxMind is the provider once a policy validated on this listener; nil leaves the
	// listener without a geoip filter (EG reports the error on the policy).
	MaxMind *GeoIPMaxMind `json:"maxMind,omitempty"`
}

// GeoIPMaxMind is the local path of each MaxMind database the EnvoyProxy names ("" for one
// it does not).
type GeoIPMaxMind struct {
	CityDBPath        string `json:"cityDBPath,omitempty"`
	ASNDBPath         string `json:"asnDBPath,omitempty"`
	AnonymousIPDBPath string `json:"anonymousIPDBPath,omitempty"`
	ISPDBPath         string `json:"ispDBPath,omitempty"`
	CountryDBPath     string `json:"countryDBPath,omitempty"`
}

// TLSConfig is a terminating listener's certificates.
type TLSConfig struct {
	Certificates []TLSCertificate `json:"certificates"`
	// HTTP11Only: certificates overlap another listener's on the port, so ALPN offers only
	// http/1.1 to keep HTTP/2 clients from coalescing connections across them.
	HTTP11Only bool `json:"http11Only,omitempty"`
	// ClientValidation comes from the Gateway's spec.tls.frontend (HTTPS listeners); a
	// ClientTrafficPolicy's clientValidation replaces it.
	ClientValidation *ClientValidation `json:"clientValidation,omitempty"`
}

// TLSCertificate is one certificate and key, named <secret namespace>/<secret name>.
type TLSCertificate struct {
	Name        string `json:"name"`
	Certificate []byte `json:"-"`
	PrivateKey  []byte `json:"-"`
	// SDS is set instead of the PEM when the certificate comes from an SDS server.
	SDS *SDSSource `json:"sds,omitempty"`
}

// Source names the route object, rule and match an IR route comes from.
type Source struct {
	Kind      string    `json:"kind"`
	Namespace string    `json:"namespace"`
	Name      string    `json:"name"`
	Rule      int       `json:"rule"`
	Match     int       `json:"match"`
	Created   time.Time `json:"created"`
	// RuleName is the rule's optional name; EG records it as the section in xDS metadata.
	RuleName string `json:"ruleName,omitempty"`
}

// HTTPRoute is one (rule, match, hostname) of a route on a listener.
type HTTPRoute struct {
	Name        string         `json:"name"`
	Hostname    string         `json:"hostname"`
	Source      Source         `json:"source"`
	PathMatch   *StringMatch   `json:"pathMatch,omitempty"`
	Headers     []*StringMatch `json:"headers,omitempty"` // includes ":method" for a method match
	QueryParams []*StringMatch `json:"queryParams,omitempty"`
	// Cookies come from an HTTPRouteFilter's matches (RT-15, GR-04).
	Cookies []*StringMatch `json:"cookies,omitempty"`
	// Destination is nil when the rule has no backendRefs.
	Destination *Destination `json:"destination,omitempty"`
	// DirectResponse answers without an upstream (a rule with no usable backend).
	DirectResponse *DirectResponse `json:"directResponse,omitempty"`
	// IsHTTP2 marks gRPC routes: no WebSocket upgrade.
	IsHTTP2 bool `json:"isHTTP2,omitempty"`

	// What the rule's filters and timeouts add (EG's HTTPRoute filters).
	AddRequestHeaders     []AddHeader `json:"addRequestHeaders,omitempty"`
	RemoveRequestHeaders  []string    `json:"removeRequestHeaders,omitempty"`
	AddResponseHeaders    []AddHeader `json:"addResponseHeaders,omitempty"`
	RemoveResponseHeaders []string    `json:"removeResponseHeaders,omitempty"`
	// Redirect answers with a redirect instead of forwarding (RequestRedirect).
	Redirect *Redirect `json:"redirect,omitempty"`
	// URLRewrite changes the host and path before forwarding (URLRewrite).
	URLRewrite *URLRewrite `json:"urlRewrite,omitempty"`
	// CredentialInjection adds a credential to the request (an HTTPRouteFilter's).
	CredentialInjection *CredentialInjection `json:"credentialInjection,omitempty"`
	// BandwidthLimit is the bandwidthLimit of the BackendTrafficPolicy in force.
	BandwidthLimit *BandwidthLimit `json:"bandwidthLimit,omitempty"`
	// CORS is the rule's CORS filter (Gateway API); it takes precedence over a
	// SecurityPolicy's cors.
	CORS *CORS `json:"cors,omitempty"`
	// Mirrors copy the request to other backends (RequestMirror), in filter order.
	Mirrors []*Mirror `json:"mirrors,omitempty"`
	// Timeout is the route timeout (timeouts.request, or timeouts.backendRequest without retry).
	Timeout *time.Duration `json:"timeout,omitempty"`
	// Retry is the rule's retry policy.
	Retry *Retry `json:"retry,omitempty"`
	// Policies are the EG policies in force on this route (set by the policy stage).
	Policies RoutePolicies `json:"policies,omitempty"`
	// PolicyData is what those policies read from Secrets and ConfigMaps (policy stage).
	PolicyData *PolicyData `json:"policyData,omitempty"`
	// RateLimit is the BackendTrafficPolicy's rate limiting, rules named after the policy
	// that declared each (policy stage; BTP-03, MRG-06).
	RateLimit *RateLimit `json:"rateLimit,omitempty"`
}

// StringMatch is one matcher; exactly one of Exact, Prefix, Suffix, SafeRegex is set.
type StringMatch struct {
	Name      string  `json:"name,omitempty"`
	Exact     *string `json:"exact,omitempty"`
	Prefix    *string `json:"prefix,omitempty"`
	Suffix    *string `json:"suffix,omitempty"`
	SafeRegex *string `json:"safeRegex,omitempty"`
}

// Value returns the set value, whatever its kind.
func (m *StringMatch) Value() string {
	for _, p := range []*string{m.Exact, m.Prefix, m.Suffix, m.SafeRegex} {
		if p != nil {
			return *p
		}
	}
	return ""
}

// Destination is the rule's backends. Name is the rule's cluster name.
type Destination struct {
	Name     string     `json:"name"`
	Settings []*Backend `json:"settings"`
	// HTTP2 makes the upstream speak HTTP/2 (gRPC backends).
	HTTP2 bool `json:"http2,omitempty"`
	// BackendLB is the backend cluster's BackendLBPolicy (that of its first backend that has
	// one); embedded so that /snapshots shows its fields on the cluster (BLP-08).
	*BackendLB
}

// Backend is one backendRef of the rule, resolved to endpoints.
type Backend struct {
	Name      string     `json:"name"` // <cluster>/backend/<i>
	Weight    uint32     `json:"weight"`
	Endpoints []Endpoint `json:"endpoints,omitempty"`
	// Invalid backends (not found, not permitted...) still take their share of the weight
	// and answer 500 for it (RT-12).
	Invalid bool `json:"invalid,omitempty"`
	// DNS: the endpoints are hostnames (an EG Backend with FQDN endpoints), resolved by Envoy.
	DNS bool `json:"dns,omitempty"`
	// DynamicResolver: an EG Backend of type DynamicResolver, without endpoints: Envoy
	// resolves the host each request names (dynamic forward proxy).
	DynamicResolver bool `json:"dynamicResolver,omitempty"`
	// HTTP2: the Service port's appProtocol asks for HTTP/2 (kubernetes.io/h2c, or grpc),
	// so the destination's cluster speaks HTTP/2 even for an HTTPRoute, as EG's
	// resolveBackendProtocol decides.
	HTTP2 bool `json:"http2,omitempty"`
	// Service identifies the Kubernetes object behind the backend.
	Kind        string `json:"kind"`
	Namespace   string `json:"namespace"`
	ServiceName string `json:"serviceName"`
	Port        uint32 `json:"port"`
	// Filters are the backendRef's own filters; a backend with filters gets a cluster of
	// its own so that they apply only to its share of the traffic.
	Filters *BackendFilters `json:"filters,omitempty"`
	// TLS is set when a BackendTLSPolicy makes Envoy speak TLS to this backend.
	TLS *UpstreamTLS `json:"tls,omitempty"`
	// BackendLB is the BackendLBPolicy resolved for the backend's Service; embedded so that
	// its fields (loadBalancing, session_persistence, circuitBreaker) sit on the backend.
	*BackendLB
	// Merged is the cluster the backend shares with the other routes of its Gateway that
	// reach it (EnvoyProxy mergeBackends: service/<ns>/<name>/<port>/<protocol>); "" when
	// the backend is in the rule's own cluster (set by the policy stage).
	Merged string `json:"merged,omitempty"`
}

// Endpoint is an address the backend resolves to.
type Endpoint struct {
	Host string `json:"host"`
	Port uint32 `json:"port"`
	// Path is a unix domain socket's path (Host and Port empty): an EG Backend's unix
	// endpoint, which EG takes for a policy's backend (ext_authz...), not a route's.
	Path string `json:"path,omitempty"`
}

// DirectResponse is a fixed answer.
type DirectResponse struct {
	Status uint32 `json:"status"`
	Body   string `json:"body,omitempty"`
}

// ValidWeight sums the weights of valid backends, and InvalidWeight the rest.
// MergedBackends are the backends that share a cluster with other routes (mergeBackends).
func (d *Destination) MergedBackends() []*Backend {
	var out []*Backend
	for _, s := range d.Settings {
		if s.Merged != "" {
			out = append(out, s)
		}
	}
	return out
}

// Unmerged is the destination with only the backends of the rule's own cluster(s); d
// itself when none is merged.
func (d *Destination) Unmerged() *Destination {
	if len(d.MergedBackends()) == 0 {
		return d
	}
	c := *d
	c.Settings = nil
	for _, s := range d.Settings {
		if s.Merged == "" {
			c.Settings = append(c.Settings, s)
		}
	}
	return &c
}

// ClusterName is the one cluster of a TCP, UDP or TLS route: the rule's, or the shared
// cluster of its one merged backend.
func (d *Destination) ClusterName() string {
	if m := d.MergedBackends(); len(m) > 0 && len(d.Unmerged().Settings) == 0 {
		return m[0].Merged
	}
	return d.Name
}

func (d *Destination) ValidWeight() (valid, invalid uint32) {
	for _, s := range d.Settings {
		if s.Invalid {
			invalid += s.Weight
		} else {
			valid += s.Weight
		}
	}
	return valid, invalid
}

// AddHeader is one header a filter adds. Append keeps the values already there (Gateway
// API "add"); otherwise the value replaces them ("set").
type AddHeader struct {
	Name   string `json:"name"`
	Value  string `json:"value"`
	Append bool   `json:"append,omitempty"`
}

// PathModifier replaces the whole path or the part the route's prefix matched, or (an
// HTTPRouteFilter's urlRewrite) what a regular expression matches.
type PathModifier struct {
	FullReplace        *string       `json:"fullReplace,omitempty"`
	PrefixMatchReplace *string       `json:"prefixMatchReplace,omitempty"`
	RegexMatchReplace  *RegexReplace `json:"regexMatchReplace,omitempty"`
}

// RegexReplace substitutes what an RE2 pattern matches (\1... for its groups).
type RegexReplace struct {
	Pattern      string `json:"pattern"`
	Substitution string `json:"substitution"`
}

// HostModifier is an HTTPRouteFilter's host rewrite: from a request header, the backend's
// own host name (Envoy's auto host rewrite), or the path through a regular expression.
type HostModifier struct {
	Header    *string       `json:"header,omitempty"`
	Backend   bool          `json:"backend,omitempty"`
	PathRegex *RegexReplace `json:"pathRegex,omitempty"`
}

// Redirect is a RequestRedirect filter: each set field replaces that part of the URL.
type Redirect struct {
	Scheme     *string       `json:"scheme,omitempty"`
	Hostname   *string       `json:"hostname,omitempty"`
	Port       *uint32       `json:"port,omitempty"`
	Path       *PathModifier `json:"path,omitempty"`
	StatusCode *int32        `json:"statusCode,omitempty"`
}

// URLRewrite is a URLRewrite filter, and the urlRewrite of HTTPRouteFilters (Host, a regex
// Path, AppendXForwardedHost); EG refuses a rule where two of them rewrite the same part.
type URLRewrite struct {
	Hostname *string       `json:"hostname,omitempty"`
	Host     *HostModifier `json:"host,omitempty"`
	Path     *PathModifier `json:"path,omitempty"`
	// AppendXForwardedHost: whether a rewritten host keeps the original in
	// x-forwarded-host; nil is yes.
	AppendXForwardedHost *bool `json:"appendXForwardedHost,omitempty"`
}

// CredentialInjection is an HTTPRouteFilter's credentialInjection: the value of a Secret's
// "credential" key set as a request header (Authorization by default). Name is the filter's
// config name, httproutefilter/<namespace>/<name>.
type CredentialInjection struct {
	Name       string  `json:"name"`
	Header     *string `json:"header,omitempty"`
	Overwrite  *bool   `json:"overwrite,omitempty"`
	Credential []byte  `json:"-"`
}

// Mirror sends a copy of the request to a cluster of its own; Percent nil means all
// requests.
type Mirror struct {
	Destination *Destination `json:"destination"`
	Percent     *float32     `json:"percent,omitempty"`
}

// Retry is an HTTPRoute rule's retry: Codes replace the default retriable status codes.
type Retry struct {
	NumRetries    *uint32        `json:"numRetries,omitempty"`
	BackOff       *time.Duration `json:"backOff,omitempty"`
	PerTryTimeout *time.Duration `json:"perTryTimeout,omitempty"`
	Codes         []uint32       `json:"codes,omitempty"`
}

// BackendFilters are the filters EG applies per backendRef: header changes and a host
// rewrite.
type BackendFilters struct {
	AddRequestHeaders     []AddHeader `json:"addRequestHeaders,omitempty"`
	RemoveRequestHeaders  []string    `json:"removeRequestHeaders,omitempty"`
	AddResponseHeaders    []AddHeader `json:"addResponseHeaders,omitempty"`
	RemoveResponseHeaders []string    `json:"removeResponseHeaders,omitempty"`
	HostRewrite           *string     `json:"hostRewrite,omitempty"`
}

// FilterPosition moves every HTTP filter of kind Name (a filter's kind is its name or the
// prefix of it, as "envoy.filters.http.jwt_authn" or "envoy.filters.http.wasm/...") right
// before the first filter of kind Before, or right after the last one of kind After.
type FilterPosition struct {
	Name   string `json:"name"`
	Before string `json:"before,omitempty"`
	After  string `json:"after,omitempty"`
}
