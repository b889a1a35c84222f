package envoytier

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/egharness/egharness/harness/envoytier/subprocess"
	"github.com/egharness/egharness/harness/live"
)

// process is one running Envoy: its admin address and its log.
type process struct {
	child *subprocess.Process
	admin string // host:port of the admin listener
	log   *tailBuffer
}

// startEnvoy runs Envoy with a bootstrap that takes everything over ADS from xdsAddr. Hot
// restart is off (no shared memory, so Envoys of concurrent runs cannot clash), one worker
// thread (the machine is small and requests come one at a time), and listeners that a new
// snapshot removes are closed at once instead of draining for minutes.
func startEnvoy(ctx context.Context, binary, dir, xdsAddr, nodeID string, logw io.Writer) (*process, error) {
	b, err := live.Bootstrap(
		live.BootstrapOptions{XDSAddress: xdsAddr, NodeID: nodeID, NodeCluster: "egharness", AdminPort: 0})
	if err != nil {
		return nil, err
	}
	y, err := live.BootstrapYAML(b)
	if err != nil {
		return nil, err
	}
	bootstrap := filepath.Join(dir, "bootstrap.yaml")
	adminFile := filepath.Join(dir, "admin-address")
	if err := os.WriteFile(bootstrap, y, 0o644); err != nil {
		return nil, err
	}
	// A new Envoy (after one exited) must not read its predecessor's address.
	if err := os.Remove(adminFile); err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, err
	}
	p := &process{log: &tailBuffer{max: 64 << 10}}
	args := []string{"-c", bootstrap,
		"--admin-address-path", adminFile,
		"--disable-hot-restart",
		"--concurrency", "1",
		"--drain-time-s", "0", "--drain-strategy", "immediate",
		"--local-address-ip-version", "v4",
		"--log-level", logLevel(),
		"--service-node", nodeID, "--service-cluster", "egharness"}
	if c := componentLogLevels(); c != "" {
		args = append(args, "--component-log-level", c)
	}
	cmd := exec.Command(binary, args...)
	var out io.Writer = p.log
	if logw != nil {
		out = io.MultiWriter(p.log, logw)
	}
	cmd.Stdout, cmd.Stderr = out, out
	if p.child, err = subprocess.Start(cmd); err != nil {
		return nil, err
	}
	// The admin address file appears once Envoy listens on it.
	deadline := time.Now().Add(30 * time.Second)
	for {
		if a, err := os.ReadFile(adminFile); err == nil && len(bytes.TrimSpace(a)) > 0 {
			p.admin = strings.TrimSpace(string(a))
			return p, nil
		}
		select {
		case <-p.child.Exited:
			return nil, fmt.Errorf("envoy exited at start (%v):\n%s", p.child.Err, p.log.String())
		case <-ctx.Done():
			p.stop()
			return nil, ctx.Err()
		case <-time.After(20 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			p.stop()
			return nil, fmt.Errorf("envoy wrote no admin address within 30s:\n%s", p.log.String())
		}
	}
}

// LogLevelEnvVar sets Envoy's log level (default warn), e.g. debug to find what precedes
// a crash, with $EGHARNESS_ENVOY_LOG keeping the whole log: a level, then optionally
// component levels (warn,jwt:debug,oauth2:debug gives --log-level warn
// --component-log-level jwt:debug,oauth2:debug).
const LogLevelEnvVar = "EGHARNESS_ENVOY_LOG_LEVEL"

func logLevel() string {
	l, _, _ := strings.Cut(os.Getenv(LogLevelEnvVar), ",")
	if l == "" || strings.Contains(l, ":") {
		return "warn"
	}
	return l
}

func componentLogLevels() string {
	var out []string
	for _, p := range strings.Split(os.Getenv(LogLevelEnvVar), ",") {
		if strings.Contains(p, ":") {
			out = append(out, p)
		}
	}
	return strings.Join(out, ",")
}

// stop ends Envoy: SIGTERM, then SIGKILL after 5s.
func (p *process) stop() error {
	if p == nil || p.child == nil {
		return nil
	}
	return p.child.Stop(5 * time.Second)
}

// alive reports an Envoy that exited, with its log's tail.
func (p *process) alive() error {
	select {
	case <-p.child.Exited:
		return fmt.Errorf("envoy exited (%v):\n%s", p.child.Err, p.log.String())
	default:
		return nil
	}
}

var adminClient = &http.Client{Timeout: 5 * time.Second}

// adminGet reads an admin path.
func (p *process) adminGet(ctx context.Context, path string) (string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+p.admin+path, nil)
	if err != nil {
		return "", err
	}
	resp, err := adminClient.Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return "", err
	}
	if resp.StatusCode != http.StatusOK {
		return string(b), fmt.Errorf("admin %s: %s", path, resp.Status)
	}
	return string(b), nil
}

// gauges reads the named stats (text format, "name: value").
func (p *process) gauges(ctx context.Context, names ...string) (map[string]int, error) {
	text, err := p.adminGet(ctx, "/stats?usedonly&filter=^("+strings.Join(names, "|")+")$")
	if err != nil {
		return nil, err
	}
	out := map[string]int{}
	for _, line := range strings.Split(text, "\n") {
		k, v, ok := strings.Cut(line, ": ")
		if !ok {
			continue
		}
		if n, err := strconv.Atoi(strings.TrimSpace(v)); err == nil {
			out[k] = n
		}
	}
	return out, nil
}

// tailBuffer keeps the last max bytes written to it: Envoy's log, for error messages.
type tailBuffer struct {
	mu  sync.Mutex
	max int
	b   []byte
}

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.b = append(t.b, p...)
	if len(t.b) > t.max {
		t.b = append([]byte(nil), t.b[len(t.b)-t.max:]...)
	}
	return len(p), nil
}

func (t *tailBuffer) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return string(t.b)
}
