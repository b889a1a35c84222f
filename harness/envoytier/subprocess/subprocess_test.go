package subprocess

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// parentEnvVar makes the test binary the parent of TestChildDiesWithParent: it starts a
// child through Start, prints the child's pid and waits to be killed.
const parentEnvVar = "EGHARNESS_SUBPROCESS_TEST_PARENT"

func TestMain(m *testing.M) {
	if os.Getenv(parentEnvVar) != "" {
		p, err := Start(exec.Command("sleep", "600"))
		if err != nil {
			fmt.Println("error:", err)
			os.Exit(1)
		}
		fmt.Println(p.Cmd.Process.Pid)
		<-p.Exited
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// Stop ends a child with SIGTERM, one that ignores SIGTERM with SIGKILL after the grace,
// and reports neither exit status as an error.
func TestStop(t *testing.T) {
	for _, c := range []struct {
		name  string
		argv  []string
		grace time.Duration
	}{
		{"SIGTERM", []string{"sleep", "600"}, 10 * time.Second},
		// Short sleeps: the shell alone is killed, and what it started must end soon.
		{"SIGKILL after the grace", []string{"sh", "-c", "trap '' TERM; while :; do sleep 0.1; done"},
			100 * time.Millisecond},
	} {
		p, err := Start(exec.Command(c.argv[0], c.argv[1:]...))
		if err != nil {
			t.Fatal(err)
		}
		time.Sleep(100 * time.Millisecond) // the shell has set its trap
		start := time.Now()
		if err := p.Stop(c.grace); err != nil {
			t.Errorf("%s: %v", c.name, err)
		}
		select {
		case <-p.Exited:
		default:
			t.Errorf("%s: Stop returned before the child exited", c.name)
		}
		if took := time.Since(start); took > c.grace+5*time.Second {
			t.Errorf("%s: Stop took %s", c.name, took)
		}
		if err := p.Stop(c.grace); err != nil {
			t.Errorf("%s: a second Stop: %v", c.name, err)
		}
	}
	if _, err := Start(exec.Command("/nonexistent/egharness-envoy")); err == nil ||
		!strings.Contains(err.Error(), "starting /nonexistent/egharness-envoy") {
		t.Errorf("a missing binary: %v", err)
	}
}

// A child outlives no harness that dies of a signal it does not handle (the Envoy of an
// `egharness run | head` that died of SIGPIPE did).
func TestChildDiesWithParent(t *testing.T) {
	parent := exec.Command(os.Args[0], "-test.run=^$")
	parent.Env = append(os.Environ(), parentEnvVar+"=1")
	stdout, err := parent.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := parent.Start(); err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil {
		_ = parent.Process.Kill()
		t.Fatalf("the parent printed no pid: %v", err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(line))
	if err != nil {
		_ = parent.Process.Kill()
		t.Fatalf("the parent printed %q", line)
	}
	if err := parent.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = parent.Wait()
	deadline := time.Now().Add(10 * time.Second)
	for running(pid) {
		if time.Now().After(deadline) {
			_ = syscall.Kill(pid, syscall.SIGKILL)
			t.Fatalf("child %d still runs 10s after its parent was killed", pid)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// running reports a process that exists and is no zombie (in a container nothing may reap
// an orphan that died).
func running(pid int) bool {
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	// pid (comm) state ...: the state follows the last ')'.
	fields := strings.Fields(string(stat[strings.LastIndexByte(string(stat), ')')+1:]))
	return len(fields) > 0 && fields[0] != "Z"
}
