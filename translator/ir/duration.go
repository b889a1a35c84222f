package ir

import (
	"time"

	gwapiv1 "sigs.k8s.io/gateway-api/apis/v1"
)

// Duration is a Gateway API duration as a time.Duration, nil when unset or when it does
// not parse (the CRD's pattern admits only durations that parse).
func Duration(d *gwapiv1.Duration) *time.Duration {
	if d == nil {
		return nil
	}
	v, err := time.ParseDuration(string(*d))
	if err != nil {
		return nil
	}
	return &v
}
