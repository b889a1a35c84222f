package envoytier

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func script(t *testing.T, path, body string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte("#!/bin/sh\n"+body+"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
}

func TestFind(t *testing.T) {
	t.Setenv(EnvVar, "")
	root := t.TempDir()
	if err := os.WriteFile(filepath.Join(root, "go.mod"), []byte("module x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	sub := filepath.Join(root, "suites", "envoy")
	if err := os.MkdirAll(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	if _, err := Find("", sub); !errors.Is(err, ErrNoEnvoy) || !strings.Contains(err.Error(), "make envoy") {
		t.Errorf("nothing installed: %v", err)
	}
	installed := filepath.Join(root, InstalledPath)
	script(t, installed, "exit 0")
	if p, err := Find("", sub); err != nil || p != installed {
		t.Errorf("installed: %q %v", p, err)
	}
	other := filepath.Join(t.TempDir(), "envoy")
	script(t, other, "exit 0")
	t.Setenv(EnvVar, other)
	if p, err := Find("", sub); err != nil || p != other {
		t.Errorf("$%s: %q %v", EnvVar, p, err)
	}
	if _, err := Find(filepath.Join(root, "nope"), sub); err == nil || !strings.Contains(err.Error(), "--envoy") {
		t.Errorf("a missing --envoy: %v", err)
	}
	t.Setenv(EnvVar, filepath.Join(root, "missing"))
	if _, err := Find("", sub); err == nil || !strings.Contains(err.Error(), "$"+EnvVar) {
		t.Errorf("a missing $%s: %v", EnvVar, err)
	}
}

func TestVersion(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "envoy")
	script(t, good, `echo ""; echo "$0  version: 6eb0d2d97489ec1b4e1584a004f5de443d97a41b/1.39.3/Clean/RELEASE/BoringSSL"`)
	if v, err := Version(context.Background(), good); err != nil || v != "1.39.3" {
		t.Errorf("version %q %v", v, err)
	}
	bad := filepath.Join(dir, "not-envoy")
	script(t, bad, "echo hello")
	if _, err := Version(context.Background(), bad); err == nil {
		t.Error("a binary without a version line is accepted")
	}
}
