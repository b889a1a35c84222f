package gwconformance

import (
	"context"
	"strings"

	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	listenerv3 "github.com/envoyproxy/go-control-plane/envoy/config/listener/v3"
	"google.golang.org/protobuf/proto"

	"github.com/egharness/egharness/harness/envoytier"
	"github.com/egharness/egharness/translator/result"
)

// EnvoyPlane is real Envoy as the data plane: each Gateway's listeners bind the Gateway's
// own address on the port its spec names, so the suite's stock HTTP, TLS and gRPC helpers
// dial status.addresses[0]:port and reach them unchanged. In a cluster the proxy's Service
// maps the spec port to the container port EG shifts privileged ports to (80 → 10080);
// here the listener binds the spec port itself, so the run needs the privilege to bind
// ports below 1024 (root, or CAP_NET_BIND_SERVICE).
type EnvoyPlane struct {
	Envoy *envoytier.Bare
}

// Apply implements DataPlane.
func (p *EnvoyPlane) Apply(ctx context.Context, x *result.XDS, gateways map[string]GatewayAddress) error {
	return p.Envoy.Serve(ctx, bindGateways(x, gateways))
}

// bindGateways returns x with every Gateway listener on its Gateway's address and spec
// port. Listeners of no Gateway (EG's readiness listener on 0.0.0.0:19003, which every
// proxy has) are left out: one Envoy stands for all the proxies here, and the suite never
// reaches them.
func bindGateways(x *result.XDS, gateways map[string]GatewayAddress) *result.XDS {
	out := *x
	out.Listeners = nil
	for _, l := range x.Listeners {
		gw := gatewayOfListener(l.GetName())
		addr, ok := gateways[gw]
		if !ok || addr.IP == "" {
			continue
		}
		c := proto.Clone(l).(*listenerv3.Listener)
		rebind(c.GetAddress(), addr)
		for _, a := range c.GetAdditionalAddresses() {
			rebind(a.GetAddress(), addr)
		}
		out.Listeners = append(out.Listeners, c)
	}
	return &out
}

// gatewayOfListener is NAMESPACE/NAME of the Gateway an EG listener belongs to: its name
// is NAMESPACE/GATEWAY/LISTENER (the first listener on a port names the Envoy listener).
func gatewayOfListener(name string) string {
	parts := strings.SplitN(name, "/", 3)
	if len(parts) < 3 {
		return ""
	}
	return parts[0] + "/" + parts[1]
}

func rebind(a *corev3.Address, addr GatewayAddress) {
	sa := a.GetSocketAddress()
	if sa == nil {
		return
	}
	sa.Address = addr.IP
	if spec, ok := addr.Ports[sa.GetPortValue()]; ok {
		sa.PortSpecifier = &corev3.SocketAddress_PortValue{PortValue: spec}
	}
}
