// Package gatewayapi is the Gateway API stage of the reference translator: it attaches
// routes to Gateway listeners the way EG v1.9 does, resolves their backends, computes the
// statuses, and builds the IR the xDS stage turns into Envoy resources.
package gatewayapi

import (
	"encoding/json"
	"fmt"
	"sort"
	"time"

	egv1a1 "github.com/envoyproxy/gateway/api/v1alpha1"
	certificatesv1beta1 "k8s.io/api/certificates/v1beta1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	"k8s.io/apimachinery/pkg/types"
	gwapiv1 "sigs.k8s.io/gateway-api/apis/v1"
	gwapiv1a3 "sigs.k8s.io/gateway-api/apis/v1alpha3"
	mcsv1a1 "sigs.k8s.io/mcs-api/pkg/apis/v1alpha1"

	"github.com/egharness/egharness/translator/apis/backendlb"
	"github.com/egharness/egharness/translator/conditions"
	"github.com/egharness/egharness/translator/config"
	"github.com/egharness/egharness/translator/ir"
	"github.com/egharness/egharness/translator/profile"
	"github.com/egharness/egharness/translator/refgrant"
	"github.com/egharness/egharness/translator/resource"
	"github.com/egharness/egharness/translator/result"
)

// Output is what the stage hands on.
type Output struct {
	IR       ir.XDS
	Statuses []result.ObjectStatus
	Warnings []string
	// Topology is where the IR's routes and listeners came from, for the policy stage.
	Topology *Topology
	// PolicyBackends resolves policy features' backendRefs (ext_authz, ext_proc) with the
	// objects this stage read.
	PolicyBackends *PolicyBackends
	// RouteOverlaps writes RouteRulesOverlap (RT-11) once the policy stage has put the
	// BackendTrafficPolicies on the IR routes: EG compares the matches after them (a
	// CONNECT upgrade replaces a route's path match).
	RouteOverlaps *RouteOverlaps
}

// Translator runs the stage under one profile and configuration.
type Translator struct {
	Profile profile.Profile
	Config  config.Config
	// Now is the clock certificates are checked against (time.Now when nil), as EG checks
	// them when it translates.
	Now func() time.Time
}

func (t Translator) now() time.Time {
	if t.Now != nil {
		return t.Now()
	}
	return time.Now()
}

// index holds the objects by kind, in EG's processing order.
type index struct {
	classes      []*gwapiv1.GatewayClass
	gateways     []*gwapiv1.Gateway
	httpRoutes   []*gwapiv1.HTTPRoute
	grpcRoutes   []*gwapiv1.GRPCRoute
	listenerSets []*gwapiv1.ListenerSet
	tlsRoutes    []*gwapiv1.TLSRoute
	tcpRoutes    []*gwapiv1.TCPRoute
	udpRoutes    []*gwapiv1.UDPRoute
	services     map[types.NamespacedName]*corev1.Service
	secrets      map[types.NamespacedName]*corev1.Secret
	slices       map[types.NamespacedName][]*discoveryv1.EndpointSlice // by Service
	// serviceImports are the Multi-Cluster Services ServiceImports; importSlices their
	// EndpointSlices (labelled multicluster.kubernetes.io/service-name), by ServiceImport.
	serviceImports map[types.NamespacedName]*mcsv1a1.ServiceImport
	importSlices   map[types.NamespacedName][]*discoveryv1.EndpointSlice
	grants         *refgrant.Index
	namespaces     map[string]*corev1.Namespace
	// httpRouteFilters and configMaps are what HTTPRoute ExtensionRef filters read.
	httpRouteFilters map[types.NamespacedName]*egv1a1.HTTPRouteFilter
	backends         map[types.NamespacedName]*egv1a1.Backend
	backendList      []*egv1a1.Backend
	configMaps       map[types.NamespacedName]*corev1.ConfigMap
	// sdsSecretRefs: extensionApis.enableSDSSecretRef lets certificateRefs name SDS Secrets.
	sdsSecretRefs bool
	// listenerSDS: the profile's EG reads SDS reference Secrets in listener certificateRefs.
	listenerSDS bool
	// now is the instant certificates are judged valid or expired at.
	now time.Time
	// btlsPolicies are the BackendTLSPolicies, oldest first; trustBundles the
	// ClusterTrustBundles' PEM by name.
	btlsPolicies []*gwapiv1.BackendTLSPolicy
	btlsTargets  btlsTargetIndex
	trustBundles map[string]string
	// lbPolicies are the BackendLBPolicies; lbWinners the resolved winner per Service.
	lbPolicies []*backendlb.BackendLBPolicy
	lbWinners  map[types.NamespacedName]*ir.BackendLB
	// envoyProxies are the EnvoyProxy objects (read for their backendTLS settings).
	envoyProxies map[types.NamespacedName]*egv1a1.EnvoyProxy
	// mergeGateways: one proxy serves every Gateway of the class, so a Gateway's own
	// EnvoyProxy is ignored.
	mergeGateways bool
}

func buildIndex(objs []resource.Object) *index {
	objects := &index{
		services: map[types.NamespacedName]*corev1.Service{},
		secrets:  map[types.NamespacedName]*corev1.Secret{},
		backends: map[types.NamespacedName]*egv1a1.Backend{},
		slices:   map[types.NamespacedName][]*discoveryv1.EndpointSlice{},

		serviceImports: map[types.NamespacedName]*mcsv1a1.ServiceImport{},
		importSlices:   map[types.NamespacedName][]*discoveryv1.EndpointSlice{},
		namespaces:     map[string]*corev1.Namespace{},

		httpRouteFilters: map[types.NamespacedName]*egv1a1.HTTPRouteFilter{},
		configMaps:       map[types.NamespacedName]*corev1.ConfigMap{},
	}
	objects.grants = refgrant.New(objs)
	for _, o := range objs {
		switch v := o.Obj.(type) {
		case *gwapiv1.GatewayClass:
			objects.classes = append(objects.classes, v)
		case *gwapiv1.Gateway:
			objects.gateways = append(objects.gateways, v)
		case *gwapiv1.HTTPRoute:
			objects.httpRoutes = append(objects.httpRoutes, v)
		case *gwapiv1.GRPCRoute:
			objects.grpcRoutes = append(objects.grpcRoutes, v)
		case *gwapiv1.ListenerSet:
			objects.listenerSets = append(objects.listenerSets, v)
		case *gwapiv1.TLSRoute:
			objects.tlsRoutes = append(objects.tlsRoutes, v)
		case *gwapiv1.TCPRoute:
			objects.tcpRoutes = append(objects.tcpRoutes, v)
		case *gwapiv1.UDPRoute:
			objects.udpRoutes = append(objects.udpRoutes, v)
		case *corev1.Service:
			objects.services[types.NamespacedName{Namespace: v.Namespace, Name: v.Name}] = v
		case *egv1a1.Backend:
			objects.backends[types.NamespacedName{Namespace: v.Namespace, Name: v.Name}] = v
			objects.backendList = append(objects.backendList, v)
		case *corev1.Secret:
			objects.secrets[types.NamespacedName{Namespace: v.Namespace, Name: v.Name}] = v
		case *mcsv1a1.ServiceImport:
			objects.serviceImports[types.NamespacedName{Namespace: v.Namespace, Name: v.Name}] = v
		case *discoveryv1.EndpointSlice:
			// A slice belongs to a Service by the Kubernetes label, else to a ServiceImport
			// by the Multi-Cluster Services one (EG v1.9 reads them in that order).
			if svc := v.Labels[discoveryv1.LabelServiceName]; svc != "" {
				key := types.NamespacedName{Namespace: v.Namespace, Name: svc}
				objects.slices[key] = append(objects.slices[key], v)
			} else if si := v.Labels[mcsv1a1.LabelServiceName]; si != "" {
				key := types.NamespacedName{Namespace: v.Namespace, Name: si}
				objects.importSlices[key] = append(objects.importSlices[key], v)
			}
		case *corev1.Namespace:
			objects.namespaces[v.Name] = v
		case *egv1a1.HTTPRouteFilter:
			objects.httpRouteFilters[types.NamespacedName{Namespace: v.Namespace, Name: v.Name}] = v
		case *corev1.ConfigMap:
			objects.configMaps[types.NamespacedName{Namespace: v.Namespace, Name: v.Name}] = v
		case *gwapiv1.BackendTLSPolicy:
			objects.btlsPolicies = append(objects.btlsPolicies, v)
		case *gwapiv1a3.BackendTLSPolicy:
			// v1alpha3 (what EG v1.9's task pages still write) is served from the same schema.
			p := gwapiv1.BackendTLSPolicy(*v)
			objects.btlsPolicies = append(objects.btlsPolicies, &p)
		case *backendlb.BackendLBPolicy:
			objects.lbPolicies = append(objects.lbPolicies, v)
		case *egv1a1.EnvoyProxy:
			if objects.envoyProxies == nil {
				objects.envoyProxies = map[types.NamespacedName]*egv1a1.EnvoyProxy{}
			}
			objects.envoyProxies[types.NamespacedName{Namespace: v.Namespace, Name: v.Name}] = v
		case *certificatesv1beta1.ClusterTrustBundle:
			if objects.trustBundles == nil {
				objects.trustBundles = map[string]string{}
			}
			objects.trustBundles[v.Name] = v.Spec.TrustBundle
		}
	}
	// EG processes Gateways and routes oldest first, then by namespace/name.
	sortOlderFirst(objects.gateways)
	sortOlderFirst(objects.httpRoutes)
	sortOlderFirst(objects.grpcRoutes)
	sortOlderFirst(objects.listenerSets)
	sortOlderFirst(objects.tlsRoutes)
	sortOlderFirst(objects.tcpRoutes)
	sortOlderFirst(objects.udpRoutes)
	sortOlderFirst(objects.btlsPolicies)
	sort.SliceStable(objects.classes, func(i, j int) bool { return objects.classes[i].Name < objects.classes[j].Name })
	for _, m := range []map[types.NamespacedName][]*discoveryv1.EndpointSlice{objects.slices, objects.importSlices} {
		for k := range m {
			s := m[k]
			sort.SliceStable(s, func(i, j int) bool { return s[i].Name < s[j].Name })
		}
	}
	return objects
}

type aged interface {
	GetNamespace() string
	GetName() string
}

// processed are the kinds EG processes oldest first.
type processed interface {
	aged
	*gwapiv1.Gateway | *gwapiv1.HTTPRoute | *gwapiv1.GRPCRoute | *gwapiv1.TLSRoute | *gwapiv1.TCPRoute |
		*gwapiv1.UDPRoute | *gwapiv1.ListenerSet | *gwapiv1.BackendTLSPolicy
}

// sortOlderFirst orders list stably by olderFirst: EG's processing order.
func sortOlderFirst[T processed](list []T) {
	sort.SliceStable(list, func(i, j int) bool { return olderFirst(list[i], list[j]) })
}

// olderFirst: the older by creation time, then by namespace and name.
func olderFirst[T processed](a, b T) bool {
	ta, tb := creation(a), creation(b)
	if !ta.Equal(tb) {
		return ta.Before(tb)
	}
	if a.GetNamespace() != b.GetNamespace() {
		return a.GetNamespace() < b.GetNamespace()
	}
	return a.GetName() < b.GetName()
}

// Translate runs the stage.
func (t Translator) Translate(objs []resource.Object) Output {
	var out Output
	objs, out.Warnings = t.l4RouteVersions(objs)
	objects := buildIndex(objs)
	objects.sdsSecretRefs = t.Config.ExtensionAPIs != nil && t.Config.ExtensionAPIs.EnableSDSSecretRef
	objects.listenerSDS = t.Profile.ListenerSDSSecrets
	objects.now = t.now()
	status := newStatusBook(len(objs))
	resolveBackendLB(objects, status)

	objects.mergeGateways = t.Config.MergeGateways
	proxies := &proxyCheck{objects: objects, status: status, deprecations: t.Profile.EnvoyProxyDeprecations}
	ours := map[string]bool{}
	for _, gc := range objects.classes {
		if string(gc.Spec.ControllerName) != ControllerName {
			continue
		}
		ours[gc.Name] = true
		cs := status.object(resource.Ref{Kind: "GatewayClass", Name: gc.Name})
		cs.Conditions = []result.Condition{conditions.New("Accepted", "True", "Accepted", msgGatewayClassAccepted)}
		proxies.class(gc, cs)
	}

	translation := routeTranslator{t: t, objects: objects, status: status}
	var started []*gatewayCtx
	for _, gw := range objects.gateways {
		if !ours[string(gw.Spec.GatewayClassName)] || !proxies.gateway(gw) || !addressesSupported(gw, status) {
			continue
		}
		started = append(started, t.startGateway(gw, objects, translation.permitted))
	}
	// Merged Gateways are one proxy: their listeners are checked against each other too.
	if objects.mergeGateways {
		checkMergedListenerTuples(started)
	}
	for _, g := range started {
		t.finishGateway(g, objects.mergeGateways)
	}
	if objects.mergeGateways {
		var all []*listenerCtx
		for _, g := range started {
			all = append(all, g.listeners...)
		}
		checkOverlappingTLS(all)
	}
	for _, g := range started {
		gw := g.gw
		translation.gatewayTLS(g)
		al, tr := translation.telemetry(g)
		if tr != nil {
			for _, l := range g.listeners {
				if l.ir != nil {
					l.ir.Tracing = tr
				}
			}
		}
		envoyProxy, _ := objects.envoyProxyOf(gw)
		out.IR.Ready = append(out.IR.Ready, readyListener(envoyProxy))
		if al != nil {
			for _, l := range g.listeners {
				switch {
				case l.ir != nil:
					l.ir.AccessLog = al
				case l.tcp != nil:
					l.tcp.AccessLog = al
				case l.udp != nil:
					l.udp.AccessLog = al
				}
			}
		}
		if addr, compat := listenerAddress(envoyProxy); addr != "0.0.0.0" {
			for _, l := range g.listeners {
				switch {
				case l.ir != nil:
					l.ir.Address, l.ir.IPv4Compat = addr, compat
				case l.tcp != nil:
					l.tcp.Address, l.tcp.IPv4Compat = addr, compat
				case l.udp != nil:
					l.udp.Address, l.udp.IPv4Compat = addr, compat
				}
			}
		}
		if envoyProxy != nil && envoyProxy.Spec.GeoIP != nil {
			for _, l := range g.listeners {
				if l.ir != nil {
					l.ir.EnvoyProxyGeoIP = envoyProxy.Spec.GeoIP
				}
			}
		}
		if envoyProxy != nil && len(envoyProxy.Spec.DynamicModules) > 0 {
			for _, l := range g.listeners {
				if l.ir != nil {
					l.ir.DynamicModules = envoyProxy.Spec.DynamicModules
				}
			}
		}
		if envoyProxy != nil && envoyProxy.Spec.Telemetry != nil && envoyProxy.Spec.Telemetry.Metrics != nil &&
			envoyProxy.Spec.Telemetry.Metrics.EnableGRPCStats != nil {
			for _, l := range g.listeners {
				if l.ir != nil {
					l.ir.GRPCStats = envoyProxy.Spec.Telemetry.Metrics.EnableGRPCStats
				}
			}
		}
		if envoyProxy != nil && len(envoyProxy.Spec.FilterOrder) > 0 {
			order := make([]ir.FilterPosition, 0, len(envoyProxy.Spec.FilterOrder))
			for _, f := range envoyProxy.Spec.FilterOrder {
				p := ir.FilterPosition{Name: string(f.Name)}
				if f.Before != nil {
					p.Before = string(*f.Before)
				}
				if f.After != nil {
					p.After = string(*f.After)
				}
				order = append(order, p)
			}
			for _, l := range g.listeners {
				if l.ir != nil {
					l.ir.FilterOrder = order
				}
			}
		}
		if envoyProxy != nil && envoyProxy.Spec.LuaValidation != nil {
			for _, l := range g.listeners {
				if l.ir != nil {
					l.ir.LuaValidation = envoyProxy.Spec.LuaValidation
				}
			}
		}
		translation.gateways = append(translation.gateways, g)
	}
	gateways := translation.gateways
	// EG attaches all HTTPRoutes before any GRPCRoute: ties in precedence keep that order.
	for _, r := range objects.httpRoutes {
		translation.processHTTPRoute(r)
	}
	for _, r := range objects.grpcRoutes {
		translation.processGRPCRoute(r)
	}
	for _, r := range objects.tlsRoutes {
		translation.processTLSRoute(r)
	}
	for _, r := range objects.tcpRoutes {
		translation.processTCPRoute(r)
	}
	for _, r := range objects.udpRoutes {
		translation.processUDPRoute(r)
	}
	for _, g := range gateways {
		g.finish(status)
		for _, l := range g.listeners {
			switch {
			case l.frontendInvalid: // EG leaves it out of the xDS (gatewaytls.go)
			case l.ir != nil:
				if !preserveRouteOrder(objects, g.gw) {
					sortRoutes(l.ir.Routes)
				}
				out.IR.HTTP = append(out.IR.HTTP, l.ir)
			case l.tcp != nil:
				out.IR.TCP = append(out.IR.TCP, l.tcp)
			case l.udp != nil:
				out.IR.UDP = append(out.IR.UDP, l.udp)
			}
		}
	}
	translation.backendTLSStatuses()
	out.Warnings = append(out.Warnings, translation.filterWarnings...)
	out.Topology = translation.topology()
	out.PolicyBackends = &PolicyBackends{translation: &translation}
	out.RouteOverlaps = &RouteOverlaps{translation: &translation, on: t.Profile.RouteRulesOverlap}
	backendStatuses(objects, status, t.Config.ExtensionAPIs != nil && t.Config.ExtensionAPIs.EnableBackend)
	out.Statuses = status.list()
	return out
}

// readyListener is the readiness listener EG v1.9 gives the proxy of a Gateway, whose
// preserveRouteOrder says whether the Gateway's EnvoyProxy asks for its listeners' routes
// in the order they were added (routes by age, then rules and matches as written) rather
// than by the Gateway API's match precedence (EnvoyProxy spec.preserveRouteOrder).
func preserveRouteOrder(objects *index, gw *gwapiv1.Gateway) bool {
	envoyProxy, _ := objects.envoyProxyOf(gw)
	return envoyProxy != nil && envoyProxy.Spec.PreserveRouteOrder != nil && *envoyProxy.Spec.PreserveRouteOrder
}

// address follows its EnvoyProxy's IP family.
func readyListener(envoyProxy *egv1a1.EnvoyProxy) ir.ReadyListener {
	if envoyProxy != nil && envoyProxy.Spec.IPFamily != nil &&
		(*envoyProxy.Spec.IPFamily == egv1a1.IPv6 || *envoyProxy.Spec.IPFamily == egv1a1.DualStack) {
		return ir.ReadyListener{Address: "::", IPv4Compat: true}
	}
	return ir.ReadyListener{Address: "0.0.0.0"}
}

// listenerAddress is where EG v1.9 binds a Gateway's listeners: 0.0.0.0, or :: when its
// EnvoyProxy's ipFamily is IPv6 or DualStack, taking IPv4 too (ipv4Compat) with DualStack.
func listenerAddress(envoyProxy *egv1a1.EnvoyProxy) (string, bool) {
	if envoyProxy == nil || envoyProxy.Spec.IPFamily == nil {
		return "0.0.0.0", false
	}
	switch *envoyProxy.Spec.IPFamily {
	case egv1a1.IPv6:
		return "::", false
	case egv1a1.DualStack:
		return "::", true
	}
	return "0.0.0.0", false
}

// l4RouteVersions takes the TCPRoutes and UDPRoutes stored as v1alpha2 (the storage
// version of EG v1.8.0's CRDs) over into the v1 types, the same fields, so that the rest of
// the stage sees one kind of object. Which versions exist at all is admission's business:
// each release's CRDs serve and store their own (UPG-02), and a v1alpha2 object sent to
// v1.9's API server is stored, and read by EG, as v1.
func (t Translator) l4RouteVersions(objs []resource.Object) ([]resource.Object, []string) {
	var warnings []string
	out := make([]resource.Object, 0, len(objs))
	for _, o := range objs {
		if o.Kind != "TCPRoute" && o.Kind != "UDPRoute" {
			out = append(out, o)
			continue
		}
		if o.APIVersion == profile.GatewayV1Alpha2 {
			conv, err := toV1(o)
			if err != nil {
				warnings = append(warnings, fmt.Sprintf("%s %s/%s: %v", o.Kind, o.Obj.GetNamespace(), o.Obj.GetName(), err))
				continue
			}
			o = conv
		}
		out = append(out, o)
	}
	return out, warnings
}

// toV1 reads a v1alpha2 TCPRoute or UDPRoute as its v1 type through JSON.
func toV1(o resource.Object) (resource.Object, error) {
	js, err := json.Marshal(o.Obj)
	if err != nil {
		return o, err
	}
	var obj resource.KObject
	switch o.Kind {
	case "TCPRoute":
		obj = &gwapiv1.TCPRoute{}
	default:
		obj = &gwapiv1.UDPRoute{}
	}
	if err := json.Unmarshal(js, obj); err != nil {
		return o, fmt.Errorf("cannot be read as %s: %v", profile.GatewayV1, err)
	}
	o.Obj = obj
	return o, nil
}
