package policy

import (
	"fmt"
	"math"

	egv1a1 "github.com/envoyproxy/gateway/api/v1alpha1"

	"github.com/egharness/egharness/translator/ir"
)

// A BackendTrafficPolicy's bandwidthLimit (EG v1.9): request and response limits in
// kibibytes per second, as Envoy's bandwidth_limit filter takes them.

// buildBandwidthLimit converts the limits, with EG's errors: a limit Envoy cannot take
// (below 1 KiB/s once divided by the unit) refuses the policy.
func buildBandwidthLimit(spec *egv1a1.BandwidthLimitSpec) (*ir.BandwidthLimit, error) {
	if spec == nil {
		return nil, nil
	}
	out := &ir.BandwidthLimit{}
	if r := spec.Request; r != nil {
		kibps, err := kibPerSecond("request", r.Limit)
		if err != nil {
			return nil, err
		}
		out.Request = &ir.BandwidthLimitConfig{KiBps: kibps}
	}
	if r := spec.Response; r != nil {
		kibps, err := kibPerSecond("response", r.Limit)
		if err != nil {
			return nil, err
		}
		out.Response = &ir.BandwidthLimitConfig{KiBps: kibps}
		if t := r.ResponseTrailers; t != nil {
			out.Response.Trailers = true
			if t.Prefix != nil {
				out.Response.TrailerPrefix = *t.Prefix
			}
		}
	}
	return out, nil
}

// kibPerSecond is the request or response (dir) limit in bytes per unit as whole KiB/s,
// rounded down.
func kibPerSecond(dir string, v egv1a1.BandwidthLimitValue) (uint64, error) {
	bytes, ok := v.Value.AsInt64()
	switch {
	case !ok:
		return 0, fmt.Errorf("%s limit value must be convertible to an int64", dir)
	case bytes < 0:
		return 0, fmt.Errorf("%s limit value must be positive", dir)
	}
	seconds := uint64(1)
	switch v.Unit {
	case egv1a1.BandwidthLimitUnitMinute:
		seconds = 60
	case egv1a1.BandwidthLimitUnitHour:
		seconds = 3600
	}
	kibps := uint64(bytes) / (seconds * 1024)
	if kibps == 0 {
		return 0, fmt.Errorf("%s: bandwidth limit of %d bytes per %s is below the minimum of 1 KiB/s", dir, bytes, v.Unit)
	}
	return kibps, nil
}

// validateBandwidthLimit is the verdict on an effective spec's bandwidthLimit, reported as
// "BandwidthLimit: <why>".
func validateBandwidthLimit(spec *egv1a1.BackendTrafficPolicySpec) error {
	if spec == nil {
		return nil
	}
	if _, err := buildBandwidthLimit(spec.BandwidthLimit); err != nil {
		return fmt.Errorf("BandwidthLimit: %w", err)
	}
	return nil
}

// validateRequestBuffer is EG v1.9's check of requestBuffer.limit (the buffer filter takes
// a 32-bit byte count): a policy beyond it is Invalid.
func validateRequestBuffer(spec *egv1a1.BackendTrafficPolicySpec) error {
	if spec == nil || spec.RequestBuffer == nil {
		return nil
	}
	v, ok := spec.RequestBuffer.Limit.AsInt64()
	if !ok {
		return fmt.Errorf("RequestBuffer: limit must be convertible to an int64")
	}
	if v < 0 || v > math.MaxUint32 {
		return fmt.Errorf("RequestBuffer: limit value %s is out of range, must be between 0 and %d",
			spec.RequestBuffer.Limit.String(), uint32(math.MaxUint32))
	}
	return nil
}
