package main

import (
	"regexp"
	"strings"
	"testing"

	"github.com/egharness/egharness/harness/envoytier"
)

// run --envoy serves the scenarios to real Envoy after the offline checks and prints the
// summary line right before the totals; a bad --envoy is bad usage.
func TestRunEnvoy(t *testing.T) {
	t.Setenv(envoytier.EnvVar, "")
	code, _, msg := execute(t, "", "run", "--no-golden", "--envoy", "/nonexistent/envoy",
		"../../scenarios/routing/precedence-order.yaml")
	if code != exitBad || !strings.Contains(msg, "/nonexistent/envoy") {
		t.Errorf("a missing --envoy: exit %d, %q", code, msg)
	}
	bin := envoytier.FindForTest(t)
	code, out, msg := execute(t, "", "run", "--no-golden", "--envoy", bin, "../../scenarios/routing/precedence-order.yaml",
		"../../scenarios/routing/request-redirect.yaml")
	if code != 0 {
		t.Fatalf("exit %d (%s):\n%s", code, msg, out)
	}
	line := regexp.MustCompile(
		`(?m)^real Envoy 1\.[0-9.]+: 2 scenarios served \(2 ACKed, 0 NACKed\), 16 requests replayed \(16 agree, 0 ` +
			`disagree\), 0 not replayed\n\n2 passed, 0 failed\n$`)
	if !line.MatchString(out) {
		t.Errorf("no summary line before the totals:\n%s", out)
	}
}
