// Package subprocess starts and stops the harness's long-running children: Envoy
// (harness/envoytier) and the Pods' backends of the offline conformance run
// (harness/gwconformance/kubelet).
package subprocess

import (
	"errors"
	"fmt"
	"os/exec"
	"syscall"
	"time"
)

// Process is a started child. Exited is closed once it has exited; Err, what Wait
// returned, is set before.
type Process struct {
	Cmd    *exec.Cmd
	Exited chan struct{}
	Err    error
}

// Start starts cmd in a process group of its own, so that a Ctrl-C at the terminal reaches
// only the harness, which stops its children itself. The child is also sent SIGKILL when
// the harness dies: a harness killed by a signal it does not handle (SIGPIPE when its
// output is piped into head, SIGKILL) must not leave an Envoy or a backend running.
// (Linux sends that signal when the thread that started the child ends; Go ends no thread
// but those a goroutine locked, so it comes when the harness does.)
func Start(cmd *exec.Cmd) (*Process, error) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting %s: %w", cmd.Args[0], err)
	}
	p := &Process{Cmd: cmd, Exited: make(chan struct{})}
	go func() {
		p.Err = cmd.Wait()
		close(p.Exited)
	}()
	return p, nil
}

// Stop ends the child: SIGTERM, then SIGKILL when it has not exited after grace; it returns
// once the child has exited. The error is one of Wait's other than the child's exit status
// (which the signal makes non-zero); a child that had exited before Stop is none.
func (p *Process) Stop(grace time.Duration) error {
	select {
	case <-p.Exited:
		return nil
	default:
	}
	_ = p.Cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.Exited:
	case <-time.After(grace):
		_ = p.Cmd.Process.Kill()
		<-p.Exited
	}
	var exitErr *exec.ExitError
	if p.Err != nil && !errors.As(p.Err, &exitErr) {
		return p.Err
	}
	return nil
}
