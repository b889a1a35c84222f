package xds

import (
	"net"

	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	hcmv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/network/http_connection_manager/v3"
	customheaderv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/http/original_ip_detection/custom_header/v3"
	xffv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/http/original_ip_detection/xff/v3"
	typev3 "github.com/envoyproxy/go-control-plane/envoy/type/v3"
	"google.golang.org/protobuf/types/known/durationpb"
	"google.golang.org/protobuf/types/known/wrapperspb"

	"github.com/egharness/egharness/translator/ir"
)

// The ClientTrafficPolicy in force on a listener, on its HTTP connection manager
// (CTP-02): how the client address is found, downstream HTTP timeouts and path handling.

const (
	xffExtension          = "envoy.extensions.http.original_ip_detection.xff"
	customHeaderExtension = "envoy.extensions.http.original_ip_detection.custom_header"
)

// applyClientTraffic changes the HCM of the listener l after the policy on it.
func applyClientTraffic(hcm *hcmv3.HttpConnectionManager, l *ir.HTTPListener) {
	if l == nil || l.Policies.ClientTrafficSettings == nil {
		return
	}
	s := l.Policies.ClientTrafficSettings
	if ip := s.ClientIP; ip != nil {
		applyClientIP(hcm, ip)
	}
	// A policy that failed part-way keeps its client address, path and protocol settings
	// but not its timeouts (EG drops those with the error).
	if l.Policies.ClientTrafficError == "" {
		if d := s.RequestReceivedTimeout; d != nil {
			hcm.RequestTimeout = durationpb.New(*d)
		}
		if d := s.RequestHeadersReceivedTimeout; d != nil {
			hcm.RequestHeadersTimeout = durationpb.New(*d)
		}
		if d := s.IdleTimeout; d != nil {
			hcm.CommonHttpProtocolOptions.IdleTimeout = durationpb.New(*d)
		}
		if d := s.StreamIdleTimeout; d != nil {
			hcm.StreamIdleTimeout = durationpb.New(*d)
		}
	}
	if s.MergeSlashes != nil {
		hcm.MergeSlashes = *s.MergeSlashes
	}
	switch s.EscapedSlashesAction {
	case ir.EscapedSlashesKeepUnchanged:
		hcm.PathWithEscapedSlashesAction = hcmv3.HttpConnectionManager_KEEP_UNCHANGED
	case ir.EscapedSlashesRejectRequest:
		hcm.PathWithEscapedSlashesAction = hcmv3.HttpConnectionManager_REJECT_REQUEST
	case ir.EscapedSlashesUnescapeAndForward:
		hcm.PathWithEscapedSlashesAction = hcmv3.HttpConnectionManager_UNESCAPE_AND_FORWARD
	case ir.EscapedSlashesUnescapeAndRedirect:
		hcm.PathWithEscapedSlashesAction = hcmv3.HttpConnectionManager_UNESCAPE_AND_REDIRECT
	}
}

// applyClientIP: a custom header or X-Forwarded-For becomes an original IP detection
// extension and Envoy stops using the connection's address; directSourceIP keeps the
// downstream TCP source address (CTP-04). EG lowers numTrustedHops by one for the XFF
// extension, which counts the last hop itself.
func applyClientIP(hcm *hcmv3.HttpConnectionManager, ip *ir.ClientIPDetection) {
	var ext *corev3.TypedExtensionConfig
	switch {
	case ip.CustomHeader != nil:
		cfg := &customheaderv3.CustomHeaderConfig{HeaderName: ip.CustomHeader.Name, AllowExtensionToSetAddressAsTrusted: true}
		if ip.CustomHeader.FailClosed {
			cfg.RejectWithStatus = &typev3.HttpStatus{Code: typev3.StatusCode_Forbidden}
		}
		ext = &corev3.TypedExtensionConfig{Name: customHeaderExtension, TypedConfig: mustAny(cfg)}
	case ip.XForwardedFor != nil:
		x := ip.XForwardedFor
		cfg := &xffv3.XffConfig{SkipXffAppend: wrapperspb.Bool(x.SkipAppend)}
		switch {
		case x.TrustedCIDRs != nil:
			var cidrs []*corev3.CidrRange
			for _, c := range x.TrustedCIDRs {
				addr, nw, err := net.ParseCIDR(c)
				if err != nil {
					continue
				}
				n, _ := nw.Mask.Size()
				cidrs = append(cidrs, &corev3.CidrRange{AddressPrefix: addr.String(), PrefixLen: wrapperspb.UInt32(uint32(n))})
			}
			cfg.XffTrustedCidrs = &xffv3.XffTrustedCidrs{Cidrs: cidrs}
		case x.NumTrustedHops != nil:
			if *x.NumTrustedHops > 0 {
				cfg.XffNumTrustedHops = *x.NumTrustedHops - 1
			}
		}
		ext = &corev3.TypedExtensionConfig{Name: xffExtension, TypedConfig: mustAny(cfg)}
	}
	if ext != nil {
		hcm.OriginalIpDetectionExtensions = []*corev3.TypedExtensionConfig{ext}
		hcm.UseRemoteAddress = boolValue(false)
	}
}
