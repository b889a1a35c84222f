package xds

import (
	"time"

	"github.com/egharness/egharness/translator/ir"
)

// The BackendTrafficPolicy in force on a route (BTP-02): what it sets on the route.

// requestTimeout is the route's request timeout: the HTTPRoute rule's own timeouts win
// over the BackendTrafficPolicy's timeout.http.requestTimeout, as in EG.
func requestTimeout(r *ir.HTTPRoute) *time.Duration {
	if r.Timeout != nil {
		return r.Timeout
	}
	bt := r.Policies.BackendTraffic
	if bt == nil || bt.Spec == nil || bt.Spec.Timeout == nil || bt.Spec.Timeout.HTTP == nil || bt.Spec.Timeout.HTTP.RequestTimeout == nil {
		return nil
	}
	d, err := time.ParseDuration(string(*bt.Spec.Timeout.HTTP.RequestTimeout))
	if err != nil {
		return nil
	}
	return &d
}

// streamIdleTimeout is the policy's timeout.http.streamIdleTimeout, which replaces the
// idle timeout derived from the request timeout.
func streamIdleTimeout(r *ir.HTTPRoute) *time.Duration {
	bt := r.Policies.BackendTraffic
	if bt == nil || bt.Spec == nil || bt.Spec.Timeout == nil || bt.Spec.Timeout.HTTP == nil || bt.Spec.Timeout.HTTP.StreamIdleTimeout == nil {
		return nil
	}
	d, err := time.ParseDuration(string(*bt.Spec.Timeout.HTTP.StreamIdleTimeout))
	if err != nil {
		return nil
	}
	return &d
}
