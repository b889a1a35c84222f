// Package corpus runs Envoy Gateway's own translator test inputs (the in/out pairs of EG's
// internal/gatewayapi/testdata, read from the EG module in the Go module cache, never
// copied) through the reference translator, or any implementation, and compares the
// statuses with the ones EG's test records: an oracle we did not write.
//
// Each case is turned into objects the way EG v1.9.1's TestTranslate runs it: its keys read
// as that test's decoder reads them, the fixtures it adds, its translator settings and
// per-file overrides, and file order as processing order (that test does not sort by age,
// so objects get creation timestamps in file order).
package corpus

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime/debug"
	"sort"
	"strings"

	"github.com/egharness/egharness/internal/gomod"
)

// EGModule is the module whose testdata is the corpus.
const EGModule = "github.com/envoyproxy/gateway"

// testdataSubdir is where EG keeps its translator cases inside its module.
const testdataSubdir = "internal/gatewayapi/testdata"

// Case is one EG translator test: NAME.in.yaml and NAME.out.yaml.
type Case struct {
	Name string
	// Prefix groups cases by what they test: the name up to its first '-' (httproute,
	// securitypolicy, backendtrafficpolicy...).
	Prefix  string
	In, Out string // file paths
}

// PrefixOf is a case name's group.
func PrefixOf(name string) string {
	p, _, _ := strings.Cut(name, "-")
	return p
}

// Cases lists the cases in dir, by name. A NAME.in.yaml without its NAME.out.yaml is still
// a case (it fails alone, naming the missing file).
func Cases(dir string) ([]Case, error) {
	ins, err := filepath.Glob(filepath.Join(dir, "*.in.yaml"))
	if err != nil {
		return nil, err
	}
	if len(ins) == 0 {
		return nil, fmt.Errorf("%s: no *.in.yaml cases", dir)
	}
	out := make([]Case, 0, len(ins))
	for _, in := range ins {
		name := strings.TrimSuffix(filepath.Base(in), ".in.yaml")
		out = append(out,
			Case{Name: name, Prefix: PrefixOf(name), In: in, Out: strings.TrimSuffix(in, ".in.yaml") + ".out.yaml"})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

// DefaultDir is EG's testdata in the Go module cache, for the EG version this program was
// built with (go.mod's requirement): $GOMODCACHE/github.com/envoyproxy/gateway@VERSION/....
func DefaultDir() (string, error) {
	v := egVersion()
	if v == "" {
		return "", fmt.Errorf(
			"cannot tell which %s version this program was built with; give the testdata folder (--testdata DIR)", EGModule)
	}
	mc := gomod.Cache()
	if mc == "" {
		return "", fmt.Errorf(
			"no Go module cache found (GOMODCACHE, GOPATH, ~/go/pkg/mod); give the testdata folder (--testdata DIR)")
	}
	dir := filepath.Join(mc, filepath.FromSlash(EGModule)+"@"+v, filepath.FromSlash(testdataSubdir))
	if st, err := os.Stat(dir); err != nil || !st.IsDir() {
		return "", fmt.Errorf(
			"%s@%s's testdata is not in the module cache (%s): run `go mod download %s@%s`, or give the folder (--testdata DIR)",
			EGModule, v, dir, EGModule, v)
	}
	return dir, nil
}

// EGVersion is the EG module version the corpus comes from by default.
func EGVersion() string { return egVersion() }

// egVersion is the EG module version in this program's build information, else (test
// binaries carry no dependency list) the one the go.mod at or above the current folder
// requires.
func egVersion() string {
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, d := range bi.Deps {
			if d.Path == EGModule {
				if d.Replace != nil {
					return d.Replace.Version
				}
				return d.Version
			}
		}
	}
	return goModVersion()
}

func goModVersion() string {
	dir, err := os.Getwd()
	if err != nil {
		return ""
	}
	for {
		if data, err := os.ReadFile(filepath.Join(dir, "go.mod")); err == nil {
			for _, line := range strings.Split(string(data), "\n") {
				f := strings.Fields(strings.TrimPrefix(strings.TrimSpace(line), "require "))
				if len(f) >= 2 && f[0] == EGModule {
					return f[1]
				}
			}
			return ""
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return ""
		}
		dir = parent
	}
}
