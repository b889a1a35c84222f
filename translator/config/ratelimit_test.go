package config

import (
	"strings"
	"testing"
	"time"

	egv1a1 "github.com/envoyproxy/gateway/api/v1alpha1"
	gwapiv1 "sigs.k8s.io/gateway-api/apis/v1"
)

// The rate limit setting comes from the scenario or an EnvoyGateway document, not both; its
// timeout must parse, as EG refuses to start otherwise.
func TestRateLimitSetting(t *testing.T) {
	url := "redis:6379"
	rl := &egv1a1.RateLimit{Backend: egv1a1.RateLimitDatabaseBackend{Type: egv1a1.RedisBackendType,
		Redis: &egv1a1.RateLimitRedisSettings{URL: &url}}}
	doc := FromEnvoyGateway(&egv1a1.EnvoyGateway{EnvoyGatewaySpec: egv1a1.EnvoyGatewaySpec{RateLimit: rl}})
	if !doc.GlobalRateLimitOn() {
		t.Fatal("an EnvoyGateway document's rateLimit turns global rate limits on")
	}
	if (Config{}).GlobalRateLimitOn() {
		t.Error("no rateLimit: global rate limits are off")
	}
	if c, err := Combine(Config{}, doc); err != nil || c.RateLimit != rl {
		t.Errorf("combine: %v %v", c.RateLimit, err)
	}
	if _, err := Combine(Config{RateLimit: rl}, doc); err == nil ||
		!strings.Contains(err.Error(), "rateLimit is set both") {
		t.Errorf("set twice: %v", err)
	}
	d := gwapiv1.Duration("50ms")
	if got, err := (Config{RateLimit: &egv1a1.RateLimit{Timeout: &d}}).RateLimitTimeout(); err != nil ||
		got != 50*time.Millisecond {
		t.Errorf("timeout %v %v", got, err)
	}
	bad := gwapiv1.Duration("soon")
	if err := (Config{RateLimit: &egv1a1.RateLimit{Timeout: &bad}}).Validate(); err == nil {
		t.Error("an unparsable timeout is refused")
	}
}
