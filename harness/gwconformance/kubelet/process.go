package kubelet

import (
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/egharness/egharness/harness/envoytier/subprocess"
)

// echoPorts are the ports echo-basic takes from its environment, with its defaults, per
// mode (GRPC_ECHO_SERVER, TCP_ECHO_SERVER, or plain HTTP).
var echoPorts = map[string][]struct {
	env  string
	port int
}{
	"http": {{"HTTP_PORT", 3000}, {"H2C_PORT", 3001}, {"HTTPS_PORT", 8443}},
	"grpc": {{"HTTP_PORT", 3000}, {"HTTPS_PORT", 8443}},
	"tcp":  {{"TCP_PORT", 3000}, {"TLS_PORT", 8443}},
	"udp":  {{"UDP_PORT", 8080}},
}

// podProcess is one Pod's running backend and its pod-network forwarders.
type podProcess struct {
	child   *subprocess.Process // nil for a stand-in served in the harness (CoreDNS)
	out     *capped
	closers []io.Closer // the pod-network listeners
	once    sync.Once
	ports   map[int]int // container port → the process's own port
}

func (p *podProcess) logs() []byte { return p.out.bytes() }

func (p *podProcess) stop() {
	p.once.Do(func() {
		for _, l := range p.closers {
			_ = l.Close()
		}
		if p.child != nil {
			_ = p.child.Stop(3 * time.Second)
		}
	})
}

// startProcess runs the Pod's first container as the backend binary with the container's
// environment (field references resolved, volume paths moved under the Pod's directory)
// and ports of its own, and forwards podIP:port for each port the mode serves.
func (k *Kubelet) startProcess(pod *corev1.Pod, ip string) (*podProcess, error) {
	if len(pod.Spec.Containers) == 0 {
		return nil, errors.New("no container")
	}
	dir, mounts, err := k.podDir(pod)
	if err != nil {
		return nil, err
	}
	c := pod.Spec.Containers[0]
	env := map[string]string{}
	for _, e := range c.Env {
		v := e.Value
		if e.ValueFrom != nil && e.ValueFrom.FieldRef != nil {
			switch e.ValueFrom.FieldRef.FieldPath {
			case "metadata.name":
				v = pod.Name
			case "metadata.namespace":
				v = pod.Namespace
			case "status.podIP":
				v = ip
			case "spec.nodeName":
				v = NodeName
			}
		}
		for mount, vdir := range mounts {
			if v == mount || strings.HasPrefix(v, mount+"/") {
				v = vdir + strings.TrimPrefix(v, mount)
			}
		}
		env[e.Name] = v
	}
	mode := "http"
	switch {
	case env["GRPC_ECHO_SERVER"] != "":
		mode = "grpc"
	case env["TCP_ECHO_SERVER"] != "":
		mode = "tcp"
	case env["UDP_ECHO_SERVER"] != "":
		mode = "udp"
	}
	p := &podProcess{out: &capped{max: 4 << 20}, ports: map[int]int{}}
	for _, ep := range echoPorts[mode] {
		containerPort := ep.port
		if v, ok := env[ep.env]; ok {
			if n, err := strconv.Atoi(v); err == nil {
				containerPort = n
			}
		}
		own, err := freePort(mode == "udp")
		if err != nil {
			return nil, err
		}
		env[ep.env] = strconv.Itoa(own)
		p.ports[containerPort] = own
	}
	cmd := exec.Command(k.opts.Backend)
	cmd.Dir = dir
	cmd.Env = []string{"PATH=" + os.Getenv("PATH")}
	for key, v := range env {
		cmd.Env = append(cmd.Env, key+"="+v)
	}
	cmd.Stdout, cmd.Stderr = p.out, p.out
	if p.child, err = subprocess.Start(cmd); err != nil {
		return nil, err
	}
	if mode == "udp" {
		if err := forwardPorts(p, ip, "udp", net.ListenPacket, forwardUDP); err != nil {
			p.stop()
			return nil, err
		}
		// A UDP server cannot be probed by connecting: give it the moment it takes to bind.
		select {
		case <-p.child.Exited:
			return nil, fmt.Errorf("%s exited at start:\n%s", k.opts.Backend, p.out.bytes())
		case <-time.After(200 * time.Millisecond):
			return p, nil
		}
	}
	if err := forwardPorts(p, ip, "tcp", net.Listen, forward); err != nil {
		p.stop()
		return nil, err
	}
	// Ready once the first port answers.
	first := p.ports[echoPorts[mode][0].port]
	if v, ok := env[echoPorts[mode][0].env]; ok {
		first, _ = strconv.Atoi(v)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		c, err := net.DialTimeout("tcp", "127.0.0.1:"+strconv.Itoa(first), time.Second)
		if err == nil {
			_ = c.Close()
			return p, nil
		}
		select {
		case <-p.child.Exited:
			return nil, fmt.Errorf("%s exited at start:\n%s", k.opts.Backend, p.out.bytes())
		case <-time.After(20 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			p.stop()
			return nil, fmt.Errorf("%s did not listen on %d within 10s:\n%s", k.opts.Backend, first, p.out.bytes())
		}
	}
}

// forwardPorts opens the pod network's ip:port on network (tcp with net.Listen, udp with
// net.ListenPacket) for each of p's container ports, and has serve relay it to the
// process's own port.
func forwardPorts[Listener io.Closer](p *podProcess, ip, network string,
	listen func(network, address string) (Listener, error), serve func(Listener, string)) error {
	portSuffix := "" // errors name UDP ports only
	if network == "udp" {
		portSuffix = "/udp"
	}
	for containerPort, own := range p.ports {
		l, err := listen(network, net.JoinHostPort(ip, strconv.Itoa(containerPort)))
		if err != nil {
			return fmt.Errorf("pod network %s:%d%s: %w", ip, containerPort, portSuffix, err)
		}
		p.closers = append(p.closers, l)
		go serve(l, "127.0.0.1:"+strconv.Itoa(own))
	}
	return nil
}

func freePort(udp bool) (int, error) {
	if udp {
		pc, err := net.ListenPacket("udp", "127.0.0.1:0")
		if err != nil {
			return 0, err
		}
		defer pc.Close()
		return pc.LocalAddr().(*net.UDPAddr).Port, nil
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// forwardUDP relays datagrams from each client on pc to the backend at to and the
// backend's answers back, one backend socket per client address.
func forwardUDP(pc net.PacketConn, to string) {
	var mu sync.Mutex
	sessions := map[string]net.Conn{}
	buf := make([]byte, 64<<10)
	for {
		n, from, err := pc.ReadFrom(buf)
		if err != nil {
			mu.Lock()
			for _, c := range sessions {
				_ = c.Close()
			}
			mu.Unlock()
			return
		}
		mu.Lock()
		c, ok := sessions[from.String()]
		if !ok {
			if c, err = net.Dial("udp", to); err != nil {
				mu.Unlock()
				continue
			}
			sessions[from.String()] = c
			go func(c net.Conn, from net.Addr) {
				b := make([]byte, 64<<10)
				for {
					_ = c.SetReadDeadline(time.Now().Add(time.Minute))
					n, err := c.Read(b)
					if err != nil {
						mu.Lock()
						delete(sessions, from.String())
						mu.Unlock()
						_ = c.Close()
						return
					}
					_, _ = pc.WriteTo(b[:n], from)
				}
			}(c, from)
		}
		mu.Unlock()
		_, _ = c.Write(buf[:n])
	}
}

// forward copies every connection accepted on l to and from to.
func forward(l net.Listener, to string) {
	for {
		c, err := l.Accept()
		if err != nil {
			return
		}
		go relay(c, to)
	}
}

// capped keeps the first max bytes written (a backend's log).
type capped struct {
	mu  sync.Mutex
	b   []byte
	max int
}

func (c *capped) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if room := c.max - len(c.b); room > 0 {
		c.b = append(c.b, p[:min(len(p), room)]...)
	}
	return len(p), nil
}

func (c *capped) bytes() []byte {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]byte(nil), c.b...)
}

func copyConn(dst, src net.Conn) { _, _ = io.Copy(dst, src) }
