// Package gomod finds what the go command has downloaded: the module cache holds the other
// EG releases' CRDs (translator/crds) and EG's own translator testdata (harness/corpus),
// read where they are rather than copied into the repository.
package gomod

import (
	"os"
	"path/filepath"
)

// Cache is the Go module cache as the go command finds it: GOMODCACHE, else the first
// GOPATH entry's pkg/mod, else ~/go/pkg/mod ("" when none can be named).
func Cache() string {
	if d := os.Getenv("GOMODCACHE"); d != "" {
		return d
	}
	if gp := filepath.SplitList(os.Getenv("GOPATH")); len(gp) > 0 && gp[0] != "" {
		return filepath.Join(gp[0], "pkg", "mod")
	}
	if home, err := os.UserHomeDir(); err == nil {
		return filepath.Join(home, "go", "pkg", "mod")
	}
	return ""
}
