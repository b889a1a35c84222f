package config

import (
	"fmt"
	"time"
)

// Where EG deploys its rate limit service: the Deployment envoy-ratelimit in the
// controller's namespace, gRPC on port 8081, reached through the cluster DNS domain.
const (
	RateLimitServiceHost = "envoy-ratelimit.envoy-gateway-system.svc.cluster.local"
	RateLimitServicePort = 8081
)

// GlobalRateLimitOn says whether BackendTrafficPolicies may set global rate limits: EG
// runs its rate limit service only when its configuration names a rateLimit backend.
func (c Config) GlobalRateLimitOn() bool {
	return c.RateLimit != nil
}

// RateLimitTimeout is how long Envoy waits for the rate limit service (0: Envoy's
// default), from rateLimit.timeout.
func (c Config) RateLimitTimeout() (time.Duration, error) {
	if c.RateLimit == nil || c.RateLimit.Timeout == nil {
		return 0, nil
	}
	d, err := time.ParseDuration(string(*c.RateLimit.Timeout))
	if err != nil {
		return 0, fmt.Errorf("rateLimit.timeout: %w", err)
	}
	return d, nil
}
