package fields

// envoyGatewayKinds are the kinds of gateway.envoyproxy.io (EG's API), in Registry.
var envoyGatewayKinds = map[string]Kind{
	"Backend": {
		Handled: []string{
			`spec.endpoints[]{fqdn{hostname,port},hostname,ip{address,port},unix.path}`,
			`spec.tls{alpnProtocols,autoSNIFromEndpointHostname,caCertificateRefs[]{group,kind,name},ciphers,` +
				`clientCertificateRef{group,kind,name,namespace},ecdhCurves,insecureSkipVerify,maxVersion,minVersion,` +
				`signatureAlgorithms,sni,wellKnownCACertificates}`,
			`spec.type`,
		},
		NotHandled: []Field{
			{"spec.appProtocols", "EG v1.9 would speak HTTP/2 (h2c) or WebSocket to the backend as its appProtocols say"},
			{"spec.endpoints[].zone", "EG v1.9 would put the endpoint in that locality zone"},
			{"spec.fallback", "EG v1.9 would make the backend a fallback, used only when the others are unhealthy"},
			{"spec.tls.fingerprints", "EG v1.9 would pin the backend's certificate by its fingerprint"},
		},
	},
	"BackendTrafficPolicy": {
		Handled: []string{
			`spec.bandwidthLimit{request.limit{unit,value},response{limit{unit,value},responseTrailers.prefix}}`,
			`spec.circuitBreaker{maxConnections,maxParallelRequests,maxParallelRetries,` +
				`maxPendingRequests,perEndpoint.maxConnections}`,
			`spec.compression[]{brotli,gzip,minContentLength,type,zstd}`,
			`spec.compressor[]{brotli,gzip,minContentLength,type,zstd}`,
			`spec.faultInjection{abort{grpcStatus,httpStatus,percentage},delay{fixedDelay,percentage}}`,
			`spec.healthCheck{active{grpc.service,healthyThreshold,http{expectedResponse{binary,text,type},expectedStatuses,` +
				`hostname,method,path,requestBody{binary,text,type},retriableStatuses},initialJitter,interval,overrides.port,` +
				`tcp{receive{binary,text,type},send{binary,text,type}},timeout,type,unhealthyThreshold},panicThreshold,` +
				`passive{alwaysEjectOneEndpoint,baseEjectionTime,consecutive5XxErrors,consecutiveGatewayErrors,` +
				`consecutiveLocalOriginFailures,failurePercentageThreshold,interval,maxEjectionPercent,` +
				`splitExternalLocalOriginErrors}}`,
			`spec.loadBalancer{backendUtilization{blackoutPeriod,errorUtilizationPenaltyPercent,keepResponseHeaders,` +
				`metricNamesForComputingUtilization,outOfBand{authority,port,reportingPeriod},weightExpirationPeriod,` +
				`weightUpdatePeriod},slowStart.window,type}`,
			`spec.mergeType`,
			`spec.rateLimit{global.rules[]{clientSelectors[]{headers[]{invert,name,type,value},methods[]{invert,value},` +
				`path{invert,type,value},queryParams[]{invert,name,type,value},sourceCIDR{invert,type,value}},cost{request{from,` +
				`metadata{key,namespace},number},response{from,metadata{key,namespace},number}},limit{fromMetadata{key,` +
				`namespace},requests,unit},shadowMode,shared,xRateLimitHeaders},local.rules[]{clientSelectors[]{headers[]{invert,` +
				`name,type,value},methods[]{invert,value},path{invert,type,value},queryParams[]{invert,name,type,value},` +
				`sourceCIDR{invert,type,value}},cost{request{from,metadata{key,namespace},number},response{from,metadata{key,` +
				`namespace},number}},limit{fromMetadata{key,namespace},requests,unit},shadowMode,shared,xRateLimitHeaders},type}`,
			`spec.requestBuffer.limit`,
			`spec.responseOverride[]{match{responseHeaders[]{name,value{type,value}},statusCodes[]{range{end,start},type,` +
				`value}},redirect{hostname,path{replaceFullPath,type},port,scheme,statusCode},response{body{inline,type,` +
				`valueRef{group,kind,name}},contentType,header{add[]{name,value},set[]{name,value}},statusCode},source}`,
			`spec.retry{numAttemptsPerPriority,numRetries,perRetry{backOff{baseInterval,maxInterval},timeout},` +
				`retryOn{httpStatusCodes,triggers}}`,
			`spec.targetRef{group,kind,name,sectionName}`,
			`spec.targetRefs[]{group,kind,name,sectionName}`,
			`spec.targetSelectors[]{group,kind,matchExpressions[]{key,operator,values},matchLabels,namespaces{from,` +
				`selector{matchExpressions[]{key,operator,values},matchLabels}}}`,
			`spec.timeout.http{requestTimeout,streamIdleTimeout}`,
		},
		NotHandled: []Field{
			{"spec.admissionControl", "EG v1.9 would add an envoy.filters.http.admission_control filter"},
			{"spec.circuitBreaker.maxRequestsPerConnection",
				"EG v1.9 would set max_requests_per_connection on the route's clusters"},
			{"spec.circuitBreaker.retryBudget",
				"EG v1.9 would set a retry budget on the circuit breaker of the route's clusters"},
			{"spec.connection", "EG v1.9 would set the buffer limits and preconnect policy of the route's clusters"},
			{"spec.dns",
				"EG v1.9 would set the DNS refresh rate, TTL and lookup family of the route's DNS clusters (the reference " +
					"applies it only to a DynamicResolver backend's DNS cache)"},
			{"spec.healthCheck.active.healthCheckLog",
				"EG v1.9 would log the active health check events of the route's clusters"},
			{"spec.http2", "EG v1.9 would set the HTTP/2 options of the route's clusters"},
			{"spec.httpUpgrade", "EG v1.9 would set the route's upgrade configs (WebSocket, CONNECT...)"},
			{"spec.loadBalancer.consistentHash",
				"EG v1.9 would use a ring hash or Maglev load balancer and add the hash policy to the route"},
			{"spec.loadBalancer.dynamicModule", "EG v1.9 would use a load balancer from a dynamic module"},
			{"spec.loadBalancer.endpointOverride", "EG v1.9 would let a request header pick the endpoint (override_host)"},
			{"spec.loadBalancer.zoneAware", "EG v1.9 would set zone-aware routing on the route's clusters"},
			{"spec.proxyProtocol", "EG v1.9 would send the PROXY protocol header to the route's backends"},
			{"spec.routingType", "EG v1.9 would route to the Services' cluster IPs instead of their endpoints (or the reverse)"},
			{"spec.tcpKeepalive", "EG v1.9 would set TCP keepalive on the route's upstream connections"},
			{"spec.telemetry", "EG v1.9 would set the route's tracing and its metrics stat names"},
			{"spec.timeout.http.connectionIdleTimeout",
				"EG v1.9 would set the idle timeout of the route's upstream HTTP connections"},
			{"spec.timeout.http.maxConnectionDuration",
				"EG v1.9 would set the maximum duration of the route's upstream HTTP connections"},
			{"spec.timeout.http.maxStreamDuration", "EG v1.9 would set the route's maximum stream duration"},
			{"spec.timeout.tcp", "EG v1.9 would set connect_timeout on the route's clusters"},
			{"spec.useClientProtocol", "EG v1.9 would speak the client's HTTP version to the backends"},
		},
		NoEffect: []Field{
			{"spec.responseOverride[].redirect.path.replacePrefixMatch",
				"EG v1.9 writes only a full path replacement into a response override redirect"},
			{"spec.responseOverride[].response.header.remove",
				"EG v1.9 applies only the add and set headers of a response override"},
		},
	},
	// ClientTrafficPolicy: translator/policy/clienttraffic.go, clienthttp.go, clienttls.go and translator/xds/client*.go.
	"ClientTrafficPolicy": {
		Handled: []string{
			`spec.clientIPDetection{customHeader{failClosed,name},directSourceIP,xForwardedFor{disableXForwardedForAppend,` +
				`numTrustedHops,trustedCIDRs}}`,
			`spec.connection{bufferLimit,connectionLimit{closeDelay,maxConnectionDuration,maxRequestsPerConnection,` +
				`maxStreamDuration,value},maxAcceptPerSocketEvent}`,
			`spec.enableProxyProtocol`,
			`spec.grpc.enableWeb`,
			`spec.headers{enableEnvoyHeaders,host.stripTrailingHostDot,maxRequestHeaderLimit,preserveXRequestID,requestID,` +
				`withUnderscoresAction,xForwardedClientCert{certDetailsToAdd,mode}}`,
			`spec.http1{disableSafeMaxConnectionDuration,enableTrailers,http10.useDefaultHost,` +
				`ignoredUpgradeTypes[]{type,value},preserveHeaderCase}`,
			`spec.http2{connectionKeepalive{idleInterval,interval,intervalJitter,timeout},initialConnectionWindowSize,` +
				`initialStreamWindowSize,maxConcurrentStreams,onInvalidMessage}`,
			`spec.http3`,
			`spec.path{disableMergeSlashes,escapedSlashesAction}`,
			`spec.proxyProtocol.optional`,
			`spec.scheme`,
			`spec.targetRef{group,kind,name,sectionName}`,
			`spec.targetRefs[]{group,kind,name,sectionName}`,
			`spec.targetSelectors[]{group,kind,matchExpressions[]{key,operator,values},matchLabels,namespaces{from,` +
				`selector{matchExpressions[]{key,operator,values},matchLabels}}}`,
			`spec.tcpKeepalive{idleTime,interval,probes}`,
			`spec.timeout{http{idleTimeout,requestHeadersReceivedTimeout,requestReceivedTimeout,streamIdleTimeout},` +
				`tcp{connectionInspectionTimeout,idleTimeout,tlsHandshakeTimeout}}`,
			`spec.tls{alpnProtocols,ciphers,clientValidation{allowExpiredCertificate,caCertificateRefs[]{group,kind,name,` +
				`namespace},certificateHashes,crl{onlyVerifyLeafCertificate,refs[]{group,kind,name,namespace}},mode,optional,` +
				`spkiHashes,subjectAltNames{dnsNames[]{type,value},emailAddresses[]{type,value},ipAddresses[]{type,value},` +
				`otherNames[]{oid,type,value},uris[]{type,value}}},ecdhCurves,fingerprints,maxVersion,minVersion,` +
				`session.resumption{stateful,stateless},signatureAlgorithms}`,
		},
		NotHandled: []Field{
			{"spec.connection.socketBufferLimit", "EG v1.9 would set the listener's socket buffer size"},
			{"spec.headers.disableRateLimitHeaders",
				"EG v1.9 would leave the x-ratelimit headers off the listener's rate-limited responses"},
			{"spec.headers.earlyRequestHeaders",
				"EG v1.9 would modify the request headers before routing (early_header_mutation)"},
			{"spec.headers.lateResponseHeaders", "EG v1.9 would modify the response headers last, after every filter"},
			{"spec.healthCheck", "EG v1.9 would answer the path with an envoy.filters.http.health_check filter on the listener"},
		},
	},
	// EnvoyExtensionPolicy: Lua, ext_proc and dynamic modules (translator/xds/extension_*.go); Wasm is refused as EG
	// refuses it without its wasm cache, which is what EG does offline too.
	"EnvoyExtensionPolicy": {
		Handled: []string{
			`spec.dynamicModule[]{config,filterName,name,terminalFilter}`,
			`spec.extProc[]{backendRef{group,kind,name,namespace,port},backendRefs[]{group,kind,name,namespace,port,weight},` +
				`backendSettings{circuitBreaker{maxConnections,maxParallelRequests,maxParallelRetries,maxPendingRequests,` +
				`perEndpoint.maxConnections},loadBalancer{backendUtilization{blackoutPeriod,errorUtilizationPenaltyPercent,` +
				`keepResponseHeaders,metricNamesForComputingUtilization,outOfBand{authority,port,reportingPeriod},` +
				`weightExpirationPeriod,weightUpdatePeriod},slowStart.window,type},retry{numAttemptsPerPriority,numRetries,` +
				`perRetry{backOff{baseInterval,maxInterval},timeout},retryOn{httpStatusCodes,triggers}}},failOpen,messageTimeout,` +
				`metadata{accessibleNamespaces,writableNamespaces},processingMode{allowModeOverride,request{attributes,body},` +
				`response{attributes,body}},shadowMode,statusOnError}`,
			`spec.lua[]{filterContext,inline,type,valueRef{group,kind,name}}`,
			`spec.mergeType`,
			`spec.targetRef{group,kind,name,sectionName}`,
			`spec.targetRefs[]{group,kind,name,sectionName}`,
			`spec.targetSelectors[]{group,kind,matchExpressions[]{key,operator,values},matchLabels,namespaces{from,` +
				`selector{matchExpressions[]{key,operator,values},matchLabels}}}`,
			`spec.wasm[]{code{http{sha256,tls.caCertificateRef{group,kind,name,namespace},url},image{pullSecretRef{group,kind,` +
				`name,namespace},sha256,tls.caCertificateRef{group,kind,name,namespace},url},pullPolicy,type},config,` +
				`env.hostKeys,failOpen,name,rootID}`,
		},
		NotHandled: []Field{
			{"spec.extProc[].backendRefs[].fallback",
				"EG v1.9 would make that ext_proc backend a fallback, used only when the others are unhealthy"},
			{"spec.extProc[].backendSettings.circuitBreaker.maxRequestsPerConnection",
				"EG v1.9 would set max_requests_per_connection on the ext_proc service cluster"},
			{"spec.extProc[].backendSettings.circuitBreaker.retryBudget",
				"EG v1.9 would set a retry budget on the ext_proc service cluster"},
			{"spec.extProc[].backendSettings.connection", "EG v1.9 would apply it to the ext_proc service cluster"},
			{"spec.extProc[].backendSettings.dns", "EG v1.9 would apply it to the ext_proc service cluster"},
			{"spec.extProc[].backendSettings.healthCheck", "EG v1.9 would apply it to the ext_proc service cluster"},
			{"spec.extProc[].backendSettings.http2", "EG v1.9 would apply it to the ext_proc service cluster"},
			{"spec.extProc[].backendSettings.loadBalancer.consistentHash",
				"EG v1.9 would use a ring hash or Maglev load balancer on the ext_proc service cluster"},
			{"spec.extProc[].backendSettings.loadBalancer.dynamicModule",
				"EG v1.9 would set it on the load balancing policy of the ext_proc service cluster"},
			{"spec.extProc[].backendSettings.loadBalancer.endpointOverride",
				"EG v1.9 would set it on the load balancing policy of the ext_proc service cluster"},
			{"spec.extProc[].backendSettings.loadBalancer.zoneAware",
				"EG v1.9 would set it on the load balancing policy of the ext_proc service cluster"},
			{"spec.extProc[].backendSettings.proxyProtocol", "EG v1.9 would apply it to the ext_proc service cluster"},
			{"spec.extProc[].backendSettings.tcpKeepalive", "EG v1.9 would apply it to the ext_proc service cluster"},
			{"spec.extProc[].backendSettings.timeout", "EG v1.9 would apply it to the ext_proc service cluster"},
		},
	},
	"EnvoyPatchPolicy": {
		Handled: []string{
			`spec.jsonPatches[]{name,operation{from,jsonPath,op,path,value},type}`,
			`spec.priority`,
			`spec.targetRef{group,kind,name}`,
			`spec.type`,
		},
	},
	// EnvoyProxy: translator/gatewayapi/envoyproxy.go validates every field with EG's validation; only these shape the
	// output. Most of the rest configures the proxy's Deployment, Service and command line, which a translation does not
	// produce.
	"EnvoyProxy": {
		Handled: []string{
			`spec.backendTLS{alpnProtocols,ciphers,clientCertificateRef{group,kind,name,namespace},ecdhCurves,fingerprints,` +
				`maxVersion,minVersion,signatureAlgorithms}`,
			`spec.dynamicModules[]{doNotClose,loadGlobally,name,source{local.path,remote{sha256,url},type}}`,
			`spec.geoIP.provider{maxMind{anonymousIpDbSource.local.path,asnDbSource.local.path,cityDbSource.local.path,` +
				`countryDbSource.local.path,ispDbSource.local.path},type}`,
			`spec.ipFamily`,
			`spec.filterOrder[]{after,before,name}`,
			`spec.luaValidation`,
			`spec.preserveRouteOrder`,
			`spec.telemetry.metrics.enableGRPCStats`,
			`spec.mergeBackends.selector{matchExpressions[]{key,operator,values},matchLabels}`,
			`spec.telemetry.accessLog{disable,settings[]{format{json,text,type},matches,sinks[]{als{backendRefs[]{group,kind,` +
				`name,namespace,port},http{requestHeaders,responseHeaders,responseTrailers},logName,type},file.path,` +
				`openTelemetry{backendRefs[]{group,kind,name,namespace,port},headers[]{name,value},host,port,` +
				`resourceAttributes,resources},type},type}}`,
			`spec.telemetry.tracing{clientSamplingFraction{denominator,numerator},customTags.*{environment{defaultValue,name},` +
				`literal.value,requestHeader{defaultValue,name},type},overallSamplingFraction{denominator,numerator},` +
				`provider{backendRefs[]{group,kind,name,namespace,port},host,openTelemetry{headers[]{name,value},` +
				`resourceAttributes,sampler{samplingPercentage{denominator,numerator},type}},port,serviceName,type,` +
				`zipkin{disableSharedSpanContext,enable128BitTraceId}},samplingFraction{denominator,numerator},samplingRate,` +
				`spanName{client,server},tags}`,
		},
		NotHandled: []Field{
			{"spec.bootstrap",
				"EG v1.9 builds the proxy's bootstrap from it and refuses one that changes what it relies on " +
					"(dynamic_resources...), and then the Gateways using this EnvoyProxy; the reference translator does not check it"},
			{"spec.lua",
				"EG v1.10 (v1.10-preview's envoyproxy-lua-config) would validate EnvoyExtensionPolicy Lua " +
					"scripts in that mode and sandbox"},
			{"spec.mergeGateways", "EG v1.9 would merge the Gateways using this EnvoyProxy into one proxy"},
			{"spec.mergeType",
				"EG v1.9 would merge a Gateway's own EnvoyProxy into its class's; the reference " +
					"translator lets it replace the class's"},
			{"spec.provider.kubernetes.useListenerPortAsContainerPort",
				"EG v1.9 would bind the listeners to their own ports instead of port + 10000 for ports below 1024"},
			{"spec.routingType", "EG v1.9 would route to the Services' cluster IPs instead of their endpoints"},
			{"spec.telemetry.accessLog.settings[].sinks[].als.backendSettings",
				"EG v1.9 would apply it to the ALS service's cluster"},
			{"spec.telemetry.accessLog.settings[].sinks[].openTelemetry.backendSettings",
				"EG v1.9 would apply it to the collector's cluster"},
			{"spec.telemetry.healthCheckLog", "EG v1.9 would log the proxy's active health check events"},
			{"spec.telemetry.metrics.clusterStatName", "EG v1.9 would name the clusters' stats after it (alt_stat_name)"},
			{"spec.telemetry.metrics.enablePerEndpointStats", "EG v1.9 would keep stats per endpoint of each cluster"},
			{"spec.telemetry.metrics.enableRequestResponseSizesStats",
				"EG v1.9 would record request and response size stats on the clusters"},
			{"spec.telemetry.metrics.enableVirtualHostStats", "EG v1.9 would keep stats per virtual host"},
			{"spec.telemetry.metrics.matches", "EG v1.9 would keep only the stats these names match"},
			{"spec.telemetry.metrics.prometheus", "EG v1.9 would configure the proxy's Prometheus endpoint"},
			{"spec.telemetry.metrics.sinks", "EG v1.9 would add metrics sinks (OpenTelemetry) to the proxy's bootstrap"},
			{"spec.telemetry.requestID", "EG v1.9 would set how request IDs are generated and used for tracing"},
			{"spec.telemetry.tracing.provider.backendSettings", "EG v1.9 would apply it to the tracing provider's cluster"},
		},
		NoEffect: []Field{
			{"spec.concurrency", "EG v1.9 uses it for the proxy's Deployment, Service or command line, not the xDS"},
			{"spec.extraArgs", "EG v1.9 uses it for the proxy's Deployment, Service or command line, not the xDS"},
			{"spec.logging", "EG v1.9 uses it for the proxy's Deployment, Service or command line, not the xDS"},
			{"spec.provider.host", "EG v1.9 uses it for the proxy's Deployment, Service or command line, not the xDS"},
			{"spec.provider.kubernetes.envoyDaemonSet",
				"EG v1.9 uses it for the proxy's Deployment, Service or command line, not the xDS"},
			{"spec.provider.kubernetes.envoyDeployment",
				"EG v1.9 uses it for the proxy's Deployment, Service or command line, not the xDS"},
			{"spec.provider.kubernetes.envoyHpa",
				"EG v1.9 uses it for the proxy's Deployment, Service or command line, not the xDS"},
			{"spec.provider.kubernetes.envoyPDB",
				"EG v1.9 uses it for the proxy's Deployment, Service or command line, not the xDS"},
			{"spec.provider.kubernetes.envoyService",
				"EG v1.9 uses it for the proxy's Deployment, Service or command line, not the xDS"},
			{"spec.provider.kubernetes.envoyServiceAccount",
				"EG v1.9 uses it for the proxy's Deployment, Service or command line, not the xDS"},
			{"spec.provider.type", "EG v1.9 uses it for the proxy's Deployment, Service or command line, not the xDS"},
			{"spec.shutdown", "EG v1.9 uses it for the proxy's Deployment, Service or command line, not the xDS"},
			{"spec.telemetry.accessLog.settings[].sinks[].als.backendRef",
				"EG v1.9 reads only backendRefs for a telemetry backend: this deprecated single reference is ignored"},
			{"spec.telemetry.accessLog.settings[].sinks[].als.backendRefs[].fallback",
				"EG v1.9 makes no fallback among a telemetry service's backends"},
			{"spec.telemetry.accessLog.settings[].sinks[].als.backendRefs[].weight",
				"EG v1.9 gives every backend of a telemetry service the same weight"},
			{"spec.telemetry.accessLog.settings[].sinks[].openTelemetry.backendRef",
				"EG v1.9 reads only backendRefs for a telemetry backend: this deprecated single reference is ignored"},
			{"spec.telemetry.tracing.provider.backendRef",
				"EG v1.9 reads only backendRefs for a telemetry backend: this deprecated single reference is ignored"},
			{"spec.telemetry.tracing.provider.backendRefs[].fallback",
				"EG v1.9 makes no fallback among a tracing provider's backends"},
			{"spec.telemetry.tracing.provider.backendRefs[].weight",
				"EG v1.9 gives every backend of a tracing provider the same weight"},
			{"spec.telemetry.accessLog.settings[].sinks[].openTelemetry.backendRefs[].fallback",
				"EG v1.9 makes no fallback among a telemetry collector's backends"},
			{"spec.telemetry.accessLog.settings[].sinks[].openTelemetry.backendRefs[].weight",
				"EG v1.9 gives every backend of a telemetry collector the same weight"},
		},
	},
	"HTTPRouteFilter": {
		Handled: []string{
			`spec.credentialInjection{credential.valueRef{group,kind,name,namespace},header,overwrite}`,
			`spec.directResponse{body{inline,type,valueRef{group,kind,name}},contentType,header{add[]{name,value},remove,` +
				`set[]{name,value}},statusCode}`,
			`spec.matches[].cookies[]{name,type,value}`,
			`spec.urlRewrite{appendXForwardedHost,hostname{header,pathRegex{pattern,substitution},type},` +
				`path{replaceRegexMatch{pattern,substitution},type}}`,
		},
	},
	"SecurityPolicy": {
		Handled: []string{
			`spec.apiKeyAuth{credentialRefs[]{group,kind,name,namespace},extractFrom[]{cookies,headers,params},` +
				`forwardClientIDHeader,sanitize}`,
			`spec.authorization{defaultAction,rules[]{action,cel,name,operation{methods,path{invert,type,value}},` +
				`principal{clientCIDRs,clientIPGeoLocations[]{anonymous{isAnonymous,isHosting,isProxy,isTor,isVPN},asn,city,` +
				`country,isp,region},headers[]{name,values},jwt{claims[]{name,valueType,values},provider,scopes}}}}`,
			`spec.basicAuth{forwardUsernameHeader,users{group,kind,name,namespace}}`,
			`spec.cors{allowCredentials,allowHeaders,allowMethods,allowOrigins,exposeHeaders,maxAge}`,
			`spec.csrf{additionalOrigins,shadowFraction{denominator,numerator}}`,
			`spec.extAuth{bodyToExtAuth.maxRequestBytes,contextExtensions[]{name,type,value,valueRef{group,key,kind,name}},` +
				`failOpen,grpc{backendRef{group,kind,name,namespace,port},backendRefs[]{group,kind,name,namespace,port,weight},` +
				`backendSettings{circuitBreaker{maxConnections,maxParallelRequests,maxParallelRetries,maxPendingRequests,` +
				`perEndpoint.maxConnections},loadBalancer{backendUtilization{blackoutPeriod,errorUtilizationPenaltyPercent,` +
				`keepResponseHeaders,metricNamesForComputingUtilization,outOfBand{authority,port,reportingPeriod},` +
				`weightExpirationPeriod,weightUpdatePeriod},slowStart.window,type},retry{numAttemptsPerPriority,numRetries,` +
				`perRetry{backOff{baseInterval,maxInterval},timeout},retryOn{httpStatusCodes,triggers}}}},headersToExtAuth,` +
				`http{backendRef{group,kind,name,namespace,port},backendRefs[]{group,kind,name,namespace,port,weight},` +
				`backendSettings{circuitBreaker{maxConnections,maxParallelRequests,maxParallelRetries,maxPendingRequests,` +
				`perEndpoint.maxConnections},loadBalancer{backendUtilization{blackoutPeriod,errorUtilizationPenaltyPercent,` +
				`keepResponseHeaders,metricNamesForComputingUtilization,outOfBand{authority,port,reportingPeriod},` +
				`weightExpirationPeriod,weightUpdatePeriod},slowStart.window,type},retry{numAttemptsPerPriority,numRetries,` +
				`perRetry{backOff{baseInterval,maxInterval},timeout},retryOn{httpStatusCodes,triggers}}},headersToBackend,path,` +
				`pathOverride},includeRouteMetadata,recomputeRoute,statusOnError,timeout}`,
			`spec.jwt{failOpen,optional,providers[]{audiences,claimToHeaders[]{claim,header},extractFrom{cookies,` +
				`headers[]{name,valuePrefix},params},issuer,localJWKS{inline,type,valueRef{group,kind,name}},name,recomputeRoute,` +
				`remoteJWKS{backendRefs[]{group,kind,name,namespace,port,weight},backendSettings{circuitBreaker{maxConnections,` +
				`maxParallelRequests,maxParallelRetries,maxPendingRequests,perEndpoint.maxConnections},` +
				`loadBalancer{backendUtilization{blackoutPeriod,errorUtilizationPenaltyPercent,keepResponseHeaders,` +
				`metricNamesForComputingUtilization,outOfBand{authority,port,reportingPeriod},weightExpirationPeriod,` +
				`weightUpdatePeriod},slowStart.window,type},retry{numAttemptsPerPriority,numRetries,` +
				`perRetry{backOff{baseInterval,maxInterval},timeout},retryOn{httpStatusCodes,triggers}}},cacheDuration,` +
				`failedRefetchDuration,uri}}}`,
			`spec.mergeType`,
			`spec.oidc{clientID,clientIDRef{group,kind,name,namespace},clientSecret{group,kind,name,namespace},` +
				`cookieConfig.sameSite,cookieDomain,cookieNames{accessToken,idToken},csrfTokenTTL,defaultRefreshTokenTTL,` +
				`defaultTokenTTL,denyRedirect.headers[]{name,type,value},disableTokenEncryption,forwardAccessToken,` +
				`forwardIDToken.header,logoutPath,passThroughAuthHeader,provider{authorizationEndpoint,backendRef{group,kind,` +
				`name,namespace,port},backendRefs[]{group,kind,name,namespace,port,weight},` +
				`backendSettings{circuitBreaker{maxConnections,maxParallelRequests,maxParallelRetries,maxPendingRequests,` +
				`perEndpoint.maxConnections},loadBalancer{backendUtilization{blackoutPeriod,errorUtilizationPenaltyPercent,` +
				`keepResponseHeaders,metricNamesForComputingUtilization,outOfBand{authority,port,reportingPeriod},` +
				`weightExpirationPeriod,weightUpdatePeriod},slowStart.window,type},retry{numAttemptsPerPriority,numRetries,` +
				`perRetry{backOff{baseInterval,maxInterval},timeout},retryOn{httpStatusCodes,triggers}}},endSessionEndpoint,` +
				`issuer,tokenEndpoint},redirectURL,refreshToken,resources,scopes}`,
			`spec.targetRef{group,kind,name,sectionName}`,
			`spec.targetRefs[]{group,kind,name,sectionName}`,
			`spec.targetSelectors[]{group,kind,matchExpressions[]{key,operator,values},matchLabels,namespaces{from,` +
				`selector{matchExpressions[]{key,operator,values},matchLabels}}}`,
		},
		NotHandled: []Field{
			{"spec.extAuth.grpc.backendRefs[].fallback",
				"EG v1.9 would make that ext_authz backend a fallback, used only when the others are unhealthy"},
			{"spec.extAuth.grpc.backendSettings.circuitBreaker.maxRequestsPerConnection",
				"EG v1.9 would set max_requests_per_connection on the ext_authz service cluster"},
			{"spec.extAuth.grpc.backendSettings.circuitBreaker.retryBudget",
				"EG v1.9 would set a retry budget on the ext_authz service cluster"},
			{"spec.extAuth.grpc.backendSettings.connection", "EG v1.9 would apply it to the ext_authz service cluster"},
			{"spec.extAuth.grpc.backendSettings.dns", "EG v1.9 would apply it to the ext_authz service cluster"},
			{"spec.extAuth.grpc.backendSettings.healthCheck", "EG v1.9 would apply it to the ext_authz service cluster"},
			{"spec.extAuth.grpc.backendSettings.http2", "EG v1.9 would apply it to the ext_authz service cluster"},
			{"spec.extAuth.grpc.backendSettings.loadBalancer.consistentHash",
				"EG v1.9 would use a ring hash or Maglev load balancer on the ext_authz service cluster"},
			{"spec.extAuth.grpc.backendSettings.loadBalancer.dynamicModule",
				"EG v1.9 would set it on the load balancing policy of the ext_authz service cluster"},
			{"spec.extAuth.grpc.backendSettings.loadBalancer.endpointOverride",
				"EG v1.9 would set it on the load balancing policy of the ext_authz service cluster"},
			{"spec.extAuth.grpc.backendSettings.loadBalancer.zoneAware",
				"EG v1.9 would set it on the load balancing policy of the ext_authz service cluster"},
			{"spec.extAuth.grpc.backendSettings.proxyProtocol", "EG v1.9 would apply it to the ext_authz service cluster"},
			{"spec.extAuth.grpc.backendSettings.tcpKeepalive", "EG v1.9 would apply it to the ext_authz service cluster"},
			{"spec.extAuth.grpc.backendSettings.timeout", "EG v1.9 would apply it to the ext_authz service cluster"},
			{"spec.extAuth.http.backendRefs[].fallback",
				"EG v1.9 would make that ext_authz backend a fallback, used only when the others are unhealthy"},
			{"spec.extAuth.http.backendSettings.circuitBreaker.maxRequestsPerConnection",
				"EG v1.9 would set max_requests_per_connection on the ext_authz service cluster"},
			{"spec.extAuth.http.backendSettings.circuitBreaker.retryBudget",
				"EG v1.9 would set a retry budget on the ext_authz service cluster"},
			{"spec.extAuth.http.backendSettings.connection", "EG v1.9 would apply it to the ext_authz service cluster"},
			{"spec.extAuth.http.backendSettings.dns", "EG v1.9 would apply it to the ext_authz service cluster"},
			{"spec.extAuth.http.backendSettings.healthCheck", "EG v1.9 would apply it to the ext_authz service cluster"},
			{"spec.extAuth.http.backendSettings.http2", "EG v1.9 would apply it to the ext_authz service cluster"},
			{"spec.extAuth.http.backendSettings.loadBalancer.consistentHash",
				"EG v1.9 would use a ring hash or Maglev load balancer on the ext_authz service cluster"},
			{"spec.extAuth.http.backendSettings.loadBalancer.dynamicModule",
				"EG v1.9 would set it on the load balancing policy of the ext_authz service cluster"},
			{"spec.extAuth.http.backendSettings.loadBalancer.endpointOverride",
				"EG v1.9 would set it on the load balancing policy of the ext_authz service cluster"},
			{"spec.extAuth.http.backendSettings.loadBalancer.zoneAware",
				"EG v1.9 would set it on the load balancing policy of the ext_authz service cluster"},
			{"spec.extAuth.http.backendSettings.proxyProtocol", "EG v1.9 would apply it to the ext_authz service cluster"},
			{"spec.extAuth.http.backendSettings.tcpKeepalive", "EG v1.9 would apply it to the ext_authz service cluster"},
			{"spec.extAuth.http.backendSettings.timeout", "EG v1.9 would apply it to the ext_authz service cluster"},
			{"spec.jwt.providers[].remoteJWKS.backendRef",
				"EG v1.9 would fetch the JWKS through this (deprecated) backend; the reference translator reads backendRefs only"},
			{"spec.jwt.providers[].remoteJWKS.backendRefs[].fallback",
				"EG v1.9 would make that JWKS backend a fallback, used only when the others are unhealthy"},
			{"spec.jwt.providers[].remoteJWKS.backendSettings.circuitBreaker.maxRequestsPerConnection",
				"EG v1.9 would set max_requests_per_connection on the JWKS cluster"},
			{"spec.jwt.providers[].remoteJWKS.backendSettings.circuitBreaker.retryBudget",
				"EG v1.9 would set a retry budget on the JWKS cluster"},
			{"spec.jwt.providers[].remoteJWKS.backendSettings.connection", "EG v1.9 would apply it to the JWKS cluster"},
			{"spec.jwt.providers[].remoteJWKS.backendSettings.dns", "EG v1.9 would apply it to the JWKS cluster"},
			{"spec.jwt.providers[].remoteJWKS.backendSettings.healthCheck", "EG v1.9 would apply it to the JWKS cluster"},
			{"spec.jwt.providers[].remoteJWKS.backendSettings.http2", "EG v1.9 would apply it to the JWKS cluster"},
			{"spec.jwt.providers[].remoteJWKS.backendSettings.loadBalancer.consistentHash",
				"EG v1.9 would use a ring hash or Maglev load balancer on the JWKS cluster"},
			{"spec.jwt.providers[].remoteJWKS.backendSettings.loadBalancer.dynamicModule",
				"EG v1.9 would set it on the load balancing policy of the JWKS cluster"},
			{"spec.jwt.providers[].remoteJWKS.backendSettings.loadBalancer.endpointOverride",
				"EG v1.9 would set it on the load balancing policy of the JWKS cluster"},
			{"spec.jwt.providers[].remoteJWKS.backendSettings.loadBalancer.zoneAware",
				"EG v1.9 would set it on the load balancing policy of the JWKS cluster"},
			{"spec.jwt.providers[].remoteJWKS.backendSettings.proxyProtocol", "EG v1.9 would apply it to the JWKS cluster"},
			{"spec.jwt.providers[].remoteJWKS.backendSettings.tcpKeepalive", "EG v1.9 would apply it to the JWKS cluster"},
			{"spec.jwt.providers[].remoteJWKS.backendSettings.timeout", "EG v1.9 would apply it to the JWKS cluster"},
			{"spec.oidc.provider.backendRefs[].fallback",
				"EG v1.9 would make that OIDC provider backend a fallback, used only when the others are unhealthy"},
			{"spec.oidc.provider.backendSettings.circuitBreaker.maxRequestsPerConnection",
				"EG v1.9 would set max_requests_per_connection on the OIDC provider cluster"},
			{"spec.oidc.provider.backendSettings.circuitBreaker.retryBudget",
				"EG v1.9 would set a retry budget on the OIDC provider cluster"},
			{"spec.oidc.provider.backendSettings.connection", "EG v1.9 would apply it to the OIDC provider cluster"},
			{"spec.oidc.provider.backendSettings.dns", "EG v1.9 would apply it to the OIDC provider cluster"},
			{"spec.oidc.provider.backendSettings.healthCheck", "EG v1.9 would apply it to the OIDC provider cluster"},
			{"spec.oidc.provider.backendSettings.http2", "EG v1.9 would apply it to the OIDC provider cluster"},
			{"spec.oidc.provider.backendSettings.loadBalancer.consistentHash",
				"EG v1.9 would use a ring hash or Maglev load balancer on the OIDC provider cluster"},
			{"spec.oidc.provider.backendSettings.loadBalancer.dynamicModule",
				"EG v1.9 would set it on the load balancing policy of the OIDC provider cluster"},
			{"spec.oidc.provider.backendSettings.loadBalancer.endpointOverride",
				"EG v1.9 would set it on the load balancing policy of the OIDC provider cluster"},
			{"spec.oidc.provider.backendSettings.loadBalancer.zoneAware",
				"EG v1.9 would set it on the load balancing policy of the OIDC provider cluster"},
			{"spec.oidc.provider.backendSettings.proxyProtocol", "EG v1.9 would apply it to the OIDC provider cluster"},
			{"spec.oidc.provider.backendSettings.tcpKeepalive", "EG v1.9 would apply it to the OIDC provider cluster"},
			{"spec.oidc.provider.backendSettings.timeout", "EG v1.9 would apply it to the OIDC provider cluster"},
		},
	},
}
