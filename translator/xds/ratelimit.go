package xds

import (
	"sort"
	"strconv"
	"strings"
	"time"

	xdscorev3 "github.com/cncf/xds/go/xds/core/v3"
	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	ratelimitconfv3 "github.com/envoyproxy/go-control-plane/envoy/config/ratelimit/v3"
	routev3 "github.com/envoyproxy/go-control-plane/envoy/config/route/v3"
	ratelimitv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/http/ratelimit/v3"
	hcmv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/network/http_connection_manager/v3"
	tlsv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/transport_sockets/tls/v3"
	matcherv3 "github.com/envoyproxy/go-control-plane/envoy/type/matcher/v3"
	metadatav3 "github.com/envoyproxy/go-control-plane/envoy/type/metadata/v3"
	"google.golang.org/protobuf/types/known/durationpb"
	"google.golang.org/protobuf/types/known/wrapperspb"

	"github.com/egharness/egharness/translator/ir"
)

// Global rate limiting (BTP-02, BTP-03): EG's rate limit service is reached through the
// cluster ratelimit_cluster. Each connection manager with rate-limited routes gets one
// envoy.filters.http.ratelimit filter per domain: the listener's own (domain: the IR
// listener name, for non-shared rules) and one per policy with shared rules
// (envoy.filters.http.ratelimit/<policy namespace>/<policy name>, domain
// <namespace>/<name>). Routes say which descriptors to send through typedPerFilterConfig
// (RateLimitPerRoute), one entry per domain; v1.8 put the rules of a route with a shared
// rule in the route action's rateLimits instead.

const (
	rateLimitFilter        = ir.FilterRateLimit
	rateLimitCluster       = "ratelimit_cluster"
	rateLimitClientCert    = "envoy-gateway-system/envoy"
	rateLimitClientCAFile  = "/certs/ca.crt"
	rateLimitMaskedAddress = "masked_remote_address"
	rateLimitRemoteAddress = "remote_address"
	rateLimitInvertPrefix  = "invert:"
	remoteAddressFormatter = "%DOWNSTREAM_REMOTE_ADDRESS_WITHOUT_PORT%"
)

// RateLimitService is how Envoy calls EG's rate limit service (EnvoyGateway rateLimit).
type RateLimitService struct {
	Host       string
	Port       uint32
	Timeout    time.Duration // 0: Envoy's default
	FailClosed bool
}

// globalRateLimitFilters is what one connection manager needs for global rate limits:
// decided by the first Gateway listener on it with a rate-limited route, as in EG.
type globalRateLimitFilters struct {
	listener *ir.HTTPListener
	shared   map[string]bool // domains of policies with shared rules
}

// addGlobalRateLimits configures a forwarding route's global rules and records the filters
// its connection manager needs.
func (s *httpFilterSet) addGlobalRateLimits(out *routev3.Route, r *ir.HTTPRoute, l *ir.HTTPListener) error {
	if r.RateLimit == nil || len(r.RateLimit.Global) == 0 {
		return nil
	}
	if s.global == nil {
		s.global = &globalRateLimitFilters{listener: l, shared: map[string]bool{}}
	}
	if s.global.listener == l {
		for _, rule := range r.RateLimit.Global {
			if rule.Shared {
				s.global.shared[sharedDomain(rule)] = true
			}
		}
	}
	action := out.GetRoute()
	if action == nil {
		return nil // redirects and direct responses are not rate limited
	}
	limits := routeRateLimits(r, l.Name)
	if !s.features.RateLimitPerDomain {
		for _, rule := range r.RateLimit.Global {
			if rule.Shared {
				// v1.8: every rule of the route goes in the route action, in rule order,
				// where each ratelimit filter of the connection manager reads it.
				for _, dl := range limits {
					action.RateLimits = append(action.RateLimits, dl.limit)
				}
				return nil
			}
		}
	}
	byDomain := map[string]*ratelimitv3.RateLimitPerRoute{}
	var order []string
	for _, dl := range limits {
		pr := byDomain[dl.domain]
		if pr == nil {
			pr = &ratelimitv3.RateLimitPerRoute{Domain: dl.domain}
			byDomain[dl.domain] = pr
			order = append(order, dl.domain)
		}
		pr.RateLimits = append(pr.RateLimits, dl.limit)
	}
	for _, d := range order {
		if err := setPerRoute(out, rateLimitFilterName(d, l.Name), byDomain[d]); err != nil {
			return err
		}
	}
	return nil
}

func rateLimitFilterName(domain, listener string) string {
	if domain == listener {
		return rateLimitFilter
	}
	return rateLimitFilter + "/" + domain
}

// sharedDomain is the domain of a shared rule: its policy's namespace/name.
func sharedDomain(rule *ir.RateLimitRule) string {
	if i := strings.LastIndex(rule.Name, "/rule/"); i >= 0 {
		return rule.Name[:i]
	}
	return rule.Name
}

// domainLimit is one Envoy rate limit of a route and the domain it counts in.
type domainLimit struct {
	domain string
	limit  *routev3.RateLimit
	rule   *ir.RateLimitRule
}

// routeRateLimits builds a route's global rules as Envoy rate limits in rule order, each
// with its domain: a shared rule's policy domain, the listener's for the others.
// Descriptor keys number the rules within their domain.
func routeRateLimits(r *ir.HTTPRoute, listener string) []domainLimit {
	var out []domainLimit
	shared, notShared := 0, 0
	for _, rule := range r.RateLimit.Global {
		domain, key, idx := listener, r.Name, notShared
		if rule.Shared {
			domain, key, idx = sharedDomain(rule), rule.Name, shared
			shared++
		} else {
			notShared++
		}
		methods := rule.Methods
		if len(methods) == 0 {
			methods = []*ir.RateLimitMatch{nil}
		}
		// One rate limit per method (methods are ORed); they share the rule's counter.
		for _, m := range methods {
			actions := []*routev3.RateLimit_Action{genericKey(key, key)}
			actions = append(actions, ruleActions(rule, idx, m, false)...)
			if !rule.MatchSet() {
				k := ruleDescriptor(idx, -1)
				actions = append(actions, genericKey(k, k))
			}
			rl := &routev3.RateLimit{Actions: actions, XRatelimitOption: xRateLimitOption(rule.XRateLimitHeaders)}
			if md := rule.LimitFromMetadata; md != nil {
				rl.Limit = &routev3.RateLimit_Override{OverrideSpecifier: &routev3.RateLimit_Override_DynamicMetadata_{
					DynamicMetadata: &routev3.RateLimit_Override_DynamicMetadata{MetadataKey: &metadatav3.MetadataKey{
						Key:  md.Namespace,
						Path: []*metadatav3.MetadataKey_PathSegment{{Segment: &metadatav3.MetadataKey_PathSegment_Key{Key: md.Key}}},
					}},
				}}
			}
			rl.HitsAddend = hitsAddend(rule.RequestCost)
			out = append(out, domainLimit{domain, rl, rule})
			if rule.ResponseCost != nil {
				out = append(out, domainLimit{domain, &routev3.RateLimit{
					Actions: actions, ApplyOnStreamDone: true, XRatelimitOption: rl.XRatelimitOption,
					HitsAddend: hitsAddend(rule.ResponseCost), Limit: rl.Limit,
				}, rule})
			}
		}
	}
	return out
}

// ruleActions are a rule's selector actions in EG's order: headers, the method, the path,
// the source address, query parameters. local names the source address descriptors per
// rule (the local rate limit's entries) instead of the rate limit service's fixed keys.
func ruleActions(rule *ir.RateLimitRule, idx int, method *ir.RateLimitMatch, local bool) []*routev3.RateLimit_Action {
	var out []*routev3.RateLimit_Action
	for i, h := range rule.Headers {
		k := ruleDescriptor(idx, i)
		if h.Distinct {
			out = append(out, &routev3.RateLimit_Action{ActionSpecifier: &routev3.RateLimit_Action_RequestHeaders_{
				RequestHeaders: &routev3.RateLimit_Action_RequestHeaders{HeaderName: h.Name, DescriptorKey: k},
			}})
			continue
		}
		out = append(out, headerValueMatch(k, h.Name, h))
	}
	if method != nil {
		out = append(out, headerValueMatch(ruleMethodDescriptor(idx), ":method", method))
	}
	if rule.Path != nil {
		out = append(out, headerValueMatch(rulePathDescriptor(idx), ":path", rule.Path))
	}
	if c := rule.CIDR; c != nil {
		masked, remote := rateLimitMaskedAddress, rateLimitRemoteAddress
		if local {
			masked, remote = "rule-"+strconv.Itoa(idx)+"-masked-remote-address", "rule-"+strconv.Itoa(idx)+"-remote-address"
		}
		out = append(out, remoteAddressMatch(masked, cidrDescriptorValue(c), c))
		if c.Distinct {
			out = append(out, remoteAddressMatch(remote, remoteAddressFormatter, c))
		}
	}
	for i, q := range rule.QueryParams {
		k := ruleDescriptor(idx, len(rule.Headers)+i)
		if q.Distinct {
			out = append(out, &routev3.RateLimit_Action{ActionSpecifier: &routev3.RateLimit_Action_QueryParameters_{
				QueryParameters: &routev3.RateLimit_Action_QueryParameters{QueryParameterName: q.Name, DescriptorKey: k},
			}})
			continue
		}
		out = append(out, &routev3.RateLimit_Action{ActionSpecifier: &routev3.RateLimit_Action_QueryParameterValueMatch_{
			QueryParameterValueMatch: &routev3.RateLimit_Action_QueryParameterValueMatch{
				DescriptorKey: k, DescriptorValue: k, ExpectMatch: wrapperspb.Bool(!q.Invert),
				QueryParameters: []*routev3.QueryParameterMatcher{
					{Name: q.Name, QueryParameterMatchSpecifier: &routev3.QueryParameterMatcher_StringMatch{
						StringMatch: stringMatcher(&q.StringMatch),
					}}},
			},
		}})
	}
	return out
}

func ruleDescriptor(rule, match int) string {
	return "rule-" + strconv.Itoa(rule) + "-match-" + strconv.Itoa(match)
}

func ruleMethodDescriptor(rule int) string { return "rule-" + strconv.Itoa(rule) + "-method" }
func rulePathDescriptor(rule int) string   { return "rule-" + strconv.Itoa(rule) + "-path" }

func genericKey(key, value string) *routev3.RateLimit_Action {
	return &routev3.RateLimit_Action{ActionSpecifier: &routev3.RateLimit_Action_GenericKey_{
		GenericKey: &routev3.RateLimit_Action_GenericKey{DescriptorKey: key, DescriptorValue: value},
	}}
}

func headerValueMatch(key, header string, m *ir.RateLimitMatch) *routev3.RateLimit_Action {
	return &routev3.RateLimit_Action{ActionSpecifier: &routev3.RateLimit_Action_HeaderValueMatch_{
		HeaderValueMatch: &routev3.RateLimit_Action_HeaderValueMatch{
			DescriptorKey: key, DescriptorValue: key, ExpectMatch: wrapperspb.Bool(!m.Invert),
			Headers: []*routev3.HeaderMatcher{{Name: header,
				HeaderMatchSpecifier: &routev3.HeaderMatcher_StringMatch{StringMatch: stringMatcher(&m.StringMatch)}}},
		},
	}}
}

func remoteAddressMatch(key, value string, c *ir.CIDRMatch) *routev3.RateLimit_Action {
	return &routev3.RateLimit_Action{ActionSpecifier: &routev3.RateLimit_Action_RemoteAddressMatch_{
		RemoteAddressMatch: &routev3.RateLimit_Action_RemoteAddressMatch{
			DescriptorKey: key, DescriptorValue: value,
			AddressMatcher: &matcherv3.AddressMatcher{
				Ranges:      []*xdscorev3.CidrRange{{AddressPrefix: c.Prefix, PrefixLen: u32(c.MaskLen)}},
				InvertMatch: c.Invert,
			},
		},
	}}
}

// cidrDescriptorValue is the CIDR, marked when the match is inverted (the client is not in
// it).
func cidrDescriptorValue(c *ir.CIDRMatch) string {
	if c.Invert {
		return rateLimitInvertPrefix + c.CIDR
	}
	return c.CIDR
}

func xRateLimitOption(v string) routev3.RateLimit_XRateLimitOption {
	switch v {
	case ir.XRateLimitHeadersOff:
		return routev3.RateLimit_OFF
	case ir.XRateLimitHeadersDraftVersion03:
		return routev3.RateLimit_DRAFT_VERSION_03
	}
	return routev3.RateLimit_UNSPECIFIED
}

func hitsAddend(c *ir.RateLimitCost) *routev3.RateLimit_HitsAddend {
	if c == nil {
		return nil
	}
	h := &routev3.RateLimit_HitsAddend{}
	if c.Number != nil {
		h.Number = wrapperspb.UInt64(*c.Number)
	}
	if c.Format != nil {
		h.Format = *c.Format
	}
	return h
}

// globalFilters are the connection manager's ratelimit filters, the listener's domain
// first and then the policies' by name.
func (s *httpFilterSet) globalFilters() []*hcmv3.HttpFilter {
	g := s.global
	if g == nil || s.rateLimit == nil {
		return nil
	}
	domains := []string{g.listener.Name}
	for d := range g.shared {
		if d != g.listener.Name {
			domains = append(domains, d)
		}
	}
	sort.Strings(domains)
	envoyHeaders, rateLimitHeadersOff := listenerHeaderSettings(g.listener)
	out := make([]*hcmv3.HttpFilter, 0, len(domains))
	for _, d := range domains {
		cfg := &ratelimitv3.RateLimit{
			Domain: d,
			RateLimitService: &ratelimitconfv3.RateLimitServiceConfig{
				GrpcService: &corev3.GrpcService{TargetSpecifier: &corev3.GrpcService_EnvoyGrpc_{
					EnvoyGrpc: &corev3.GrpcService_EnvoyGrpc{ClusterName: rateLimitCluster},
				}},
				TransportApiVersion: corev3.ApiVersion_V3,
			},
			// x-envoy-ratelimited only when the listener sends Envoy's headers.
			DisableXEnvoyRatelimitedHeader: !envoyHeaders,
			EnableXRatelimitHeaders:        ratelimitv3.RateLimit_DRAFT_VERSION_03,
			FailureModeDeny:                s.rateLimit.FailClosed,
		}
		if rateLimitHeadersOff {
			cfg.EnableXRatelimitHeaders = ratelimitv3.RateLimit_OFF
		}
		if s.rateLimit.Timeout > 0 {
			cfg.Timeout = durationpb.New(s.rateLimit.Timeout)
		}
		out = append(out, typedFilter(rateLimitFilterName(d, g.listener.Name), cfg))
	}
	return out
}

// listenerHeaderSettings are the ClientTrafficPolicy header settings the rate limit
// filters follow: enableEnvoyHeaders and disableRateLimitHeaders.
func listenerHeaderSettings(l *ir.HTTPListener) (envoyHeaders, rateLimitHeadersOff bool) {
	ct := l.Policies.ClientTrafficSettings
	if ct == nil {
		return false, false
	}
	return ct.EnvoyHeaders, ct.RateLimitHeadersOff
}

// usesGlobalRateLimit reports whether any route of the IR has global rules: the proxy then
// needs the rate limit service's cluster.
func usesGlobalRateLimit(x *ir.XDS) bool {
	for _, l := range x.HTTP {
		for _, r := range l.Routes {
			if r.RateLimit != nil && len(r.RateLimit.Global) > 0 {
				return true
			}
		}
	}
	return false
}

// rateLimitServiceCluster is the cluster of EG's rate limit service: resolved by DNS,
// HTTP/2 (gRPC), with the client certificate EG gives every proxy for its control plane
// services over TLS.
func (t Translator) rateLimitServiceCluster(svc *RateLimitService) clusterPair {
	c := buildCluster(rateLimitCluster, resourceRef{}, true)
	c.Metadata = nil
	cla := oneEndpointLoadAssignment(rateLimitCluster, svc.Host, svc.Port)
	c.TransportSocket = &corev3.TransportSocket{
		Name: "envoy.transport_sockets.tls",
		ConfigType: &corev3.TransportSocket_TypedConfig{TypedConfig: mustAny(&tlsv3.UpstreamTlsContext{
			CommonTlsContext: &tlsv3.CommonTlsContext{
				TlsParams: &tlsv3.TlsParameters{TlsMaximumProtocolVersion: tlsv3.TlsParameters_TLSv1_3},
				ValidationContextType: &tlsv3.CommonTlsContext_ValidationContext{
					ValidationContext: &tlsv3.CertificateValidationContext{
						TrustedCa: &corev3.DataSource{Specifier: &corev3.DataSource_Filename{Filename: rateLimitClientCAFile}},
					}},
				TlsCertificateSdsSecretConfigs: []*tlsv3.SdsSecretConfig{{Name: rateLimitClientCert, SdsConfig: adsSource()}},
			},
		})},
	}
	t.toDNSCluster(c, cla)
	return clusterPair{cluster: c, cla: cla, dns: true}
}
