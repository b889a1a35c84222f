package policy

import (
	egv1a1 "github.com/envoyproxy/gateway/api/v1alpha1"

	"github.com/egharness/egharness/translator/ir"
)

// The ClientTrafficPolicy settings the connection manager takes directly (client address,
// HTTP timeouts, path handling, header switches), resolved into ir.ClientTraffic so that the
// xDS stage reads no spec. None of them refuses the policy: a timeout that does not parse
// is left out here, as the xDS stage always did.

// clientTraffic resolves them from the policy's spec.
func clientTraffic(s *egv1a1.ClientTrafficPolicySpec) *ir.ClientTraffic {
	if s == nil {
		return nil
	}
	out := &ir.ClientTraffic{ClientIP: clientIPDetection(s.ClientIPDetection)}
	if t := s.Timeout; t != nil && t.HTTP != nil {
		out.RequestReceivedTimeout = ir.Duration(t.HTTP.RequestReceivedTimeout)
		out.RequestHeadersReceivedTimeout = ir.Duration(t.HTTP.RequestHeadersReceivedTimeout)
		out.IdleTimeout = ir.Duration(t.HTTP.IdleTimeout)
		out.StreamIdleTimeout = ir.Duration(t.HTTP.StreamIdleTimeout)
	}
	if p := s.Path; p != nil {
		if p.DisableMergeSlashes != nil {
			merge := !*p.DisableMergeSlashes
			out.MergeSlashes = &merge
		}
		if p.EscapedSlashesAction != nil {
			out.EscapedSlashesAction = string(*p.EscapedSlashesAction)
		}
	}
	if h := s.Headers; h != nil {
		out.EnvoyHeaders = h.EnableEnvoyHeaders != nil && *h.EnableEnvoyHeaders
		out.RateLimitHeadersOff = h.DisableRateLimitHeaders != nil && *h.DisableRateLimitHeaders
	}
	return out
}

// clientIPDetection is clientIPDetection: a custom header, else X-Forwarded-For, else
// nothing (directSourceIP and no setting keep the connection's address).
func clientIPDetection(ip *egv1a1.ClientIPDetectionSettings) *ir.ClientIPDetection {
	if ip == nil {
		return nil
	}
	out := &ir.ClientIPDetection{}
	if h := ip.CustomHeader; h != nil {
		out.CustomHeader = &ir.ClientIPCustomHeader{Name: h.Name, FailClosed: h.FailClosed != nil && *h.FailClosed}
	}
	if x := ip.XForwardedFor; x != nil {
		xff := &ir.ClientIPXForwardedFor{
			SkipAppend:     x.DisableXForwardedForAppend != nil && *x.DisableXForwardedForAppend,
			NumTrustedHops: x.NumTrustedHops,
		}
		if x.TrustedCIDRs != nil {
			xff.TrustedCIDRs = make([]string, 0, len(x.TrustedCIDRs))
			for _, c := range x.TrustedCIDRs {
				xff.TrustedCIDRs = append(xff.TrustedCIDRs, string(c))
			}
		}
		out.XForwardedFor = xff
	}
	return out
}
