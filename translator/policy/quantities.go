package policy

import (
	"errors"
	"fmt"
	"math"

	egv1a1 "github.com/envoyproxy/gateway/api/v1alpha1"
)

// validateQuantities refuses a BackendTrafficPolicy whose connection buffer limit Envoy
// cannot take, as EG v1.9 does (its testdata:
// backendtrafficpolicy-buffer-limit-out-of-range-error): the limit is a 32-bit byte count
// in Envoy, so a value outside 0..2^32-1 makes the policy Invalid, with EG's message,
// rather than a value Envoy would truncate. (The request buffer's limit, the same kind of
// count, is checked where requestBuffer is translated.)
func validateQuantities(spec *egv1a1.BackendTrafficPolicySpec) error {
	if spec == nil {
		return nil
	}
	var errs []error
	if c := spec.Connection; c != nil && c.BufferLimit != nil {
		v, ok := c.BufferLimit.AsInt64()
		switch {
		case !ok:
			errs = append(errs, fmt.Errorf("BackendConnection: invalid BufferLimit value %s", c.BufferLimit.String()))
		case v < 0 || v > math.MaxUint32:
			errs = append(errs, fmt.Errorf("BackendConnection: BufferLimit value %s is out of range", c.BufferLimit.String()))
		}
	}
	return errors.Join(errs...)
}
