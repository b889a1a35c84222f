package policy

import (
	"fmt"
	"math"
	"time"

	egv1a1 "github.com/envoyproxy/gateway/api/v1alpha1"

	"github.com/egharness/egharness/translator/ir"
)

// A BackendTrafficPolicy's HTTP filter features (EG v1.9): faultInjection, the
// compressors and requestBuffer, resolved into typed IR values on the route once the
// features resolved (a policy that failed is gone from the route by then).

// resolveBackendTrafficFilters sets them on every HTTP route.
func resolveBackendTrafficFilters(x *ir.XDS) {
	for _, l := range x.HTTP {
		for _, r := range l.Routes {
			ResolveBackendTrafficFilters(&r.Policies)
		}
	}
}

// ResolveBackendTrafficFilters sets the filter features of p.BackendTraffic on p (none
// without it). Exported for the xDS stage's tests, which build routes by hand.
func ResolveBackendTrafficFilters(p *ir.RoutePolicies) {
	p.Fault, p.Compressors, p.RequestBuffer = nil, nil, nil
	a := p.BackendTraffic
	if a == nil || a.Spec == nil {
		return
	}
	p.Fault = resolveFault(a.Spec.FaultInjection)
	p.Compressors = resolveCompressors(a.Spec.Compression, a.Spec.Compressor)
	p.RequestBuffer = resolveRequestBuffer(a.Spec.RequestBuffer)
}

func resolveFault(fi *egv1a1.FaultInjection) *ir.Fault {
	if fi == nil {
		return nil
	}
	out := &ir.Fault{}
	if d := fi.Delay; d != nil {
		delay := &ir.FaultDelay{Percentage: d.Percentage}
		if d.FixedDelay != nil {
			v, err := time.ParseDuration(string(*d.FixedDelay))
			if err != nil {
				// EG drops the whole fault injection of a policy whose delay does not parse
				return &ir.Fault{}
			}
			delay.Fixed = &v
		}
		out.Delay = delay
	}
	if a := fi.Abort; a != nil {
		abort := &ir.FaultAbort{Percentage: a.Percentage}
		if a.HTTPStatus != nil {
			v := uint32(*a.HTTPStatus)
			abort.HTTPStatus = &v
		}
		if a.GrpcStatus != nil {
			v := uint32(*a.GrpcStatus)
			abort.GRPCStatus = &v
		}
		out.Abort = abort
	}
	return out
}

// resolveCompressors are the policy's compressors: spec.compressor when it lists any (an
// entry counts only with its type's settings, e.g. gzip: {}), else the deprecated
// spec.compression; the first one is chosen first when a client accepts several.
func resolveCompressors(deprecated, current []*egv1a1.Compression) []ir.Compressor {
	list, needSettings := current, true
	if len(current) == 0 {
		list, needSettings = deprecated, false
	}
	var out []ir.Compressor
	for i, c := range list {
		if c == nil {
			continue
		}
		if needSettings && !((c.Type == egv1a1.GzipCompressorType && c.Gzip != nil) ||
			(c.Type == egv1a1.BrotliCompressorType && c.Brotli != nil) ||
			(c.Type == egv1a1.ZstdCompressorType && c.Zstd != nil)) {
			continue
		}
		cp := ir.Compressor{Type: string(c.Type), ChooseFirst: i == 0}
		if c.MinContentLength != nil {
			if v, ok := c.MinContentLength.AsInt64(); ok {
				n := uint32(v)
				cp.MinContentLength = &n
			}
		}
		out = append(out, cp)
	}
	return out
}

// resolveRequestBuffer is the buffer's limit in bytes, or why it cannot be one.
func resolveRequestBuffer(rb *egv1a1.RequestBuffer) *ir.RequestBuffer {
	if rb == nil {
		return nil
	}
	limit, ok := rb.Limit.AsInt64()
	if !ok || limit < 0 || limit > math.MaxUint32 {
		return &ir.RequestBuffer{OutOfRange: fmt.Sprintf("requestBuffer: limit %s is out of range, must be between 0 and %d",
			rb.Limit.String(), uint32(math.MaxUint32))}
	}
	return &ir.RequestBuffer{MaxRequestBytes: uint32(limit)}
}
