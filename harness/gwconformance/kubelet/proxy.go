package kubelet

import (
	"fmt"
	"math/rand/v2"
	"net"
	"strconv"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
)

// The kube-proxy stand-in: when the run hands out Service addresses on loopback
// (Options.ServiceIP), each Service port listens on ClusterIP:port and forwards every
// connection to one of the Service's Ready Pods, as kube-proxy's rules do. EG routes to
// EndpointSlices and never needs it; an implementation that routes to cluster IPs (egctl
// x translate does) reaches its backends through it.

// serviceProxy is one ClusterIP:port listener and the endpoints it picks from.
type serviceProxy struct {
	l         net.Listener
	mu        sync.Mutex
	endpoints []string // podIP:targetPort of Ready Pods
}

func (p *serviceProxy) pick() (string, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.endpoints) == 0 {
		return "", false
	}
	return p.endpoints[rand.IntN(len(p.endpoints))], true
}

func (p *serviceProxy) serve() {
	for {
		c, err := p.l.Accept()
		if err != nil {
			return
		}
		to, ok := p.pick()
		if !ok {
			_ = c.Close() // no Ready endpoint: refused, as kube-proxy rejects it
			continue
		}
		go relay(c, to)
	}
}

// syncProxy keeps the Service's listeners and endpoints current.
func (k *Kubelet) syncProxy(svc *corev1.Service, pods []*corev1.Pod) {
	if k.opts.ServiceIP == nil || svc.Spec.ClusterIP == "" || svc.Spec.ClusterIP == corev1.ClusterIPNone {
		return
	}
	sel := labels.SelectorFromSet(svc.Spec.Selector)
	for _, sp := range svc.Spec.Ports {
		if sp.Protocol != "" && sp.Protocol != corev1.ProtocolTCP {
			continue
		}
		var members []*corev1.Pod
		for _, p := range pods {
			if p.Namespace == svc.Namespace && svc.Spec.Selector != nil && sel.Matches(labels.Set(p.Labels)) && podReady(p) &&
				p.Status.PodIP != "" {
				members = append(members, p)
			}
		}
		target, ok := targetPort(sp, members)
		var eps []string
		if ok {
			for _, p := range members {
				eps = append(eps, net.JoinHostPort(p.Status.PodIP, strconv.Itoa(int(target))))
			}
		}
		key := fmt.Sprintf("%s:%d", svc.Spec.ClusterIP, sp.Port)
		k.mu.Lock()
		px := k.proxies[key]
		k.mu.Unlock()
		if px == nil {
			l, err := net.Listen("tcp", key)
			if err != nil {
				k.failOnce(kubeKeyOfService(svc), fmt.Errorf("Service address %s: %w", key, err))
				continue
			}
			px = &serviceProxy{l: l}
			k.mu.Lock()
			k.proxies[key] = px
			k.mu.Unlock()
			go px.serve()
		}
		px.mu.Lock()
		px.endpoints = eps
		px.mu.Unlock()
	}
}

func (k *Kubelet) stopProxies() {
	k.mu.Lock()
	defer k.mu.Unlock()
	for key, px := range k.proxies {
		_ = px.l.Close()
		delete(k.proxies, key)
	}
}

// relay copies a connection to and from to. Either side ending ends both: what crosses
// here is request/response traffic, which never relies on a half-closed connection.
func relay(c net.Conn, to string) {
	u, err := net.DialTimeout("tcp", to, 5*time.Second)
	if err != nil {
		_ = c.Close()
		return
	}
	var once sync.Once
	done := func() { once.Do(func() { _ = c.Close(); _ = u.Close() }) }
	go func() { copyConn(u, c); done() }()
	copyConn(c, u)
	done()
}
