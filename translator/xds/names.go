package xds

import (
	"fmt"
	"strings"

	"github.com/egharness/egharness/translator/ir"
)

// Naming is the xDS name scheme (NAME-01, NAME-02). The default names come from the first
// Gateway listener on a port; scheme V2 (runtime flag XDSNameSchemeV2) names by port.
type Naming struct {
	V2 bool
}

// byPort is the name of a listener's resource: <protocol>-<gateway port> under scheme V2
// (the port written on the Gateway, 80, not the port Envoy binds, 10080), else the
// listener's own name.
func (n Naming) byPort(protocol string, gatewayPort uint32, listenerName string) string {
	if n.V2 {
		return fmt.Sprintf("%s-%d", protocol, gatewayPort)
	}
	return listenerName
}

// Listener names the Envoy listener that serves l's port.
func (n Naming) Listener(l *ir.HTTPListener) string {
	return n.byPort("tcp", l.GatewayPort, l.Name)
}

// RouteConfig names the HTTP route configuration of l's port; it is also the name of the
// port's default filter chain.
func (n Naming) RouteConfig(l *ir.HTTPListener) string {
	return n.byPort("http", l.GatewayPort, l.Name)
}

// StatPrefix is the HTTP connection manager's stat prefix: http-<port> or https-<port>.
func (n Naming) StatPrefix(l *ir.HTTPListener) string {
	proto, port := "http", l.Port
	if l.TLS != nil {
		proto = "https"
	}
	if n.V2 {
		port = l.GatewayPort
	}
	return fmt.Sprintf("%s-%d", proto, port)
}

// TCPListener names a TCP or TLS Envoy listener (scheme V2: tcp-<port>).
func (n Naming) TCPListener(l *ir.TCPListener) string {
	return n.byPort("tcp", l.GatewayPort, l.Name)
}

// UDPListener names a UDP Envoy listener (scheme V2: udp-<port>).
func (n Naming) UDPListener(l *ir.UDPListener) string {
	return n.byPort("udp", l.GatewayPort, l.Name)
}

// TLSRouteConfig names an HTTPS listener's route configuration: HTTPS listeners keep
// their own, named after the Gateway listener, under both schemes.
func (n Naming) TLSRouteConfig(l *ir.HTTPListener) string { return l.Name }

// VirtualHost names the virtual host of hostname on listener l.
func (n Naming) VirtualHost(l *ir.HTTPListener, hostname string) string {
	h := strings.ReplaceAll(hostname, ".", "_")
	if n.V2 {
		return h
	}
	return l.Name + "/" + h
}

// invalidBackendCluster is the cluster name EG gives the share of weight whose backends
// could not be resolved; no such cluster exists, so Envoy answers 500 for it.
const invalidBackendCluster = "invalid-backend-cluster"
