package fields

// gatewayAPIKinds are the kinds of gateway.networking.k8s.io (Gateway API, standard and
// experimental), in Registry.
var gatewayAPIKinds = map[string]Kind{
	"BackendTLSPolicy": {
		Handled: []string{
			`spec.targetRefs[]{group,kind,name,sectionName}`,
			`spec.validation{caCertificateRefs[]{group,kind,name},hostname,subjectAltNames[]{hostname,type,` +
				`uri},wellKnownCACertificates}`,
		},
		NoEffect: []Field{
			{"spec.options", "EG v1.9 reads no BackendTLSPolicy option (the implementation slot stays unused)"},
		},
	},
	// BackendTrafficPolicy: translator/policy (attachment; backendtraffic.go, healthcheck.go, backendtraffic_response.go,
	// cluster_settings.go resolve it into translator/ir), translator/xds/backendtraffic.go, healthcheck.go,
	// cluster_settings.go, ratelimit.go, local_ratelimit.go, bandwidth_limit.go.
	"GRPCRoute": {
		Handled: []string{
			`spec.hostnames`,
			`spec.parentRefs[]{group,kind,name,namespace,port,sectionName}`,
			`spec.rules[]{backendRefs[]{filters[]{extensionRef{group,kind,name},requestHeaderModifier{add[]{name,value},` +
				`remove,set[]{name,value}},requestMirror{backendRef{group,kind,name,namespace,port},fraction{denominator,` +
				`numerator},percent},responseHeaderModifier{add[]{name,value},remove,set[]{name,value}},type},group,kind,name,` +
				`namespace,port,weight},filters[]{extensionRef{group,kind,name},requestHeaderModifier{add[]{name,value},remove,` +
				`set[]{name,value}},requestMirror{backendRef{group,kind,name,namespace,port},fraction{denominator,numerator},` +
				`percent},responseHeaderModifier{add[]{name,value},remove,set[]{name,value}},type},matches[]{headers[]{name,type,` +
				`value},method{method,service,type}},name}`,
		},
		NotHandled: []Field{
			{"spec.rules[].sessionPersistence",
				"EG v1.9 would add an envoy.filters.http.stateful_session filter (cookie or header sessions) for the rule"},
		},
		NoEffect: []Field{
			{"spec.useDefaultGateways", "EG v1.9 does not read it"},
		},
	},
	"Gateway": {
		Handled: []string{
			`spec.allowedListeners.namespaces{from,selector{matchExpressions[]{key,operator,values},matchLabels}}`,
			`spec.gatewayClassName`,
			`spec.infrastructure.parametersRef{group,kind,name}`,
			`spec.listeners[]{allowedRoutes{kinds[]{group,kind},namespaces{from,selector{matchExpressions[]{key,operator,` +
				`values},matchLabels}}},hostname,name,port,protocol,tls{certificateRefs[]{group,kind,name,namespace},mode}}`,
			`spec.tls{backend.clientCertificateRef{group,kind,name,namespace},` +
				`frontend{default.validation{caCertificateRefs[]{group,kind,name,namespace},mode},perPort[]{port,` +
				`tls.validation{caCertificateRefs[]{group,kind,name,namespace},mode}}}}`,
		},
		NoEffect: []Field{
			{"spec.addresses", "EG v1.9 puts them on the proxy's Service (and the Gateway's status addresses), not in the xDS"},
			{"spec.defaultScope", "EG v1.9 does not read it"},
			{"spec.infrastructure.annotations", "EG v1.9 puts them on the proxy's Kubernetes resources, not in the xDS"},
			{"spec.infrastructure.labels", "EG v1.9 puts them on the proxy's Kubernetes resources, not in the xDS"},
			{"spec.listeners[].tls.options", "EG v1.9 reads no listener TLS option (ClientTrafficPolicy tls does that)"},
		},
	},
	"GatewayClass": {
		Handled: []string{
			`spec.controllerName`,
			`spec.parametersRef{group,kind,name,namespace}`,
		},
		NoEffect: []Field{
			{"spec.description", "a description for people; nothing reads it"},
		},
	},
	"HTTPRoute": {
		Handled: []string{
			`spec.hostnames`,
			`spec.parentRefs[]{group,kind,name,namespace,port,sectionName}`,
			`spec.rules[]{backendRefs[]{filters[]{cors{allowCredentials,allowHeaders,allowMethods,allowOrigins,exposeHeaders,` +
				`maxAge},extensionRef{group,kind,name},requestHeaderModifier{add[]{name,value},remove,set[]{name,value}},` +
				`requestMirror{backendRef{group,kind,name,namespace,port},fraction{denominator,numerator},percent},` +
				`requestRedirect{hostname,path{replaceFullPath,replacePrefixMatch,type},port,scheme,statusCode},` +
				`responseHeaderModifier{add[]{name,value},remove,set[]{name,value}},type,urlRewrite{hostname,` +
				`path{replaceFullPath,replacePrefixMatch,type}}},group,kind,name,namespace,port,weight},` +
				`filters[]{cors{allowCredentials,allowHeaders,allowMethods,allowOrigins,exposeHeaders,maxAge},extensionRef{group,` +
				`kind,name},requestHeaderModifier{add[]{name,value},remove,set[]{name,value}},requestMirror{backendRef{group,` +
				`kind,name,namespace,port},fraction{denominator,numerator},percent},requestRedirect{hostname,` +
				`path{replaceFullPath,replacePrefixMatch,type},port,scheme,statusCode},responseHeaderModifier{add[]{name,value},` +
				`remove,set[]{name,value}},type,urlRewrite{hostname,path{replaceFullPath,replacePrefixMatch,type}}},` +
				`matches[]{headers[]{name,type,value},method,path{type,value},queryParams[]{name,type,value}},name,` +
				`retry{attempts,backoff,codes},timeouts{backendRequest,request}}`,
		},
		NotHandled: []Field{
			{"spec.rules[].sessionPersistence",
				"EG v1.9 would add an envoy.filters.http.stateful_session filter (cookie or header sessions) for the rule"},
		},
		NoEffect: []Field{
			{"spec.rules[].backendRefs[].filters[].externalAuth", "EG v1.9 does not read the Gateway API ExternalAuth filter"},
			{"spec.rules[].filters[].externalAuth", "EG v1.9 does not read the Gateway API ExternalAuth filter"},
			{"spec.useDefaultGateways", "EG v1.9 does not read it"},
		},
	},
	"ListenerSet": {
		Handled: []string{
			`spec.listeners[]{allowedRoutes{kinds[]{group,kind},namespaces{from,selector{matchExpressions[]{key,operator,` +
				`values},matchLabels}}},hostname,name,port,protocol,tls{certificateRefs[]{group,kind,name,namespace},mode}}`,
			`spec.parentRef{group,kind,name,namespace}`,
		},
		NoEffect: []Field{
			{"spec.listeners[].tls.options", "EG v1.9 reads no listener TLS option (ClientTrafficPolicy tls does that)"},
		},
	},
	"ReferenceGrant": {
		Handled: []string{
			`spec.from[]{group,kind,namespace}`,
			`spec.to[]{group,kind,name}`,
		},
	},
	// SecurityPolicy: translator/policy/features.go, extension_services.go, oidc.go (resolved into translator/ir) and
	// translator/xds/security_*.go; the backendSettings of its external services as policy/cluster_settings.go resolves
	// them.
	"TCPRoute": {
		Handled: []string{
			`spec.parentRefs[]{group,kind,name,namespace,port,sectionName}`,
			`spec.rules[]{backendRefs[]{group,kind,name,namespace,port,weight},name}`,
		},
		NoEffect: []Field{
			{"spec.useDefaultGateways", "EG v1.9 does not read it"},
		},
	},
	"TLSRoute": {
		Handled: []string{
			`spec.hostnames`,
			`spec.parentRefs[]{group,kind,name,namespace,port,sectionName}`,
			`spec.rules[]{backendRefs[]{group,kind,name,namespace,port,weight},name}`,
		},
		NoEffect: []Field{
			{"spec.useDefaultGateways", "EG v1.9 does not read it"},
		},
	},
	"UDPRoute": {
		Handled: []string{
			`spec.parentRefs[]{group,kind,name,namespace,port,sectionName}`,
			`spec.rules[]{backendRefs[]{group,kind,name,namespace,port,weight},name}`,
		},
		NoEffect: []Field{
			{"spec.useDefaultGateways", "EG v1.9 does not read it"},
		},
	},
	// Gateway API experimental kinds EG v1.9 does not read (its controller watches none of them).
	"XBackend": {
		NoEffect: []Field{
			{"spec", "EG v1.9 does not read this kind"},
		},
	},
	"XBackendTrafficPolicy": {
		NoEffect: []Field{
			{"spec", "EG v1.9 does not read this kind"},
		},
	},
	"XMesh": {
		NoEffect: []Field{
			{"spec", "EG v1.9 does not read this kind"},
		},
	},
}
