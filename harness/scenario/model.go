// Package scenario is the scenario file format and its strict loader. A scenario is data:
// Kubernetes objects, the EG settings they run under, and what must come out (admission
// verdicts, statuses, xDS facts, traffic answers); goldens are implied.
package scenario

import (
	"reflect"
	"slices"

	"github.com/egharness/egharness/translator/config"
	"github.com/egharness/egharness/translator/resource"
)

// Scenario is one file under scenarios/.
type Scenario struct {
	Name        string   `json:"name"`
	Description string   `json:"description,omitempty"`
	Covers      []string `json:"covers"`
	Labels      []string `json:"labels,omitempty"`
	// Profiles the scenario runs under; [v1.9] when empty.
	Profiles []string `json:"profiles,omitempty"`
	// Config is the EnvoyGateway settings (extensionApis, runtimeFlags, mergeGateways).
	Config *config.Config `json:"config,omitempty"`
	// Resources is inline multi-document YAML; ResourcesFile names a file beside the scenario.
	Resources     string `json:"resources,omitempty"`
	ResourcesFile string `json:"resourcesFile,omitempty"`
	// Include names shared resource files beside the scenario (e.g. generated certificates),
	// decoded before the scenario's own resources.
	Include []string `json:"include,omitempty"`
	Expect  Expect   `json:"expect"`
	// ExpectByProfile replaces, for one profile, each section of Expect it sets.
	ExpectByProfile map[string]Expect `json:"expectByProfile,omitempty"`
	// Divergences are known, explained disagreements of another implementation with the
	// reference on this scenario (see Divergence).
	Divergences []Divergence `json:"divergences,omitempty"`
	// Upgrade is what `egharness upgrade-check` must find between two of the scenario's
	// profiles (suites/upgrade).
	Upgrade *UpgradeExpect `json:"upgrade,omitempty"`

	// Set by the loader.
	File string `json:"-"`
	Area string `json:"-"`
	// Path is the file's path under the loader's Root without .yaml, slash-separated
	// (routing/weighted-canary): where its goldens are (golden/<Path>/<profile>). A file
	// outside Root gets <Area>/<Name>.
	Path     string            `json:"-"`
	Objects  []resource.Object `json:"-"`
	Settings config.Config     `json:"-"` // Config combined with an EnvoyGateway document
	lines    func(path string) int
}

// Divergence records that an implementation (egctl@v1.9.1, exec:..., as --impl names it)
// disagrees with the reference on this scenario, and why. The differences it lists are
// reported as explained instead of failing; a divergence that no longer matches any
// difference fails, so the record stays true.
type Divergence struct {
	Impl string `json:"impl"`
	// Profiles it applies to; every profile when empty.
	Profiles []string `json:"profiles,omitempty"`
	// Reason says what the implementation does differently and why the reference is right
	// (or why the two cannot agree).
	Reason string `json:"reason"`
	// Facts are the differences explained: fact keys as the run prints them ("routes
	// default/eg/http/default/eg/http/app_example_com"), expectation paths
	// ("expect.traffic[2]"), or "error" for a translation that fails; '*' matches any text.
	Facts []string `json:"facts"`
}

// DivergencesFor returns the divergences recorded for implementation impl under profile p.
func (s *Scenario) DivergencesFor(impl, p string) []Divergence {
	var out []Divergence
	for _, d := range s.Divergences {
		if d.Impl == impl && (len(d.Profiles) == 0 || slices.Contains(d.Profiles, p)) {
			out = append(out, d)
		}
	}
	return out
}

// Expect is what a translation must produce. Objects are named Kind/namespace/name (or
// Kind/name for cluster-scoped kinds).
type Expect struct {
	Admission []AdmissionExpect `json:"admission,omitempty"`
	Statuses  []StatusExpect    `json:"statuses,omitempty"`
	XDS       []XDSExpect       `json:"xds,omitempty"`
	Traffic   []TrafficExpect   `json:"traffic,omitempty"`
	// Warnings each must be contained in one of the translation's warnings.
	Warnings []string `json:"warnings,omitempty"`
	// Patches checks what EnvoyPatchPolicy operations did.
	Patches []PatchExpect `json:"patches,omitempty"`
	// Snapshot checks backend clusters of the data-plane snapshot that `egharness serve`
	// shows at /snapshots (BLP-08).
	Snapshot []SnapshotExpect `json:"snapshot,omitempty"`
}

// SnapshotExpect checks one backend cluster of the data-plane snapshot, as the management
// API's /snapshots computes it: the resolved BackendLBPolicy fields. Each field given must
// equal the snapshot's exactly (as JSON); fields listed in Absent must not be there (a
// field appears only when a policy resolved it for that backend).
type SnapshotExpect struct {
	// ID ties the expectation to one behavior ID of the scenario's covers: the ID counts as
	// covered by assertion through it. Untagged expectations tie to the scenario's only ID
	// when it covers one, else to none (see Assertions).
	ID string `json:"id,omitempty"`
	// Cluster is the backend cluster's name (e.g. httproute/default/app/rule/0).
	Cluster string `json:"cluster,omitempty"`
	// IRRoute, instead of Cluster, names a route of the snapshot's IR (the `ir` of
	// /snapshots, the reference translator's model before xDS and before any
	// EnvoyPatchPolicy; In: its IR listener, e.g. default/eg/http). Fields are fields its
	// JSON must have (matched as a subset, like an xds expectation's fields) and Absent
	// names top-level fields it must not have.
	IRRoute            string         `json:"irRoute,omitempty"`
	In                 string         `json:"in,omitempty"`
	Fields             map[string]any `json:"fields,omitempty"`
	LoadBalancing      map[string]any `json:"loadBalancing,omitempty"`
	SessionPersistence map[string]any `json:"session_persistence,omitempty"`
	CircuitBreaker     map[string]any `json:"circuitBreaker,omitempty"`
	// Absent names fields (loadBalancing, session_persistence, circuitBreaker) the cluster
	// must not show, or top-level fields the IR route must not have.
	Absent []string `json:"absent,omitempty"`
}

// Patch outcomes a PatchExpect can name.
const (
	OutcomeHit  = "hit"
	OutcomeMiss = "miss"
)

// PatchExpect checks one operation of an EnvoyPatchPolicy: whether it hit (changed the xDS)
// or missed, and why.
type PatchExpect struct {
	// ID ties the expectation to one behavior ID of the scenario's covers: the ID counts as
	// covered by assertion through it. Untagged expectations tie to the scenario's only ID
	// when it covers one, else to none (see Assertions).
	ID string `json:"id,omitempty"`
	// Policy is EnvoyPatchPolicy/namespace/name.
	Policy string `json:"policy"`
	// Operation is the index in the policy's jsonPatches.
	Operation int `json:"operation"`
	// Outcome is hit or miss.
	Outcome string `json:"outcome"`
	// Reason must be contained in a miss's reason (e.g. "no such resource", "test failed").
	Reason string `json:"reason,omitempty"`
}

// AdmissionExpect names an object the API server refuses (or, with allowed: true, admits).
// Any object not listed must be admitted.
type AdmissionExpect struct {
	// ID ties the expectation to one behavior ID of the scenario's covers: the ID counts as
	// covered by assertion through it. Untagged expectations tie to the scenario's only ID
	// when it covers one, else to none (see Assertions).
	ID      string `json:"id,omitempty"`
	Object  string `json:"object"`
	Allowed bool   `json:"allowed"`
	// Message must be contained in the refusal.
	Message string `json:"message,omitempty"`
}

// StatusExpect checks conditions of an object, of one of its parents/ancestors (Parent),
// or of one Gateway listener (Listener).
type StatusExpect struct {
	// ID ties the expectation to one behavior ID of the scenario's covers: the ID counts as
	// covered by assertion through it. Untagged expectations tie to the scenario's only ID
	// when it covers one, else to none (see Assertions).
	ID     string `json:"id,omitempty"`
	Object string `json:"object"`
	// Parent is Kind/namespace/name[/sectionName][:port] of a route parent or policy ancestor.
	Parent         string            `json:"parent,omitempty"`
	Listener       string            `json:"listener,omitempty"`
	AttachedRoutes *int32            `json:"attachedRoutes,omitempty"`
	Conditions     []ConditionExpect `json:"conditions,omitempty"`
	// Absent: the object (or that parent entry) has no status at all.
	Absent bool `json:"absent,omitempty"`
	// Only: the conditions listed (not absent) are all there are; a condition of any other
	// type fails, so an extra condition an implementation adds (a GEP-713 PolicyAffected on
	// a policy's target, S0-25) shows.
	Only bool `json:"only,omitempty"`
}

// ConditionExpect checks one condition; empty fields are not checked, Message is a substring.
type ConditionExpect struct {
	Type    string `json:"type"`
	Status  string `json:"status,omitempty"`
	Reason  string `json:"reason,omitempty"`
	Message string `json:"message,omitempty"`
	// Absent: no condition of this type.
	Absent bool `json:"absent,omitempty"`
}

// XDS kinds an XDSExpect can name.
const (
	KindListener    = "Listener"
	KindRouteConfig = "RouteConfiguration"
	KindVirtualHost = "VirtualHost"
	KindRoute       = "Route"
	KindCluster     = "Cluster"
	KindLoadAssign  = "ClusterLoadAssignment"
	KindSecret      = "Secret"
	KindHTTPFilter  = "HTTPFilter"
	KindFilterChain = "FilterChain"
	// Policy feature parts: a jwt_authn provider or requirement (by its key, in a
	// listener), a network filter of a listener's filter chains, and a filter configured on
	// a route through typed_per_filter_config (by filter name, in a route).
	KindJWTProvider    = "JWTProvider"
	KindJWTRequirement = "JWTRequirement"
	KindNetworkFilter  = "NetworkFilter"
	KindRouteFilter    = "RouteFilter"
)

// XDSKinds lists the kinds an xds expectation may name.
var XDSKinds = []string{KindListener, KindRouteConfig, KindVirtualHost, KindRoute, KindCluster, KindLoadAssign,
	KindSecret, KindHTTPFilter, KindFilterChain,
	KindJWTProvider, KindJWTRequirement, KindNetworkFilter, KindRouteFilter}

// XDSExpect checks that a named xDS resource (or part) is present or absent.
type XDSExpect struct {
	// ID ties the expectation to one behavior ID of the scenario's covers: the ID counts as
	// covered by assertion through it. Untagged expectations tie to the scenario's only ID
	// when it covers one, else to none (see Assertions).
	ID   string `json:"id,omitempty"`
	Kind string `json:"kind"`
	Name string `json:"name"`
	// In narrows the search: the listener of an HTTPFilter, the route configuration of a
	// VirtualHost, the virtual host of a Route.
	In     string `json:"in,omitempty"`
	Absent bool   `json:"absent,omitempty"`
	// Routes, for a VirtualHost: its route names, exactly and in order.
	Routes []string `json:"routes,omitempty"`
	// Domains, for a VirtualHost: its domains, exactly.
	Domains []string `json:"domains,omitempty"`
	// ClusterType, for a Cluster: its discovery type (EDS, STATIC, STRICT_DNS...) or the
	// name of its cluster extension (envoy.cluster.dns).
	ClusterType string `json:"clusterType,omitempty"`
	// ChainBlocks and KeyBlocks, for a Secret: the PEM block types of its certificate chain
	// and private key, in order; the bytes must be exactly those blocks in canonical PEM
	// (no text around them, LF line breaks, 64 columns).
	ChainBlocks []string `json:"chainBlocks,omitempty"`
	KeyBlocks   []string `json:"keyBlocks,omitempty"`
	// ALPN, for a FilterChain (In: its listener): the protocols its TLS context offers,
	// exactly ([] for none is not expressible; use http/1.1 or h2,http/1.1).
	ALPN []string `json:"alpn,omitempty"`
	// Certificates, for a FilterChain: its TLS certificate SDS configs in order, each
	// <secret name> when served by EG over ADS or <secret name>@<cluster> when fetched from
	// an external SDS server through that cluster.
	Certificates []string `json:"certificates,omitempty"`
	// Disabled, for an HTTPFilter: whether the listener has it disabled (enabled per route).
	Disabled *bool `json:"disabled,omitempty"`
	// HealthChecks, for a Cluster: the kinds of its active health checks in order (HTTP,
	// TCP, GRPC), exactly; [] is not expressible (use healthChecks: [none]).
	HealthChecks []string `json:"healthChecks,omitempty"`
	// OutlierDetection, for a Cluster: whether it ejects failing endpoints (passive checks).
	OutlierDetection *bool `json:"outlierDetection,omitempty"`
	// TrustedCAs, for a validation-context Secret (a client-validation CA bundle): its CA
	// certificates in order, each as "<subject CN> until <YYYY-MM-DD>" (the NotAfter day).
	TrustedCAs []string `json:"trustedCAs,omitempty"`
	// The downstream TLS a ClientTrafficPolicy sets, for a FilterChain: the TLS protocol
	// range as Envoy names it (TLSv1_2, TLSv1_3; "auto" for Envoy's default), the cipher
	// suites exactly, the validation-context SDS secret client certificates are checked
	// against ("none": client validation without a CA; "off": no client validation), and
	// whether a client certificate is required.
	MinTLS                   string   `json:"minTLS,omitempty"`
	MaxTLS                   string   `json:"maxTLS,omitempty"`
	Ciphers                  []string `json:"ciphers,omitempty"`
	ClientCA                 string   `json:"clientCA,omitempty"`
	RequireClientCertificate *bool    `json:"requireClientCertificate,omitempty"`
	// HCM, for a FilterChain (a plain HTTP port's default chain included): fields its HTTP
	// connection manager must have, as protojson (lowerCamelCase); Fields, for a Listener, a
	// Route, a Cluster or a Secret: fields it must have. Both match as a subset: every key given must be there with an
	// equal value (objects recursively, lists element by element with the same length).
	HCM    map[string]any `json:"hcm,omitempty"`
	Fields map[string]any `json:"fields,omitempty"`
	// Prefix with Names, instead of Name: the resources of the kind (In narrowing as for
	// Name) whose names start with Prefix are exactly Names, in the order the translation
	// lists them, each as often as it appears (so a resource built twice fails, and so does
	// one missing or one more).
	Prefix string   `json:"prefix,omitempty"`
	Names  []string `json:"names,omitempty"`
}

// TrafficExpect sends one request through the generated config.
type TrafficExpect struct {
	// ID ties the expectation to one behavior ID of the scenario's covers: the ID counts as
	// covered by assertion through it. Untagged expectations tie to the scenario's only ID
	// when it covers one, else to none (see Assertions).
	ID      string        `json:"id,omitempty"`
	Name    string        `json:"name,omitempty"`
	Request Request       `json:"request"`
	Expect  TrafficResult `json:"expect"`
}

// Request is what a client sends. Port is the Gateway listener port (80), or the Envoy port.
type Request struct {
	Port    uint32            `json:"port"`
	Host    string            `json:"host"`
	Path    string            `json:"path,omitempty"`
	Method  string            `json:"method,omitempty"`
	Headers map[string]string `json:"headers,omitempty"`
	SNI     string            `json:"sni,omitempty"`
	// GRPC sends a gRPC call: method POST and content-type application/grpc. Path is then
	// /<service>/<method>.
	GRPC bool `json:"grpc,omitempty"`
	// Protocol is TCP or UDP for a layer-4 connection (the answer is the cluster it is
	// proxied to); empty for HTTP.
	Protocol string `json:"protocol,omitempty"`
	// ClientIP is the client's address, for authorization rules on client CIDRs.
	ClientIP string `json:"clientIP,omitempty"`
	// Random picks among weighted clusters and weighted backends, as Envoy's route check
	// tool's random value does (value modulo the total weight).
	Random *uint64 `json:"random,omitempty"`
	// Inflight is how many requests to the chosen cluster are already in flight: at or over
	// the cluster's circuit breaker (max_requests), Envoy answers 503 at once.
	Inflight uint32 `json:"inflight,omitempty"`
	// After is how many requests like this one were sent just before it: rate limits count
	// them (global rules at EG's rate limit service, local token buckets), so past a limit
	// the answer is 429.
	After uint32 `json:"after,omitempty"`
	// Gateway (namespace/name) is the Gateway whose proxy the request is sent to: EG runs
	// an Envoy per Gateway, so when Gateways bind the same port it says which one answers.
	Gateway string `json:"gateway,omitempty"`
	// OAuth2Login signs in first, on a route with an OIDC policy: the request is sent
	// without a session and redirected to the provider's authorization endpoint, the
	// provider's code comes back to the redirect URL, Envoy exchanges it at the token
	// endpoint and sets its session cookies, and the request is sent again with them. The
	// expectation is the answer to that last request.
	OAuth2Login bool `json:"oauth2Login,omitempty"`
	// HeaderBytes adds an x-padding header this many bytes long (name and value), to
	// cross a listener's max_request_headers_kb. The loader turns
	// it into Headers, so the route checker and the real Envoy get the same request.
	HeaderBytes int `json:"headerBytes,omitempty"`
}

// MethodOrDefault is the request's method: GET when the scenario names none.
func (r Request) MethodOrDefault() string {
	if r.Method == "" {
		return "GET"
	}
	return r.Method
}

// PathOrDefault is the request's path: / when the scenario names none.
func (r Request) PathOrDefault() string {
	if r.Path == "" {
		return "/"
	}
	return r.Path
}

// PaddingHeader is the header HeaderBytes adds.
const PaddingHeader = "x-padding"

// maxHeaderBytes bounds HeaderBytes: Envoy takes at most 8192 KiB of headers.
const maxHeaderBytes = 8192 * 1024

// TrafficResult is the answer; empty fields are not checked.
type TrafficResult struct {
	Status  int    `json:"status,omitempty"`
	Cluster string `json:"cluster,omitempty"`
	// Backend is the locality (backendRef) the request lands on, e.g.
	// httproute/default/app/rule/0/backend/1.
	Backend     string `json:"backend,omitempty"`
	Route       string `json:"route,omitempty"`
	VirtualHost string `json:"virtualHost,omitempty"`
	Listener    string `json:"listener,omitempty"`
	Body        string `json:"body,omitempty"`
	Location    string `json:"location,omitempty"`
	// GRPCStatus is the gRPC status code name a gRPC client reads from the answer when Envoy
	// answers itself (404 → UNIMPLEMENTED, 500 → UNKNOWN, 503 → UNAVAILABLE...), "OK" when a
	// backend is reached.
	GRPCStatus string `json:"grpcStatus,omitempty"`
	// RequestHeaders are headers of the request as forwarded to the backend, after the
	// route's header changes and rewrites (":authority" and ":path" show host and path
	// rewrites). An empty value means the header must be absent. Names are case-insensitive.
	RequestHeaders map[string]string `json:"requestHeaders,omitempty"`
	// UpstreamTLS is the TLS Envoy opens to the backend the request reaches (BackendTLSPolicy).
	UpstreamTLS *UpstreamTLSExpect `json:"upstreamTLS,omitempty"`
	// HashPolicy is what the route hashes on for consistent hashing: sourceIP,
	// header:<name> (header::authority for the host), or "none".
	HashPolicy string `json:"hashPolicy,omitempty"`
	// SessionCookie is the cookie the route keeps sessions with, or "none".
	SessionCookie string `json:"sessionCookie,omitempty"`
	// LoadBalancer is the cluster's load balancing policy extension, e.g.
	// envoy.load_balancing_policies.maglev.
	LoadBalancer string `json:"loadBalancer,omitempty"`

	// What the HTTP filters do with the request (policy features). Filters are filters that
	// must act on it and FiltersAbsent filters that must not, by short name (jwt_authn,
	// cors, csrf, lua, basic_auth, api_key_auth, ext_authz, oauth2, rbac...; ratelimit and
	// local_ratelimit act when one of the route's rate limits selects the request).
	Filters       []string `json:"filters,omitempty"`
	FiltersAbsent []string `json:"filtersAbsent,omitempty"`
	// AnsweredBy is the filter that answers the request itself (jwt_authn for a 401, csrf
	// for a 403, cors for a preflight), or "none" for a request no filter answers.
	AnsweredBy string `json:"answeredBy,omitempty"`
	// JWT is how jwt_authn treats the request: required, optional or failOpen.
	JWT string `json:"jwt,omitempty"`
	// CSRF is how the CSRF filter treats it: enforced, shadowed or partial.
	CSRF string `json:"csrf,omitempty"`
	// RateLimitDomains are the rate limit service domains the request is counted in (one
	// per ratelimit filter whose rate limits select it), exactly, in any order.
	RateLimitDomains []string `json:"rateLimitDomains,omitempty"`
}

// UpstreamTLSExpect checks the upstream TLS context of the backend a request reaches; empty
// fields are not checked.
type UpstreamTLSExpect struct {
	// Plaintext: Envoy speaks no TLS to that backend.
	Plaintext bool `json:"plaintext,omitempty"`
	// SNI is the server name Envoy sends.
	SNI string `json:"sni,omitempty"`
	// CASecret is the SDS secret holding the trust anchors (e.g. system_ca_certificates).
	CASecret string `json:"caSecret,omitempty"`
	// Trust is where those anchors come from: Inline (PEM from CA refs), System (the proxy's
	// system store file) or External (an SDS server).
	Trust string `json:"trust,omitempty"`
	// SubjectAltNames the backend certificate must carry, as DNS:<name> or URI:<uri>, exactly.
	SubjectAltNames []string `json:"subjectAltNames,omitempty"`
	// MinVersion and MaxVersion are Envoy's TLS protocol names (TLSv1_2, TLSv1_3).
	MinVersion string `json:"minVersion,omitempty"`
	MaxVersion string `json:"maxVersion,omitempty"`
	// InsecureSkipVerify: Envoy does not verify the backend's certificate (no validation
	// context at all).
	InsecureSkipVerify bool `json:"insecureSkipVerify,omitempty"`
	// ClientCertificate is the SDS secret of the certificate Envoy presents to the backend
	// (e.g. <namespace>/<secret>), or "none".
	ClientCertificate string `json:"clientCertificate,omitempty"`
	// ALPN is the protocol list Envoy offers, exactly; ["none"] for no ALPN.
	ALPN []string `json:"alpn,omitempty"`
}

// IsZero reports whether the result checks nothing.
func (r TrafficResult) IsZero() bool {
	headers := r.RequestHeaders
	r.RequestHeaders = nil
	filters := len(r.Filters) + len(r.FiltersAbsent)
	r.Filters, r.FiltersAbsent = nil, nil
	return len(headers) == 0 && filters == 0 && r.UpstreamTLS == nil && reflect.DeepEqual(r, TrafficResult{})
}

// ProfilesOrDefault returns the profiles the scenario runs under.
func (s *Scenario) ProfilesOrDefault() []string {
	if len(s.Profiles) == 0 {
		return []string{"v1.9"}
	}
	return s.Profiles
}

// ExpectFor returns the expectations under profile p: each section of
// ExpectByProfile[p] that is set replaces the base one.
func (s *Scenario) ExpectFor(p string) Expect {
	e := s.Expect
	o, ok := s.ExpectByProfile[p]
	if !ok {
		return e
	}
	if o.Admission != nil {
		e.Admission = o.Admission
	}
	if o.Statuses != nil {
		e.Statuses = o.Statuses
	}
	if o.XDS != nil {
		e.XDS = o.XDS
	}
	if o.Traffic != nil {
		e.Traffic = o.Traffic
	}
	if o.Warnings != nil {
		e.Warnings = o.Warnings
	}
	if o.Patches != nil {
		e.Patches = o.Patches
	}
	if o.Snapshot != nil {
		e.Snapshot = o.Snapshot
	}
	return e
}

// Line returns the line in the scenario file of a field path (e.g. expect.statuses[1]),
// or 0 when unknown.
func (s *Scenario) Line(path string) int {
	if s.lines == nil {
		return 0
	}
	return s.lines(path)
}

// UpgradeExpect is the findings of an upgrade check between two profiles. Every breaking or
// warning finding must be listed; info findings are checked when listed.
type UpgradeExpect struct {
	From     string          `json:"from"`
	To       string          `json:"to"`
	Findings []FindingExpect `json:"findings"`
}

// FindingExpect is one expected finding (it matches every finding with the same ID, object
// and severity). Absent: no such finding.
type FindingExpect struct {
	ID       string `json:"id"`
	Object   string `json:"object"`
	Severity string `json:"severity"`
	// Summary must be contained in the finding's summary, when set.
	Summary string `json:"summary,omitempty"`
	// Affects lists objects (Kind/namespace/name) the finding must name as context: the
	// route and Gateway a policy's change shows in.
	Affects []string `json:"affects,omitempty"`
	Absent  bool     `json:"absent,omitempty"`
}

// IsUpgrade reports whether the scenario is an upgrade scenario: it has an upgrade block, or
// lives in scenarios/upgrade and runs under two or more profiles.
func (s *Scenario) IsUpgrade() bool {
	return s.Upgrade != nil || (s.Area == "upgrade" && len(s.ProfilesOrDefault()) >= 2)
}

// Assertions counts, for each behavior ID the scenario covers, the expectations tied to it
// (every profile's, and the upgrade findings'): an expectation with an id ties to that ID;
// an untagged one (and each expected warning) ties to the scenario's only ID when it covers
// exactly one, else to none; an upgrade finding ties to its own ID. An ID of covers with no
// tied expectation is covered by its label only (and by the goldens, if the scenario has
// them): nothing but bytes written from the code under test would fail if it broke.
func (s *Scenario) Assertions() map[string]int {
	out := map[string]int{}
	covers := map[string]bool{}
	for _, id := range s.Covers {
		covers[id] = true
		out[id] += 0
	}
	tie := func(id string) {
		switch {
		case id != "":
			if covers[id] {
				out[id]++
			}
		case len(s.Covers) == 1:
			out[s.Covers[0]]++
		}
	}
	sections := []Expect{s.Expect}
	for _, p := range sortedKeys(s.ExpectByProfile) {
		sections = append(sections, s.ExpectByProfile[p])
	}
	for _, e := range sections {
		for _, x := range e.IDs() {
			tie(x.ID)
		}
		for range e.Warnings {
			tie("")
		}
	}
	if s.Upgrade != nil {
		for _, f := range s.Upgrade.Findings {
			tie(f.ID)
		}
	}
	return out
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
