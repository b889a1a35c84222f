// Package config holds the Envoy Gateway settings a translation runs under: what a scenario
// writes under `config:` or what an EnvoyGateway document among the objects says.
package config

import (
	"fmt"

	egv1a1 "github.com/envoyproxy/gateway/api/v1alpha1"
)

// Config is the part of EG's configuration that changes translation.
type Config struct {
	ExtensionAPIs *egv1a1.ExtensionAPISettings `json:"extensionApis,omitempty"`
	RuntimeFlags  *egv1a1.RuntimeFlags         `json:"runtimeFlags,omitempty"`
	// MergeGateways puts every Gateway of a GatewayClass on one proxy (EnvoyProxy's
	// mergeGateways); carried here so a scenario can say it in one place.
	MergeGateways bool `json:"mergeGateways,omitempty"`
	// RateLimit is EG's rate limit service setting (its database backend, timeout and
	// failClosed). Global rate limits of BackendTrafficPolicies need it (BTP-03); without
	// it EG refuses them.
	RateLimit *egv1a1.RateLimit `json:"rateLimit,omitempty"`
}

// FromEnvoyGateway reads the settings of an EnvoyGateway document.
func FromEnvoyGateway(eg *egv1a1.EnvoyGateway) Config {
	if eg == nil {
		return Config{}
	}
	return Config{ExtensionAPIs: eg.ExtensionAPIs, RuntimeFlags: eg.RuntimeFlags, RateLimit: eg.RateLimit}
}

// Combine puts a document's settings under the scenario's: a scenario may not say the same
// thing twice in two places.
func Combine(scenario, doc Config) (Config, error) {
	out := scenario
	if doc.ExtensionAPIs != nil {
		if scenario.ExtensionAPIs != nil {
			return Config{}, fmt.Errorf("extensionApis is set both in config and in an EnvoyGateway document")
		}
		out.ExtensionAPIs = doc.ExtensionAPIs
	}
	if doc.RuntimeFlags != nil {
		if scenario.RuntimeFlags != nil {
			return Config{}, fmt.Errorf("runtimeFlags is set both in config and in an EnvoyGateway document")
		}
		out.RuntimeFlags = doc.RuntimeFlags
	}
	if doc.RateLimit != nil {
		if scenario.RateLimit != nil {
			return Config{}, fmt.Errorf("rateLimit is set both in config and in an EnvoyGateway document")
		}
		out.RateLimit = doc.RateLimit
	}
	if err := out.Validate(); err != nil {
		return Config{}, err
	}
	return out, nil
}
