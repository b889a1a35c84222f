package corpus

import (
	"sort"

	egv1a1 "github.com/envoyproxy/gateway/api/v1alpha1"

	"github.com/egharness/egharness/translator/config"
)

// overrides are the cases whose EG translator settings differ from the defaults of EG
// v1.9.1's TestTranslate (facts read from that test, kept here as our own table). For a case
// it lists, the test takes every setting from its entry, where an unnamed setting is off: so
// EnvoyPatchPolicy is off for all of them (no entry turns it on) and Backend is off unless
// the entry turns it on.
type overrides struct {
	backend              bool // Backend on
	luaOff               bool // Lua EnvoyExtensionPolicies refused
	sds                  bool // SDS Secret references on
	perResourceSystemCA  bool // one system CA secret per resource
	gatewayNamespaceMode bool // proxies in the Gateway's namespace: no setting of ours
	runningOnHost        bool // EG runs on the host: no setting of ours
}

var caseOverrides = map[string]overrides{
	"envoypatchpolicy-invalid-feature-disabled":                          {},
	"backend-invalid-feature-disabled":                                   {},
	"gateway-namespace-mode-infra-httproute":                             {gatewayNamespaceMode: true},
	"backend-with-localhost-host-infra":                                  {backend: true, runningOnHost: true},
	"httproute-attaching-to-listener-with-backend-backendref-host-infra": {backend: true, runningOnHost: true},
	"envoyextensionpolicy-lua-feature-disabled":                          {luaOff: true},
	"sds":         {backend: true, sds: true},
	"sds-invalid": {backend: true, sds: true},
	"envoyextensionpolicy-with-extproc-with-backendtlspolicy-shared-secret": {},
	"envoyproxy-otel-backend-tls-per-resource-secret": {backend: true,
		perResourceSystemCA: true},
	"envoyextensionpolicy-with-extproc-with-backendtlspolicy-per-resource-secret": {perResourceSystemCA: true},
	"backend-system-truststore-shared-secret":                                     {backend: true},
	"backend-system-truststore-per-resource-secret": {backend: true,
		perResourceSystemCA: true},
	"backend-system-truststore-btlsp-override-shared-secret":       {backend: true},
	"backend-system-truststore-btlsp-override-per-resource-secret": {backend: true, perResourceSystemCA: true},
	"sds-listener":         {backend: true, sds: true},
	"sds-listener-invalid": {backend: true, sds: true},
}

// Settings are the EnvoyGateway settings one case runs under, and the ones it needs that
// our translator cannot be given (each a reason the case may disagree).
type Settings struct {
	Config config.Config
	// Inexpressible names the test's settings for this case that no setting of ours says.
	Inexpressible []string
}

// settingsFor is EG's TestTranslate configuration for a case: EnvoyPatchPolicy, Backend and
// Lua on, a global rate limit service, Gateways merged when the class's EnvoyProxy (or the
// default spec) says so, and the case's overrides.
func settingsFor(name string, in Input) Settings {
	o, listed := caseOverrides[name]
	if !listed {
		o.backend = true
	}
	api := &egv1a1.ExtensionAPISettings{
		EnableEnvoyPatchPolicy: !listed,
		EnableBackend:          o.backend,
		EnableLua:              !o.luaOff,
		EnableSDSSecretRef:     o.sds,
	}
	redis := "redis.redis-system.svc.cluster.local:6379"
	cfg := config.Config{
		ExtensionAPIs: api,
		RateLimit: &egv1a1.RateLimit{Backend: egv1a1.RateLimitDatabaseBackend{
			Type:  egv1a1.RedisBackendType,
			Redis: &egv1a1.RateLimitRedisSettings{URL: &redis},
		}},
	}
	if o.perResourceSystemCA {
		cfg.RuntimeFlags = &egv1a1.RuntimeFlags{Enabled: []egv1a1.RuntimeFlag{egv1a1.PerResourceSystemCASecret}}
	}
	var missing []string
	switch {
	case in.ClassProxy != nil && in.ClassProxy.Spec.MergeGateways != nil:
		cfg.MergeGateways = *in.ClassProxy.Spec.MergeGateways
	case in.DefaultSpec != nil && in.DefaultSpec.MergeGateways != nil:
		cfg.MergeGateways = *in.DefaultSpec.MergeGateways
	}
	if in.DefaultSpec != nil {
		missing = append(missing, "envoyProxyDefaultSpec (the EnvoyGateway configuration's default EnvoyProxy spec)")
	}
	if o.gatewayNamespaceMode {
		missing = append(missing, "GatewayNamespaceMode (proxies deployed in each Gateway's namespace)")
	}
	if o.runningOnHost {
		missing = append(missing, "RunningOnHost (EG running on the host, not in Kubernetes)")
	}
	if len(in.Unread) > 0 {
		for _, k := range in.Unread {
			missing = append(missing, k+" (objects of an extension server's kinds)")
		}
	}
	sort.Strings(missing)
	return Settings{Config: cfg, Inexpressible: missing}
}
