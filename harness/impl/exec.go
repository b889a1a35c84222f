package impl

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"time"

	egv1a1 "github.com/envoyproxy/gateway/api/v1alpha1"
	"sigs.k8s.io/yaml"

	"github.com/egharness/egharness/translator/result"
)

// Exec runs an external implementation once per translation. The protocol:
//   - stdin: the scenario's objects as multi-document YAML, preceded by an EnvoyGateway
//     document when the scenario sets extensionApis or runtimeFlags;
//   - environment: EGHARNESS_PROFILE (v1.8, v1.9, v1.10-preview) and EGHARNESS_SCENARIO;
//   - stdout: one JSON object in the `egharness translate -o json` shape;
//   - exit status 0; anything else is that scenario's failure, with the end of stderr.
//
// The command runs through `sh -c`, so it may carry arguments and environment settings.
type Exec struct {
	Command string
	Timeout time.Duration // per translation; 0 means one minute
}

// Name implements Implementation.
func (e Exec) Name() string { return "exec:" + e.Command }

// Golden implements Implementation: byte-exact goldens belong to the reference only.
func (Exec) Golden() bool { return false }

// Translate implements Implementation.
func (e Exec) Translate(ctx context.Context, req Request) (*result.Result, error) {
	in, err := Input(req)
	if err != nil {
		return nil, err
	}
	timeout := e.Timeout
	if timeout <= 0 {
		timeout = time.Minute
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "sh", "-c", e.Command)
	// On timeout the whole process group goes, so a child that keeps the pipes open cannot
	// hold the run.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = time.Second
	cmd.Stdin = bytes.NewReader(in)
	cmd.Env = append(os.Environ(), "EGHARNESS_PROFILE="+req.Profile.Name, "EGHARNESS_SCENARIO="+req.Scenario)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err = cmd.Run()
	switch {
	case errors.Is(ctx.Err(), context.DeadlineExceeded):
		return nil, fmt.Errorf("%s: no answer within %s", e.Name(), timeout)
	case err != nil:
		return nil, fmt.Errorf("%s: %v%s", e.Name(), err, tail(stderr.String()))
	}
	var res result.Result
	dec := json.NewDecoder(&stdout)
	dec.DisallowUnknownFields()
	if err := dec.Decode(&res); err != nil {
		return nil, fmt.Errorf("%s: its output is not the translate -o json shape: %v", e.Name(), err)
	}
	res.Normalize()
	return &res, nil
}

// Input renders a request as the YAML an external implementation reads.
func Input(req Request) ([]byte, error) {
	var docs []string
	if req.Config.ExtensionAPIs != nil || req.Config.RuntimeFlags != nil {
		eg := egv1a1.EnvoyGateway{EnvoyGatewaySpec: egv1a1.EnvoyGatewaySpec{
			ExtensionAPIs: req.Config.ExtensionAPIs,
			RuntimeFlags:  req.Config.RuntimeFlags,
		}}
		eg.APIVersion, eg.Kind = egv1a1.GroupVersion.String(), egv1a1.KindEnvoyGateway
		b, err := yaml.Marshal(eg)
		if err != nil {
			return nil, err
		}
		docs = append(docs, string(b))
	}
	for _, o := range req.Objects {
		b, err := yaml.Marshal(o.Obj)
		if err != nil {
			return nil, fmt.Errorf("%s: %v", o.Ref(), err)
		}
		docs = append(docs, string(b))
	}
	return []byte(strings.Join(docs, "---\n")), nil
}

// tail is the end of a command's stderr, for an error message.
func tail(s string) string {
	s = strings.TrimSpace(s)
	if s == "" {
		return ""
	}
	if len(s) > 2000 {
		s = "…" + s[len(s)-2000:]
	}
	return "\n" + s
}
