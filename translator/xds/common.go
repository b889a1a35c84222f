package xds

import (
	"time"

	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/anypb"
	"google.golang.org/protobuf/types/known/durationpb"
	"google.golang.org/protobuf/types/known/wrapperspb"

	"github.com/egharness/egharness/translator/ir"
)

func boolValue(v bool) *wrapperspb.BoolValue { return wrapperspb.Bool(v) }

func u32(v uint32) *wrapperspb.UInt32Value { return wrapperspb.UInt32(v) }

// durationOrNil is d as a protobuf duration, nil (the field left out) when d is.
func durationOrNil(d *time.Duration) *durationpb.Duration {
	if d == nil {
		return nil
	}
	return durationpb.New(*d)
}

// mustAny wraps a message the stage built itself; marshalling one can only fail on a
// programming error, which tests catch. The payload is marshalled deterministically (maps
// in key order), so equal xDS has equal wire bytes and serve can digest it cheaply.
func mustAny(m proto.Message) *anypb.Any {
	a := &anypb.Any{}
	if err := anypb.MarshalFrom(a, m, proto.MarshalOptions{Deterministic: true}); err != nil {
		panic(err)
	}
	return a
}

func socketAddress(host string, port uint32) *corev3.Address {
	return &corev3.Address{Address: &corev3.Address_SocketAddress{SocketAddress: &corev3.SocketAddress{
		Address:       host,
		PortSpecifier: &corev3.SocketAddress_PortValue{PortValue: port},
	}}}
}

// listenAddress is a listener's address; ipv4Compat lets a :: listener take IPv4 too
// (EnvoyProxy ipFamily DualStack).
func listenAddress(host string, port uint32, ipv4Compat bool) *corev3.Address {
	a := socketAddress(host, port)
	a.GetSocketAddress().Ipv4Compat = ipv4Compat
	return a
}

// endpointAddress is an endpoint's address: a unix socket's path as a pipe, else host and
// port.
func endpointAddress(e ir.Endpoint) *corev3.Address {
	if e.Path != "" {
		return &corev3.Address{Address: &corev3.Address_Pipe{Pipe: &corev3.Pipe{Path: e.Path}}}
	}
	return socketAddress(e.Host, e.Port)
}
