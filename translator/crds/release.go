package crds

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"

	envoygateway "github.com/envoyproxy/gateway"

	"github.com/egharness/egharness/internal/gomod"
)

// Built is the EG release whose CRDs are compiled in: the one go.mod requires, which
// exports its CRDs (EG's and the Gateway API ones it bundles) as GatewayCRDs.
const Built = "v1.9.1"

// CRDsDirEnv names a folder holding one sub-folder of CRD files per release
// (`$EGHARNESS_CRDS/v1.8.0/*.yaml`), for releases other than Built.
const CRDsDirEnv = "EGHARNESS_CRDS"

// egModule is the module whose releases carry the CRDs, and where they sit in it.
const (
	egModule  = "github.com/envoyproxy/gateway"
	crdSubdir = "charts/gateway-helm/charts/crds/crds"
)

// gatewayAPIOf is the Gateway API release each EG release bundles (the CRDs'
// gateway.networking.k8s.io/bundle-version annotation).
var gatewayAPIOf = map[string]string{"v1.9.1": "v1.6.1", "v1.8.0": "v1.5.1"}

// Label words a release for messages: "EG v1.9.1 (Gateway API v1.6.1)".
func Label(release string) string {
	if g := gatewayAPIOf[release]; g != "" {
		return fmt.Sprintf("EG %s (Gateway API %s)", release, g)
	}
	return "EG " + release
}

var (
	cacheMu sync.Mutex
	cache   = map[string]*Set{}
)

// ForRelease returns the CRDs of an EG release, read once per process. Built's come from
// the EG module compiled in; another release's are looked up in $EGHARNESS_CRDS/<release>
// and then in the Go module cache, where `make crds` puts them
// (`go mod download github.com/envoyproxy/gateway@<release>`).
func ForRelease(release string) (*Set, error) {
	cacheMu.Lock()
	defer cacheMu.Unlock()
	if s, ok := cache[release]; ok {
		return s, nil
	}
	s, err := load(release)
	if err != nil {
		return nil, err
	}
	cache[release] = s
	return s, nil
}

func load(release string) (*Set, error) {
	if release == Built {
		return New(Label(release), envoygateway.GatewayCRDs)
	}
	f, isPreview, err := previewOf(release)
	if err != nil {
		return nil, err
	}
	if !isPreview {
		return fromElsewhere(release)
	}
	// A preview release: its base's CRDs, read afresh (each Set patches its own), with
	// the additions.
	s, err := load(f.Base)
	if err != nil {
		return nil, err
	}
	names := make([]string, len(f.Additions))
	for i, a := range f.Additions {
		names[i] = a.Name
	}
	s.Release = fmt.Sprintf("%s with the %s additions (%s)", Label(f.Base), release, strings.Join(names, ", "))
	if err := s.withAdditions(f.Additions); err != nil {
		return nil, err
	}
	return s, nil
}

func fromElsewhere(release string) (*Set, error) {
	var tried []string
	for _, dir := range candidateDirs(release) {
		if st, err := os.Stat(dir); err == nil && st.IsDir() {
			return FromDir(Label(release), dir)
		}
		tried = append(tried, dir)
	}
	return nil, &MissingError{Release: release, Tried: tried}
}

// candidateDirs are where another release's CRD files may be, in order.
func candidateDirs(release string) []string {
	var out []string
	if d := os.Getenv(CRDsDirEnv); d != "" {
		out = append(out, filepath.Join(d, release))
	}
	if mc := gomod.Cache(); mc != "" {
		out = append(out, filepath.Join(mc, "github.com", "envoyproxy", "gateway@"+release, filepath.FromSlash(crdSubdir)))
	}
	return out
}

// MissingError says a release's CRDs could not be found, and how to get them.
type MissingError struct {
	Release string
	Tried   []string
}

func (e *MissingError) Error() string {
	return fmt.Sprintf("%s's CRDs are not on this machine (looked in %s): run `make crds CRD_RELEASES=%s` "+
		"(which runs `go mod download %s@%s` outside this module), or set %s to a folder holding %s/",
		Label(e.Release), strings.Join(e.Tried, ", "), e.Release, egModule, e.Release, CRDsDirEnv, e.Release)
}

// IsMissing reports an error saying a release's CRDs could not be found.
func IsMissing(err error) bool {
	var m *MissingError
	return errors.As(err, &m)
}
