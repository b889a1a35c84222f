// Package xds is the last stage of the reference translator before patches: it turns the IR
// into go-control-plane resources with EG v1.9's names, defaults and order.
package xds

import (
	"fmt"
	"strings"
	"time"

	clusterv3 "github.com/envoyproxy/go-control-plane/envoy/config/cluster/v3"
	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	endpointv3 "github.com/envoyproxy/go-control-plane/envoy/config/endpoint/v3"
	routev3 "github.com/envoyproxy/go-control-plane/envoy/config/route/v3"
	commondnsv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/clusters/common/dns/v3"
	dnsv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/clusters/dns/v3"
	"google.golang.org/protobuf/types/known/durationpb"

	"github.com/egharness/egharness/internal/parallel"
	"github.com/egharness/egharness/translator/ir"
	"github.com/egharness/egharness/translator/result"
)

// Translator turns IR into xDS.
type Translator struct {
	Naming Naming
	// DNSClusterExtension (UPG-01): v1.9 configures DNS clusters through the
	// envoy.cluster.dns extension; v1.8 used the STRICT_DNS type with fields on the cluster.
	DNSClusterExtension bool
	// Features are the version differences of the policy filters (SP-06, EEP-03).
	Features Features
	// MergeGateways: every Gateway runs on one proxy, so listeners of different Gateways on
	// one port share an Envoy listener (TLS-07). Without it each Gateway has a proxy of its
	// own, and its listeners never fold with another Gateway's.
	MergeGateways bool
	// RateLimit is EG's rate limit service, when its configuration has one (BTP-03).
	RateLimit *RateLimitService
}

// portKey identifies an Envoy listener: Gateway listeners of one proxy on one address and
// port share it.
type portKey struct {
	proxy   string // the Gateway (namespace/name); empty when Gateways are merged
	address string
	port    uint32
}

// envoyListener gathers the Gateway listeners that share one Envoy listener.
type envoyListener struct {
	first *ir.HTTPListener
	grpc  bool // the first listener's GRPC: the gRPC filters of the plain-HTTP connection manager
	// Plain HTTP: one route configuration for the port, named after the first listener.
	rc *routev3.RouteConfiguration
	// HTTPS: one filter chain and one route configuration per Gateway listener.
	chains []*tlsChain
	vhost  map[string]*routev3.VirtualHost // by IR listener name + hostname
	// filters are the policy filters of the port's connection manager (plain HTTP).
	filters *httpFilterSet
	// http3: a listener of the port turned HTTP/3 on; the port also gets a QUIC listener.
	http3 bool
}

type tlsChain struct {
	l  *ir.HTTPListener
	rc *routev3.RouteConfiguration
	// filters are the policy filters of the chain's connection manager.
	filters *httpFilterSet
}

// RoutesSkipped is the error of a translation that left routes out: what a route's
// filters needed could not be built. The rest of the output is whole and returned with it,
// so that one route's problem is that route's, not the whole file's.
type RoutesSkipped struct{ Problems []string }

func (e *RoutesSkipped) Error() string {
	return "routes left out of the xDS: " + strings.Join(e.Problems, "; ")
}

// builtRoute is a route's xDS route and the clusters it names, before the listener's filters
// and the route's policies are applied to them.
type builtRoute struct {
	route *routev3.Route
	plan  []plannedCluster
	// built holds, at a planned cluster's index, the cluster built ahead because this
	// route is the first to name it; nil where another route named it first.
	built []*clusterPair
}

// cluster is the route's planned cluster i: the one built ahead, else built now (when the
// route that named it first was left out of the output).
func (b builtRoute) cluster(i int) clusterPair {
	if c := b.built[i]; c != nil {
		return *c
	}
	return b.plan[i].build()
}

// prebuildRoutes builds every HTTP route of the listeners, in listener and route order, and
// the clusters of the first route to name each, on every core.
func prebuildRoutes(listeners []*ir.HTTPListener, metadata *metadataTable) []builtRoute {
	var routes []*ir.HTTPRoute
	for _, l := range listeners {
		routes = append(routes, l.Routes...)
	}
	out := make([]builtRoute, len(routes))
	each := func(n int, do func(int)) {
		if n < 64 { // not worth the goroutines
			for i := 0; i < n; i++ {
				do(i)
			}
			return
		}
		parallel.Each(n, do)
	}
	each(len(routes), func(i int) {
		r := routes[i]
		plan := routeClusterPlan(r)
		out[i] = builtRoute{route: withRouteLB(buildRoute(r, metadata), r), plan: plan,
			built: make([]*clusterPair, len(plan))}
	})
	type planIndex struct{ route, cluster int }
	var first []planIndex
	named := map[string]bool{}
	for i, b := range out {
		for j, p := range b.plan {
			if !named[p.name] {
				named[p.name] = true
				first = append(first, planIndex{i, j})
			}
		}
	}
	each(len(first), func(k int) {
		at := first[k]
		c := out[at.route].plan[at.cluster].build()
		out[at.route].built[at.cluster] = &c
	})
	return out
}

// Translate builds the resources. A route whose filter configuration cannot be built is
// left out and named in a *RoutesSkipped error beside the output; any other error is a
// programming error in the IR (an Any that does not marshal), never user input.
func (t Translator) Translate(x *ir.XDS) (result.XDS, error) {
	var out result.XDS
	var skipped []string
	byPort := map[portKey]*envoyListener{}
	var order []portKey
	clusters := map[string]bool{}
	secrets := map[string]bool{}
	key := func(l *ir.HTTPListener) portKey {
		k := portKey{address: l.Address, port: l.Port}
		if !t.MergeGateways {
			k.proxy = l.Gateway
		}
		return k
	}
	http3Ports := map[portKey]bool{}
	for _, l := range x.HTTP {
		if wantsHTTP3(l) {
			http3Ports[key(l)] = true
		}
	}
	// Each route and its clusters depend on the route alone and are most of the work: they
	// are built on every core first, and the loop below puts them in place in order.
	metadata := newMetadataTable()
	prebuilt := prebuildRoutes(x.HTTP, metadata)
	next := 0
	for _, l := range x.HTTP {
		k := key(l)
		el := byPort[k]
		if el == nil {
			// The plain-HTTP connection manager is the first Gateway listener's: EG adds it
			// once per port, with that listener's gRPC filters, and later listeners on the
			// port only add their virtual hosts and policy filters (egctl v1.9.1: a
			// GRPCRoute on the second listener of a port gives it no grpc_web).
			el = &envoyListener{first: l, grpc: l.GRPC, vhost: map[string]*routev3.VirtualHost{}, filters: t.newHTTPFilterSet()}
			byPort[k] = el
			order = append(order, k)
		}
		el.http3 = http3Ports[k]
		var rc *routev3.RouteConfiguration
		fs := el.filters
		if l.TLS != nil {
			rc = &routev3.RouteConfiguration{Name: t.Naming.TLSRouteConfig(l), IgnorePortInHostMatching: true}
			fs = t.newHTTPFilterSet()
			el.chains = append(el.chains, &tlsChain{l: l, rc: rc, filters: fs})
			addSecrets(&out, secrets, l.TLS)
			addClientCASecrets(&out, secrets, clientValidation(l.TLS, l.Policies.ClientTLS))
		} else {
			if el.rc == nil {
				el.rc = &routev3.RouteConfiguration{Name: t.Naming.RouteConfig(l), IgnorePortInHostMatching: true}
			}
			rc = el.rc
		}
		if f := geoIPFilter(l); f != nil && fs.named[f.Name] == nil {
			fs.named[f.Name] = f
		}
		for _, r := range l.Routes {
			vkey := l.Name + "\x00" + r.Hostname
			vh := el.vhost[vkey]
			if vh == nil {
				vh = &routev3.VirtualHost{
					Name:    t.Naming.VirtualHost(l, r.Hostname),
					Domains: []string{r.Hostname},
					Metadata: metadata.of(resourceRef{Kind: "Gateway", Name: gatewayName(l),
						Namespace: gatewayNamespace(l), SectionName: l.SectionName}, resourceRef{}),
				}
				el.vhost[vkey] = vh
				rc.VirtualHosts = append(rc.VirtualHosts, vh)
			}
			built := prebuilt[next]
			next++
			route := built.route
			route.RequestHeadersToRemove = append(route.RequestHeadersToRemove, geoHeadersToRemove(l)...)
			if el.http3 {
				addAltSvc(route, l.GatewayPort)
			}
			if err := fs.addRoute(route, r); err != nil {
				skipped = append(skipped, fmt.Sprintf("route %s: %v", r.Name, err))
				continue
			}
			if err := fs.addRateLimits(route, r, l); err != nil {
				skipped = append(skipped, fmt.Sprintf("route %s: %v", r.Name, err))
				continue
			}
			vh.Routes = append(vh.Routes, route)
			for i, p := range built.plan {
				if clusters[p.name] {
					continue
				}
				clusters[p.name] = true
				c := built.cluster(i)
				applyBackendTrafficCluster(c.cluster, r)
				if c.merged {
					// A shared cluster belongs to no route: no route hostname for its
					// health checks, and no listener's HTTP/1 options (EG merges none
					// where a ClientTrafficPolicy sets them on the listener).
					shared := *r
					shared.Hostname = ""
					applyHealthCheck(c.cluster, c.cla, &shared)
				} else {
					applyHealthCheck(c.cluster, c.cla, r)
					applyListenerHTTP1Cluster(c.cluster, l)
				}
				out.Clusters = append(out.Clusters, c.cluster)
				if c.dfp {
					toDFPCluster(c.cluster, r.Policies.DNS)
					continue
				}
				if c.dns {
					t.toDNSCluster(c.cluster, c.cla)
					continue
				}
				out.Endpoints = append(out.Endpoints, c.cla)
			}
		}
	}
	// TCP and TLS Gateway listeners on one port share one Envoy listener, named after the
	// first, with the filter chains of all (EG looks the port's listener up before it
	// makes one).
	var tcpOrder []portKey
	tcpByPort := map[portKey][]*ir.TCPListener{}
	for _, l := range x.TCP {
		k := portKey{address: l.Address, port: l.Port}
		if !t.MergeGateways {
			k.proxy = l.Gateway
		}
		if tcpByPort[k] == nil {
			tcpOrder = append(tcpOrder, k)
		}
		tcpByPort[k] = append(tcpByPort[k], l)
	}
	for _, k := range tcpOrder {
		out.Listeners = append(out.Listeners, t.buildTCPListener(tcpByPort[k]))
	}
	for _, l := range x.TCP {
		if len(l.Routes) == 0 && !clusters[emptyCluster] {
			// A listener without routes proxies to a cluster without hosts (EG keeps the
			// port open rather than leave Envoy a listener with no filter chain).
			clusters[emptyCluster] = true
			out.Clusters = append(out.Clusters,
				&clusterv3.Cluster{Name: emptyCluster,
					ClusterDiscoveryType: &clusterv3.Cluster_Type{Type: clusterv3.Cluster_STATIC}})
		}
		addSecrets(&out, secrets, l.TLS)
		addClientCASecrets(&out, secrets, clientValidation(l.TLS, l.Policies.ClientTLS))
		for _, r := range l.Routes {
			t.addL4Cluster(&out, clusters, r.Source, r.Destination, l4ClusterSettings(r.Policies), r.Policies.DNS)
		}
	}
	for _, l := range x.UDP {
		if l.Route == nil {
			continue
		}
		out.Listeners = append(out.Listeners, t.buildUDPListener(l))
		t.addL4Cluster(&out, clusters, l.Route.Source, l.Route.Destination, l4ClusterSettings(l.Route.Policies),
			l.Route.Policies.DNS)
	}
	for _, k := range order {
		el := byPort[k]
		t.addFilterClusters(&out, clusters, el.filters)
		addFilterSecrets(&out, secrets, el.filters)
		for _, c := range el.chains {
			t.addFilterClusters(&out, clusters, c.filters)
			addFilterSecrets(&out, secrets, c.filters)
		}
		if len(el.chains) > 0 {
			out.Listeners = append(out.Listeners, t.buildTLSListener(el))
			if el.http3 {
				out.Listeners = append(out.Listeners, t.buildQUICListener(el))
			}
			for _, c := range el.chains {
				out.Routes = append(out.Routes, c.rc)
			}
			continue
		}
		lis, err := t.buildListener(el.first, el.rc.Name, el.grpc, el.filters.filters())
		if err != nil {
			return result.XDS{}, fmt.Errorf("listener %s: %w", el.first.Name, err)
		}
		out.Listeners = append(out.Listeners, lis)
		out.Routes = append(out.Routes, el.rc)
	}
	if t.RateLimit != nil && usesGlobalRateLimit(x) && !clusters[rateLimitCluster] {
		clusters[rateLimitCluster] = true
		out.Clusters = append(out.Clusters, t.rateLimitServiceCluster(t.RateLimit).cluster)
	}
	t.addAccessLogClusters(&out, clusters, x)
	out.Clusters = append(out.Clusters, sdsClusters(x)...)
	addUpstreamTLSSecrets(&out, x)
	addSessionFilters(out.Listeners, out.Routes)
	out.Listeners = append(out.Listeners, readyListeners(x.Ready)...)
	out.Sort()
	if len(skipped) > 0 {
		return out, &RoutesSkipped{Problems: skipped}
	}
	return out, nil
}

func (t Translator) newHTTPFilterSet() *httpFilterSet {
	fs := newHTTPFilterSet(t.Features)
	fs.rateLimit = t.RateLimit
	return fs
}

// addFilterClusters adds the clusters policy filters call (remote JWKS), once each.
func (t Translator) addFilterClusters(out *result.XDS, seen map[string]bool, fs *httpFilterSet) {
	for _, c := range fs.clusters {
		if seen[c.cluster.Name] {
			continue
		}
		seen[c.cluster.Name] = true
		out.Clusters = append(out.Clusters, c.cluster)
		switch {
		case c.dns:
			t.toDNSCluster(c.cluster, c.cla)
		case !c.static:
			// An EDS cluster (a policy's external service): its assignment goes out too.
			out.Endpoints = append(out.Endpoints, c.cla)
		}
	}
}

// addFilterSecrets adds the secrets policy filters read (OAuth2), once each.
func addFilterSecrets(out *result.XDS, seen map[string]bool, fs *httpFilterSet) {
	for _, s := range fs.secrets {
		if !seen[s.GetName()] {
			seen[s.GetName()] = true
			out.Secrets = append(out.Secrets, s)
		}
	}
}

// addSecrets adds a terminating listener's certificates as SDS secrets, once each.
func addSecrets(out *result.XDS, seen map[string]bool, cfg *ir.TLSConfig) {
	if cfg == nil {
		return
	}
	for _, c := range cfg.Certificates {
		if c.SDS != nil {
			continue // Envoy fetches it from the SDS server; we hold no bytes
		}
		if !seen[c.Name] {
			seen[c.Name] = true
			out.Secrets = append(out.Secrets, buildTLSSecret(c))
		}
	}
}

// addL4Cluster adds a layer-4 route's cluster once: its valid backends as localities; with
// hostnames among them (an EG Backend's FQDN endpoints), a cluster Envoy resolves by DNS;
// for a dynamic resolver, a dynamic forward proxy cluster with the route's dns settings.
func (t Translator) addL4Cluster(out *result.XDS, seen map[string]bool, src ir.Source, d *ir.Destination,
	cs *ir.ClusterSettings, dns *ir.DNS) {
	name := d.ClusterName()
	if seen[name] {
		return
	}
	seen[name] = true
	owner := resourceRef{Kind: src.Kind, Name: src.Name, Namespace: src.Namespace}
	var c *clusterv3.Cluster
	var cla *endpointv3.ClusterLoadAssignment
	if name != d.Name {
		// its one backend in the cluster the Gateway's routes share (mergeBackends)
		p := mergedCluster(d.MergedBackends()[0], false, false)
		c, cla = p.cluster, p.cla
	} else {
		c, cla = buildCluster(d.Name, owner, false), buildCLA(d.Name, d.Settings)
		withUpstreamTLS(c, cla, d.Settings, false, false)
	}
	applyClusterSettings(c, cs)
	out.Clusters = append(out.Clusters, c)
	if d.DynamicResolver() {
		toDFPCluster(c, dns)
		return
	}
	if anyDNS(d.Settings) {
		t.toDNSCluster(c, cla)
		return
	}
	out.Endpoints = append(out.Endpoints, cla)
}

// l4ClusterSettings is what a BackendTrafficPolicy in force on a TCP or UDP route sets on
// its cluster (BTP-01, BTP-02): the policy stage kept what EG v1.9 applies to L4 routes
// (internal/gatewayapi/backendtrafficpolicy.go), the load balancer and, on a TCP route, the
// circuit breaker.
func l4ClusterSettings(p ir.RoutePolicies) *ir.ClusterSettings {
	if traffic := p.BackendTrafficSettings; traffic != nil {
		return traffic.Cluster
	}
	return nil
}

func gatewayNamespace(l *ir.HTTPListener) string {
	ns, _ := splitNN(l.Gateway)
	return ns
}

func gatewayName(l *ir.HTTPListener) string {
	_, n := splitNN(l.Gateway)
	return n
}

func splitNN(s string) (string, string) {
	for i := 0; i < len(s); i++ {
		if s[i] == '/' {
			return s[:i], s[i+1:]
		}
	}
	return "", s
}

type clusterPair struct {
	cluster *clusterv3.Cluster
	cla     *endpointv3.ClusterLoadAssignment
	dns     bool // hostnames: Envoy resolves them, the assignment goes inline
	static  bool // addresses given inline: no assignment of its own
	// merged: a cluster the Gateway's routes share (mergeBackends): only Gateway-wide
	// settings reach it, which are those of any route that uses it.
	merged bool
	// dfp: the cluster of a dynamic resolver (dynamic_forward_proxy.go), which takes no
	// assignment.
	dfp bool
}

// clusterPlan names and builds the rule's clusters. Valid backends share one cluster with a
// locality each (weights as locality weights); when some backends are invalid, every backend
// gets a cluster of its own so that the route can give the invalid share to a missing cluster.
func clusterPlan(r *ir.HTTPRoute) []plannedCluster {
	d := r.Destination
	owner := resourceRef{Kind: r.Source.Kind, Name: r.Source.Name, Namespace: r.Source.Namespace,
		SectionName: r.Source.RuleName}
	// own is a cluster of one of the rule's backends alone; dfp, whether it is a dynamic
	// resolver's (never beside merged backends).
	own := func(s *ir.Backend, dfp bool) plannedCluster {
		return plannedCluster{name: s.Name, build: func() clusterPair {
			c, cla := buildCluster(s.Name, owner, d.HTTP2 && !s.Invalid), buildCLA(s.Name, []*ir.Backend{s})
			withUpstreamTLS(c, cla, []*ir.Backend{s}, true, d.HTTP2)
			if !s.Invalid {
				withClusterLB(c, s.BackendLB)
			}
			return clusterPair{cluster: c, cla: cla, dns: s.DNS, dfp: dfp}
		}}
	}
	if merged := d.MergedBackends(); len(merged) > 0 {
		// mergeBackends: the rule's other backends get a cluster each (the route names
		// them one by one beside the shared ones), and each merged backend its shared one.
		var out []plannedCluster
		for _, s := range d.Unmerged().Settings {
			out = append(out, own(s, false))
		}
		for _, s := range merged {
			out = append(out, plannedCluster{name: s.Merged, build: func() clusterPair {
				return mergedCluster(s, true, r.IsHTTP2 || s.HTTP2)
			}})
		}
		return out
	}
	if !perBackendClusters(d) {
		return []plannedCluster{{name: d.Name, build: func() clusterPair {
			c, cla := buildCluster(d.Name, owner, d.HTTP2), buildCLA(d.Name, d.Settings)
			withUpstreamTLS(c, cla, d.Settings, true, d.HTTP2)
			withClusterLB(c, d.BackendLB)
			return clusterPair{cluster: c, cla: cla, dns: anyDNS(d.Settings), dfp: d.DynamicResolver()}
		}}}
	}
	out := make([]plannedCluster, 0, len(d.Settings))
	for _, s := range d.Settings {
		out = append(out, own(s, s.DynamicResolver && !s.Invalid))
	}
	return out
}

// mergedCluster is the cluster a backend shares with the other routes of its Gateway
// (mergeBackends): named for the backend, its metadata the backend object's, one locality
// of weight 1 named as the cluster (EG's BackendCluster keeps no route's name or weight).
func mergedCluster(s *ir.Backend, http, http2 bool) clusterPair {
	section := ""
	if s.Port != 0 && s.Kind != "Backend" {
		section = fmt.Sprint(s.Port)
	}
	b := *s
	b.Name, b.Weight = s.Merged, 1
	c, cla := buildCluster(s.Merged,
		resourceRef{Kind: s.Kind, Name: s.ServiceName, Namespace: s.Namespace, SectionName: section}, http2),
		buildCLA(s.Merged, []*ir.Backend{&b})
	withUpstreamTLS(c, cla, []*ir.Backend{&b}, http, http2)
	withClusterLB(c, s.BackendLB)
	return clusterPair{cluster: c, cla: cla, dns: s.DNS, merged: true}
}

func anyDNS(settings []*ir.Backend) bool {
	for _, s := range settings {
		if s.DNS {
			return true
		}
	}
	return false
}

// toDNSCluster turns an EDS cluster into one whose hostnames Envoy resolves itself, the
// load assignment inline.
func (t Translator) toDNSCluster(c *clusterv3.Cluster, cla *endpointv3.ClusterLoadAssignment) {
	c.EdsClusterConfig = nil
	c.LoadAssignment = cla
	if t.DNSClusterExtension {
		c.ClusterDiscoveryType = &clusterv3.Cluster_ClusterType{ClusterType: &clusterv3.Cluster_CustomClusterType{
			Name: dnsClusterExtension,
			TypedConfig: mustAny(&dnsv3.DnsCluster{
				DnsLookupFamily: commondnsv3.DnsLookupFamily_V4_PREFERRED,
				DnsRefreshRate:  durationpb.New(30 * time.Second),
				RespectDnsTtl:   true,
			}),
		}}
		return
	}
	c.ClusterDiscoveryType = &clusterv3.Cluster_Type{Type: clusterv3.Cluster_STRICT_DNS}
	c.DnsRefreshRate = durationpb.New(30 * time.Second)
	c.RespectDnsTtl = true
}

const dnsClusterExtension = "envoy.cluster.dns"

func perBackendClusters(d *ir.Destination) bool {
	_, invalid := d.ValidWeight()
	return invalid > 0 || hasBackendFilters(d)
}

func buildCLA(name string, settings []*ir.Backend) *endpointv3.ClusterLoadAssignment {
	cla := &endpointv3.ClusterLoadAssignment{ClusterName: name}
	for _, s := range settings {
		loc := &endpointv3.LocalityLbEndpoints{
			Locality:            &corev3.Locality{Region: s.Name},
			LoadBalancingWeight: u32(s.Weight),
		}
		if !s.Invalid && s.Kind != "" { // a telemetry sink's host and port names no object
			section := ""
			if s.Port != 0 && s.Kind != "Backend" { // EG names no section for an EG Backend, port or not
				section = fmt.Sprint(s.Port)
			}
			loc.Metadata = resourceMetadata(
				resourceRef{Kind: s.Kind, Name: s.ServiceName, Namespace: s.Namespace, SectionName: section})
		}
		for _, e := range s.Endpoints {
			loc.LbEndpoints = append(loc.LbEndpoints, &endpointv3.LbEndpoint{
				HostIdentifier: &endpointv3.LbEndpoint_Endpoint{Endpoint: &endpointv3.Endpoint{
					Address: endpointAddress(e),
				}},
				LoadBalancingWeight: u32(1),
			})
		}
		cla.Endpoints = append(cla.Endpoints, loc)
	}
	return cla
}
