package ir

import (
	"time"

	egv1a1 "github.com/envoyproxy/gateway/api/v1alpha1"
)

// Fault is a BackendTrafficPolicy's faultInjection on a route. Neither Delay nor Abort set
// (a delay that does not parse drops the whole fault injection, as in EG) leaves the
// fault filter on the listener with nothing for the route.
type Fault struct {
	Delay *FaultDelay `json:"delay,omitempty"`
	Abort *FaultAbort `json:"abort,omitempty"`
}

// FaultDelay delays Percentage of requests (nil: Envoy's default) by Fixed.
type FaultDelay struct {
	Percentage *float32       `json:"percentage,omitempty"`
	Fixed      *time.Duration `json:"fixed,omitempty"`
}

// FaultAbort answers Percentage of requests with an HTTP or a gRPC status (the gRPC one
// wins when both are given).
type FaultAbort struct {
	Percentage *float32 `json:"percentage,omitempty"`
	HTTPStatus *uint32  `json:"httpStatus,omitempty"`
	GRPCStatus *uint32  `json:"grpcStatus,omitempty"`
}

// Compressor is one response compressor of a route: its type (one of the Compressor…
// values), whether it is chosen first when a client accepts several, and the minimum
// response length it compresses (nil: Envoy's default).
type Compressor struct {
	Type             string  `json:"type"`
	ChooseFirst      bool    `json:"chooseFirst,omitempty"`
	MinContentLength *uint32 `json:"minContentLength,omitempty"`
}

// The compressor types, as EG spells them.
const (
	CompressorGzip   = string(egv1a1.GzipCompressorType)
	CompressorBrotli = string(egv1a1.BrotliCompressorType)
	CompressorZstd   = string(egv1a1.ZstdCompressorType)
)

// RequestBuffer is a BackendTrafficPolicy's requestBuffer: the request is buffered up to
// MaxRequestBytes. OutOfRange is why the limit cannot be one ("" when it can), which the
// xDS stage reports for the route.
type RequestBuffer struct {
	MaxRequestBytes uint32 `json:"maxRequestBytes"`
	OutOfRange      string `json:"outOfRange,omitempty"`
}
