package main

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// SIGTERM during a run prints what finished and the partial table, and exits 143.
func TestRunInterrupted(t *testing.T) {
	started := filepath.Join(t.TempDir(), "started")
	go func() {
		for i := 0; i < 600; i++ {
			if _, err := os.Stat(started); err == nil {
				time.Sleep(700 * time.Millisecond) // a couple of runs finish
				_ = syscall.Kill(os.Getpid(), syscall.SIGTERM)
				return
			}
			time.Sleep(50 * time.Millisecond)
		}
	}()
	begin := time.Now()
	code, out, msg := execute(t, "", "run", "--parallel", "1", "--label", "routing",
		"--impl", "exec:touch "+started+"; sleep 0.2; exit 3")
	if code != 143 {
		t.Fatalf("exit %d (%s), want 143\n%s", code, msg, out)
	}
	if !strings.HasPrefix(out, "Interrupted by SIGTERM: ") || !strings.Contains(out, "SCENARIO") ||
		!strings.Contains(out, " skip ") {
		t.Errorf("no partial table:\n%s", out)
	}
	if !strings.Contains(msg, "interrupted by SIGTERM after ") {
		t.Errorf("message %q", msg)
	}
	if d := time.Since(begin); d > 20*time.Second {
		t.Errorf("the run went on for %s after the signal", d)
	}
}

// --exec-timeout bounds one translation by an exec: implementation.
func TestExecTimeoutFlag(t *testing.T) {
	begin := time.Now()
	code, out, _ := execute(t, "", "run", "--focus", "RT-01", "--label", "routing", "--profile", "v1.9",
		"--impl", "exec:sleep 30", "--exec-timeout", "300ms")
	if code != exitFail || !strings.Contains(out, "no answer within 300ms (raise it with --exec-timeout)") {
		t.Errorf("exit %d\n%s", code, out)
	}
	if d := time.Since(begin); d > 15*time.Second {
		t.Errorf("took %s", d)
	}
}
