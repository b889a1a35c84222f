package impl

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"time"

	egv1a1 "github.com/envoyproxy/gateway/api/v1alpha1"
	"sigs.k8s.io/yaml"

	"github.com/egharness/egharness/translator/resource"
	"github.com/egharness/egharness/translator/result"
)

// ExitCannotExpress is the exit status by which an external implementation says it cannot
// express a scenario (a setting it has no way to take); the last line of its stderr is the
// reason, and the scenario is skipped rather than failed.
const ExitCannotExpress = 3

// Exec runs an external implementation once per translation. The protocol:
//   - stdin: the scenario's objects as multi-document YAML, preceded by an EnvoyGateway
//     document when the scenario sets extensionApis or runtimeFlags;
//   - environment: EGHARNESS_PROFILE (v1.8, v1.9, v1.10-preview), EGHARNESS_SCENARIO and
//     EGHARNESS_MERGE_GATEWAYS (true when the scenario merges Gateways, as an EnvoyProxy's
//     spec.mergeGateways does);
//   - stdout: one JSON object in the `egharness translate -o json` shape;
//   - exit status 0; 3 (ExitCannotExpress) skips the scenario with the last line of stderr
//     as the reason; anything else is that scenario's failure, with the end of stderr.
//
// The command runs through `sh -c`, so it may carry arguments and environment settings.
type Exec struct {
	Command string
	Timeout time.Duration // per translation; 0 means one minute
	// Limits bound what is read back: the output may not pass MaxFileSize (--max-file-size).
	Limits resource.Limits
	// Caps is what the command declares it does not produce (--impl-capabilities).
	Caps Capabilities
}

// Capabilities implements Capable: what --impl-capabilities declared (never Golden:
// byte-exact goldens belong to the reference only).
func (e Exec) Capabilities() Capabilities {
	c := e.Caps
	c.Golden = false
	return c
}

// Name implements Implementation.
func (e Exec) Name() string { return "exec:" + e.Command }

// Translate implements Implementation.
func (e Exec) Translate(ctx context.Context, req Request) (*result.Result, error) {
	in, err := Input(req)
	if err != nil {
		return nil, err
	}
	env := []string{"EGHARNESS_PROFILE=" + req.Profile.Name, "EGHARNESS_SCENARIO=" + req.Scenario,
		"EGHARNESS_MERGE_GATEWAYS=" + strconv.FormatBool(req.Config.MergeGateways)}
	out, err := runCommand(ctx, e.Name(), []string{"sh", "-c", e.Command}, in, env, e.Timeout, e.Limits)
	if err != nil {
		return nil, err
	}
	var res result.Result
	dec := json.NewDecoder(bytes.NewReader(out))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&res); err != nil {
		return nil, fmt.Errorf("%s: its output is not the translate -o json shape: %v", e.Name(), err)
	}
	res.Normalize()
	return &res, nil
}

// runCommand runs argv with stdin and extra environment, and returns its standard output.
// A timeout (default one minute), a non-zero exit (with the end of stderr) and an output
// over the file size limit of l are errors that name the implementation.
func runCommand(ctx context.Context, name string, argv []string, stdin []byte, env []string, timeout time.Duration,
	l resource.Limits) ([]byte, error) {
	if timeout <= 0 {
		timeout = time.Minute
	}
	l = l.Resolved()
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	// On timeout the whole process group goes, so a child that keeps the pipes open cannot
	// hold the run.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = time.Second
	cmd.Stdin = bytes.NewReader(stdin)
	cmd.Env = append(os.Environ(), env...)
	stdout := &capped{max: l.MaxFileSize, over: cancel}
	var stderr capped
	stderr.max = 1 << 20 // only its end is shown
	cmd.Stdout, cmd.Stderr = stdout, &stderr
	err := cmd.Run()
	switch {
	case stdout.overflow:
		return nil, fmt.Errorf("%s: %w", name, &resource.LimitError{File: "its standard output", Limit: "file size",
			Max: resource.FormatSize(l.MaxFileSize), What: "it printed more than", Flag: "--max-file-size",
			Field: "MaxFileSize"})
	case errors.Is(ctx.Err(), context.DeadlineExceeded):
		return nil, fmt.Errorf("%s: no answer within %s (raise it with --exec-timeout)", name, timeout)
	case err != nil:
		var ee *exec.ExitError
		if errors.As(err, &ee) && ee.ExitCode() == ExitCannotExpress {
			reason := strings.TrimSpace(stderr.buf.String())
			if i := strings.LastIndexByte(reason, '\n'); i >= 0 {
				reason = reason[i+1:]
			}
			if reason == "" {
				reason = name + " cannot express this scenario (exit status 3, no reason given)"
			}
			return nil, &SkipError{Reason: reason}
		}
		return nil, fmt.Errorf("%s: %v%s", name, err, tail(stderr.buf.String()))
	}
	return stdout.buf.Bytes(), nil
}

// capped keeps at most max bytes (max < 0: no limit). Past the limit it calls over (which
// stops the command) and fails the write, so a runaway implementation cannot fill memory;
// without over (stderr) it keeps the last max bytes instead.
type capped struct {
	buf      bytes.Buffer // a field, not embedded: Buffer's ReadFrom would bypass Write
	max      int64
	overflow bool
	over     func()
}

func (c *capped) Write(p []byte) (int, error) {
	if c.max >= 0 && int64(c.buf.Len())+int64(len(p)) > c.max {
		if c.over == nil { // stderr: only its end is shown, so keep the last max bytes
			c.buf.Write(p)
			keep := append([]byte(nil), c.buf.Bytes()[int64(c.buf.Len())-c.max:]...)
			c.buf.Reset()
			c.buf.Write(keep)
			return len(p), nil
		}
		c.overflow = true
		c.over()
		return 0, errOutputLimit
	}
	return c.buf.Write(p)
}

var errOutputLimit = errors.New("output over the limit")

// Input renders a request as the YAML an external implementation reads.
func Input(req Request) ([]byte, error) {
	var docs []string
	if req.Config.ExtensionAPIs != nil || req.Config.RuntimeFlags != nil || req.Config.RateLimit != nil {
		eg := egv1a1.EnvoyGateway{EnvoyGatewaySpec: egv1a1.EnvoyGatewaySpec{
			ExtensionAPIs: req.Config.ExtensionAPIs,
			RuntimeFlags:  req.Config.RuntimeFlags,
			RateLimit:     req.Config.RateLimit,
		}}
		eg.APIVersion, eg.Kind = egv1a1.GroupVersion.String(), egv1a1.KindEnvoyGateway
		b, err := yaml.Marshal(eg)
		if err != nil {
			return nil, err
		}
		docs = append(docs, string(b))
	}
	for _, o := range req.Objects {
		b, err := objectYAML(o)
		if err != nil {
			return nil, fmt.Errorf("%s: %v", o.Ref(), err)
		}
		docs = append(docs, string(b))
	}
	return []byte(strings.Join(docs, "---\n")), nil
}

// objectYAML is an object as the implementation reads it. An object of a CRD-defined group
// goes as written (its JSON), so that what the API server would refuse (an unknown field, a
// wrong type, a field left out rather than empty) reaches the implementation unchanged; its
// namespace is filled in when the file left it out, as the harness read it. Other objects
// go as their Go values.
func objectYAML(o resource.Object) ([]byte, error) {
	if o.Raw == nil {
		return yaml.Marshal(o.Obj)
	}
	var m map[string]any
	if err := json.Unmarshal(o.Raw, &m); err != nil {
		return nil, err
	}
	if ns := o.Obj.GetNamespace(); ns != "" {
		meta, _ := m["metadata"].(map[string]any)
		if meta == nil {
			meta = map[string]any{}
			m["metadata"] = meta
		}
		if _, set := meta["namespace"]; !set {
			meta["namespace"] = ns
		}
	}
	return yaml.Marshal(m)
}

// tail is the end of a command's stderr, for an error message.
func tail(s string) string {
	s = strings.TrimSpace(s)
	if s == "" {
		return ""
	}
	// A Go panic says what went wrong in its first line; its stack follows.
	if i := strings.Index(s, "panic: "); i >= 0 {
		s = s[i:]
		if len(s) > 2000 {
			s = s[:2000] + "…"
		}
		return "\n" + s
	}
	if len(s) > 2000 {
		s = "…" + s[len(s)-2000:]
	}
	return "\n" + s
}
