package ir

import egv1a1 "github.com/envoyproxy/gateway/api/v1alpha1"

// The names EG v1.9 gives its HTTP filters (the prefix of every filter's name, and the
// kinds its filter order ranks). They come from EG's API package here, at the IR, so that
// the xDS stage spells the same names without importing EG's API types.
const (
	FilterAPIKeyAuth          = string(egv1a1.EnvoyFilterAPIKeyAuth)
	FilterBandwidthLimit      = string(egv1a1.EnvoyFilterBandwidthLimit)
	FilterBasicAuth           = string(egv1a1.EnvoyFilterBasicAuth)
	FilterBuffer              = string(egv1a1.EnvoyFilterBuffer)
	FilterCORS                = string(egv1a1.EnvoyFilterCORS)
	FilterCSRF                = string(egv1a1.EnvoyFilterCSRF)
	FilterCompressor          = string(egv1a1.EnvoyFilterCompressor)
	FilterCredentialInjector  = string(egv1a1.EnvoyFilterCredentialInjector)
	FilterCustomResponse      = string(egv1a1.EnvoyFilterCustomResponse)
	FilterDynamicForwardProxy = string(egv1a1.EnvoyFilterDynamicForwardProxy)
	FilterDynamicModules      = string(egv1a1.EnvoyFilterDynamicModules)
	FilterExtAuthz            = string(egv1a1.EnvoyFilterExtAuthz)
	FilterExtProc             = string(egv1a1.EnvoyFilterExtProc)
	FilterFault               = string(egv1a1.EnvoyFilterFault)
	FilterGRPCStats           = string(egv1a1.EnvoyFilterGRPCStats)
	FilterGRPCWeb             = string(egv1a1.EnvoyFilterGRPCWeb)
	FilterGeoIP               = string(egv1a1.EnvoyFilterGeoIP)
	FilterHeaderMutation      = string(egv1a1.EnvoyFilterHeaderMutation)
	FilterHealthCheck         = string(egv1a1.EnvoyFilterHealthCheck)
	FilterJWTAuthn            = string(egv1a1.EnvoyFilterJWTAuthn)
	FilterLocalRateLimit      = string(egv1a1.EnvoyFilterLocalRateLimit)
	FilterLua                 = string(egv1a1.EnvoyFilterLua)
	FilterOAuth2              = string(egv1a1.EnvoyFilterOAuth2)
	FilterRBAC                = string(egv1a1.EnvoyFilterRBAC)
	FilterRateLimit           = string(egv1a1.EnvoyFilterRateLimit)
	FilterRouter              = string(egv1a1.EnvoyFilterRouter)
	FilterSessionPersistence  = string(egv1a1.EnvoyFilterSessionPersistence)
	FilterWasm                = string(egv1a1.EnvoyFilterWasm)
)
