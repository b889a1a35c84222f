package live

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"sigs.k8s.io/kind/pkg/cluster"
	"sigs.k8s.io/kind/pkg/cluster/nodes"
	"sigs.k8s.io/kind/pkg/cluster/nodeutils"
)

// Runtime finds the container runtime kind would use and checks that its engine answers:
// kind's own detection only looks for a client binary, and a docker client without a daemon
// would fail much later, halfway through creating a cluster. The error is one line that
// says what is missing.
func Runtime() (cluster.ProviderOption, string, error) {
	opt, err := cluster.DetectNodeProvider()
	if err != nil {
		return nil, "", errors.New("no container runtime: none of docker, podman or nerdctl is installed")
	}
	name := "docker"
	for _, n := range []string{"docker", "nerdctl", "podman"} {
		if _, err := exec.LookPath(n); err == nil {
			name = n
			break
		}
	}
	out, err := exec.Command(name, "info", "--format", "{{.ServerVersion}}").CombinedOutput()
	if err != nil || strings.TrimSpace(string(out)) == "" || strings.Contains(string(out), "Cannot connect") {
		return nil, name,
			fmt.Errorf("no container runtime: the %s client is installed but no engine answers (%s)", name, lastLine(out, err))
	}
	return opt, name, nil
}

func lastLine(out []byte, err error) string {
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if l := strings.TrimSpace(lines[len(lines)-1]); l != "" {
		return l
	}
	if err != nil {
		return err.Error()
	}
	return "empty answer"
}

// Kind is a kind cluster the suite created (or found).
type Kind struct {
	Provider *cluster.Provider
	Name     string
	// Runtime is the container runtime's command (docker, podman, nerdctl).
	Runtime string
}

// CreateKind creates a one-node cluster and waits until it is ready. An existing cluster of
// that name is reused, so an interrupted run can be resumed with --keep-cluster.
func CreateKind(name, runtime string, opt cluster.ProviderOption, nodeImage string, wait time.Duration) (*Kind, error) {
	p := cluster.NewProvider(opt)
	k := &Kind{Provider: p, Name: name, Runtime: runtime}
	existing, err := p.List()
	if err != nil {
		return nil, err
	}
	for _, c := range existing {
		if c == name {
			return k, nil
		}
	}
	opts := []cluster.CreateOption{cluster.CreateWithWaitForReady(wait), cluster.CreateWithDisplayUsage(false),
		cluster.CreateWithDisplaySalutation(false)}
	if nodeImage != "" {
		opts = append(opts, cluster.CreateWithNodeImage(nodeImage))
	}
	if err := p.Create(name, opts...); err != nil {
		return nil, fmt.Errorf("creating kind cluster %s: %w", name, err)
	}
	return k, nil
}

// Delete removes the cluster.
func (k *Kind) Delete() error { return k.Provider.Delete(k.Name, "") }

// Node is the cluster's control-plane node (the only one).
func (k *Kind) Node() (nodes.Node, error) {
	ns, err := k.Provider.ListInternalNodes(k.Name)
	if err != nil {
		return nil, err
	}
	if len(ns) == 0 {
		return nil, fmt.Errorf("kind cluster %s has no nodes", k.Name)
	}
	return ns[0], nil
}

// LoadImage puts a local image (pulled first when missing) into every node, as `kind load
// docker-image` does, so pods never pull it.
func (k *Kind) LoadImage(image string) error {
	if err := exec.Command(k.Runtime, "image", "inspect", image).Run(); err != nil {
		if out, err := exec.Command(k.Runtime, "pull", image).CombinedOutput(); err != nil {
			return fmt.Errorf("pulling %s: %s", image, lastLine(out, err))
		}
	}
	ns, err := k.Provider.ListInternalNodes(k.Name)
	if err != nil {
		return err
	}
	for _, n := range ns {
		save := exec.Command(k.Runtime, "save", image)
		archive, err := save.StdoutPipe()
		if err != nil {
			return err
		}
		var stderr bytes.Buffer
		save.Stderr = &stderr
		if err := save.Start(); err != nil {
			return err
		}
		loadErr := nodeutils.LoadImageArchive(n, archive)
		if err := save.Wait(); err != nil {
			return fmt.Errorf("saving %s: %s", image, lastLine(stderr.Bytes(), err))
		}
		if loadErr != nil {
			return fmt.Errorf("loading %s into %s: %w", image, n.String(), loadErr)
		}
	}
	return nil
}

// Kubectl runs kubectl on the control-plane node (kind's node image carries it) with the
// cluster's admin credentials, so the suite needs no kubectl or client libraries of its own.
func (k *Kind) Kubectl(stdin []byte, args ...string) ([]byte, error) {
	n, err := k.Node()
	if err != nil {
		return nil, err
	}
	var out, errOut bytes.Buffer
	cmd := n.Command("kubectl", append([]string{"--kubeconfig=/etc/kubernetes/admin.conf"}, args...)...).SetStdout(
		&out).SetStderr(&errOut)
	if stdin != nil {
		cmd.SetStdin(bytes.NewReader(stdin))
	}
	if err := cmd.Run(); err != nil {
		return out.Bytes(), fmt.Errorf("kubectl %s: %s", strings.Join(args, " "), lastLine(errOut.Bytes(), err))
	}
	return out.Bytes(), nil
}

// NodeIP is the node's address on the runtime's network: Envoy's listeners are there.
func (k *Kind) NodeIP() (string, error) {
	n, err := k.Node()
	if err != nil {
		return "", err
	}
	v4, _, err := n.IP()
	return v4, err
}

// HostIP is the address the node reaches the machine running the suite at (the runtime
// network's gateway), where the harness's xDS server listens.
func (k *Kind) HostIP() (string, error) {
	n, err := k.Node()
	if err != nil {
		return "", err
	}
	var out bytes.Buffer
	if err := n.Command("ip", "-4", "route", "show", "default").SetStdout(&out).Run(); err != nil {
		return "", err
	}
	return DefaultGateway(out.String())
}

// DefaultGateway reads the gateway from `ip route show default` ("default via 172.18.0.1
// dev eth0 ...").
func DefaultGateway(routes string) (string, error) {
	for _, line := range strings.Split(routes, "\n") {
		f := strings.Fields(line)
		for i := 0; i+1 < len(f); i++ {
			if f[0] == "default" && f[i] == "via" {
				return f[i+1], nil
			}
		}
	}
	return "", fmt.Errorf("no default route in %q", strings.TrimSpace(routes))
}

// Dump writes what a failure needs to be understood into dir: the cluster's objects, Envoy's
// logs and config dump (its admin listener on the node's loopback), and kind's own logs.
func (k *Kind) Dump(dir string, adminPort uint32) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	var errs []error
	write := func(name string, data []byte, err error) {
		if err != nil {
			data = append(data, []byte("\n# error: "+err.Error()+"\n")...)
			errs = append(errs, err)
		}
		if werr := os.WriteFile(filepath.Join(dir, name), data, 0o644); werr != nil {
			errs = append(errs, werr)
		}
	}
	out, err := k.Kubectl(nil, "get", "all,configmaps,events", "-A", "-o", "wide")
	write("objects.txt", out, err)
	out, err = k.Kubectl(nil, "logs", "-n", Namespace, "deploy/envoy", "--tail=2000")
	write("envoy.log", out, err)
	if n, nerr := k.Node(); nerr == nil {
		var buf bytes.Buffer
		err := n.Command("curl", "-s", fmt.Sprintf("http://127.0.0.1:%d/config_dump", adminPort)).SetStdout(&buf).Run()
		write("envoy-config-dump.json", buf.Bytes(), err)
	}
	if err := k.Provider.CollectLogs(k.Name, filepath.Join(dir, "kind-logs")); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}
