package kubelet

import (
	"fmt"
	"io"
	"net"
	"os"
	"regexp"
	"strings"

	"github.com/miekg/dns"
	corev1 "k8s.io/api/core/v1"
)

// The suite's manifests run one image besides echo-basic: CoreDNS, behind the UDPRoute
// tests, with a Corefile (a ConfigMap volume) that answers zones with its whoami plugin and
// forwards the rest to public resolvers. The stand-in answers the whoami zones as whoami
// does (the client's address as an A record) and refuses the rest: nothing is forwarded off
// the machine.

func runsCoreDNS(p *corev1.Pod) bool {
	return len(p.Spec.Containers) > 0 && strings.Contains(p.Spec.Containers[0].Image, "/coredns")
}

// whoamiZone is a Corefile server block that names the whoami plugin: "zone:port {...whoami...}".
var whoamiZone = regexp.MustCompile(`(?s)([A-Za-z0-9.\-]+):53\s*\{[^}]*\bwhoami\b[^}]*\}`)

// startCoreDNS serves DNS on ip:53 (UDP and TCP) for the Pod, from the Corefile its
// -conf argument names inside its volumes.
func (k *Kubelet) startCoreDNS(pod *corev1.Pod, ip string) (*podProcess, error) {
	_, mounts, err := k.podDir(pod)
	if err != nil {
		return nil, err
	}
	conf := "/etc/coredns/Corefile"
	args := pod.Spec.Containers[0].Args
	for i := 0; i+1 < len(args); i++ {
		if args[i] == "-conf" {
			conf = args[i+1]
		}
	}
	for mount, vdir := range mounts {
		if strings.HasPrefix(conf, mount+"/") {
			conf = vdir + strings.TrimPrefix(conf, mount)
		}
	}
	corefile, err := os.ReadFile(conf)
	if err != nil {
		return nil, fmt.Errorf("CoreDNS stand-in: %w", err)
	}
	var zones []string
	for _, m := range whoamiZone.FindAllStringSubmatch(string(corefile), -1) {
		zones = append(zones, dns.Fqdn(m[1]))
	}
	p := &podProcess{out: &capped{max: 1 << 20}}
	handler := dns.HandlerFunc(func(w dns.ResponseWriter, r *dns.Msg) {
		m := new(dns.Msg)
		m.SetReply(r)
		if len(r.Question) == 0 || !inZones(r.Question[0].Name, zones) {
			m.Rcode = dns.RcodeRefused
			_ = w.WriteMsg(m)
			return
		}
		q := r.Question[0]
		host, _, _ := net.SplitHostPort(w.RemoteAddr().String())
		if a := net.ParseIP(host).To4(); a != nil {
			m.Extra = append(m.Extra, &dns.A{Hdr: dns.RR_Header{Name: q.Name, Rrtype: dns.TypeA, Class: dns.ClassINET}, A: a})
		}
		fmt.Fprintf(p.out, "[INFO] %s - %q %s\n", w.RemoteAddr(), q.Name, dns.TypeToString[q.Qtype])
		_ = w.WriteMsg(m)
	})
	pc, err := net.ListenPacket("udp", net.JoinHostPort(ip, "53"))
	if err != nil {
		return nil, fmt.Errorf("CoreDNS stand-in on %s:53/udp: %w", ip, err)
	}
	l, err := net.Listen("tcp", net.JoinHostPort(ip, "53"))
	if err != nil {
		_ = pc.Close()
		return nil, fmt.Errorf("CoreDNS stand-in on %s:53/tcp: %w", ip, err)
	}
	udp, tcp := &dns.Server{PacketConn: pc, Handler: handler}, &dns.Server{Listener: l, Handler: handler}
	go func() { _ = udp.ActivateAndServe() }()
	go func() { _ = tcp.ActivateAndServe() }()
	p.closers = []io.Closer{shutdown{udp}, shutdown{tcp}}
	return p, nil
}

func inZones(name string, zones []string) bool {
	for _, z := range zones {
		if dns.IsSubDomain(z, dns.Fqdn(name)) {
			return true
		}
	}
	return false
}

type shutdown struct{ s *dns.Server }

func (s shutdown) Close() error { return s.s.Shutdown() }
