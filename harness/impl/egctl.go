package impl

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"

	egv1a1 "github.com/envoyproxy/gateway/api/v1alpha1"
	"sigs.k8s.io/yaml"

	"github.com/egharness/egharness/translator/resource"
	"github.com/egharness/egharness/translator/result"
)

// Egctl runs a released `egctl x translate --to gateway-api,xds` (EG's own translator, built
// from a release with `go install`) and reads its statuses and xDS config dump back into a
// result. It is the worked example of a peer adapter: the same conversion could be a
// script behind `--impl exec:`.
//
// egctl is an offline tool, and what it cannot express makes a scenario skip (see
// Translate): it has no runtime flags, no EnvoyGateway settings (it always enables
// EnvoyPatchPolicy, Backend and Lua), reproduces only its own release's profile, prints no
// secrets, and refuses the whole input at the first object its schema validation rejects
// (so the harness hands it only the objects the reference admits).
type Egctl struct {
	Version string // v1.9.1
	Binary  string // path of the egctl executable
	Profile string // the profile this release reproduces: v1.9 for v1.9.1
	Timeout time.Duration
	Limits  resource.Limits
}

// EgctlReleases are the releases `make peers` installs, with the go install flags each
// needs (v1.8.0's dependencies build only with these tags).
var EgctlReleases = map[string][]string{
	"v1.8.0": {"-tags", "exclude_graphdriver_btrfs,exclude_graphdriver_devicemapper,containers_image_openpgp"},
	"v1.9.1": nil,
}

var releaseRE = regexp.MustCompile(`^v(\d+)\.(\d+)\.\d+$`)

// PeersDir resolves where peers are installed: dir if set, else $EGHARNESS_PEERS, else peers/.
func PeersDir(dir string) string {
	if dir != "" {
		return dir
	}
	if env := os.Getenv("EGHARNESS_PEERS"); env != "" {
		return env
	}
	return "peers"
}

// EgctlBinary is where `make peers` puts egctl of version under dir.
func EgctlBinary(dir, version string) string {
	return filepath.Join(PeersDir(dir), "egctl-"+version, "egctl")
}

// EgctlInstallCommand is the command that installs egctl of version into dir.
func EgctlInstallCommand(dir, version string) string {
	tags := ""
	if t := EgctlReleases[version]; len(t) > 0 {
		tags = " " + strings.Join(t, " ")
	}
	abs, err := filepath.Abs(filepath.Dir(EgctlBinary(dir, version)))
	if err != nil {
		abs = filepath.Dir(EgctlBinary(dir, version))
	}
	return fmt.Sprintf("GOBIN=%s go install%s github.com/envoyproxy/gateway/cmd/egctl@%s", abs, tags, version)
}

// NotInstalledError is a peer that is known but not installed; it says how to install it.
type NotInstalledError struct {
	Impl, Binary, Install string
}

func (e *NotInstalledError) Error() string {
	return fmt.Sprintf(
		"%s is not installed (no %s): run `make peers`, or `%s` (set EGHARNESS_PEERS or --peers-dir to use another folder)",
		e.Impl, e.Binary, e.Install)
}

// OpenEgctl returns the egctl adapter for version (v1.8.0, v1.9.1), installed under
// o.PeersDir.
func OpenEgctl(version string, o Options) (*Egctl, error) {
	e, err := NewEgctl(EgctlBinary(o.PeersDir, version), version)
	if err != nil {
		return nil, err
	}
	if info, err := os.Stat(e.Binary); err != nil || info.IsDir() || info.Mode()&0o111 == 0 {
		return nil, &NotInstalledError{Impl: e.Name(), Binary: e.Binary, Install: EgctlInstallCommand(o.PeersDir, version)}
	}
	e.Limits = o.Limits
	e.Timeout = o.Timeout
	return e, nil
}

// NewEgctl returns the adapter for the egctl binary of release version, which reproduces
// the profile of its minor version (v1.9.1: v1.9).
func NewEgctl(binary, version string) (*Egctl, error) {
	m := releaseRE.FindStringSubmatch(version)
	if m == nil {
		return nil, fmt.Errorf("egctl@%s: want a release such as egctl@v1.9.1", version)
	}
	if _, ok := EgctlReleases[version]; !ok {
		known := make([]string, 0, len(EgctlReleases))
		for v := range EgctlReleases {
			known = append(known, "egctl@"+v)
		}
		slices.Sort(known)
		return nil, fmt.Errorf("egctl@%s: not a release the harness installs (%s)", version, strings.Join(known, ", "))
	}
	return &Egctl{Version: version, Binary: binary, Profile: "v" + m[1] + "." + m[2]}, nil
}

// Name implements Implementation.
func (e *Egctl) Name() string { return "egctl@" + e.Version }

// Capabilities implements Capable: egctl does no admission, prints no secrets, no warnings
// of ours, no record of each EnvoyPatchPolicy operation, and the statuses from before the
// xDS translation (so no Programmed condition on EnvoyPatchPolicies; the patched xDS itself
// is compared).
func (*Egctl) Capabilities() Capabilities {
	return Capabilities{NoAdmission: true, Omits: []string{"secrets", "warnings", "patches", "patch-status"}}
}

// Translate implements Implementation.
func (e *Egctl) Translate(ctx context.Context, req Request) (*result.Result, error) {
	if why := e.cannotExpress(req); why != "" {
		return nil, &SkipError{Reason: why}
	}
	in, err := egctlInput(req.Objects)
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "egharness-egctl-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	file := filepath.Join(dir, "objects.yaml")
	if err := os.WriteFile(file, in, 0o600); err != nil {
		return nil, err
	}
	out, err := runCommand(ctx, e.Name(),
		[]string{e.Binary, "x", "translate", "-f", file, "--to", "gateway-api,xds", "-o", "json"}, nil, nil, e.Timeout,
		e.Limits)
	if err != nil {
		return nil, err
	}
	res, err := ReadEgctlOutput(out)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", e.Name(), err)
	}
	return res, nil
}

// egctlInput is the file egctl reads: the objects without an EnvoyGateway document (egctl
// reads none) and without status (the typed objects print an empty status.parents, which
// egctl's schema validation refuses; status is egctl's output, not its input).
func egctlInput(objs []resource.Object) ([]byte, error) {
	docs := make([]string, 0, len(objs))
	for _, o := range objs {
		b, err := yaml.Marshal(o.Obj)
		if err != nil {
			return nil, fmt.Errorf("%s: %v", o.Ref(), err)
		}
		var m map[string]any
		if err := yaml.Unmarshal(b, &m); err != nil {
			return nil, fmt.Errorf("%s: %v", o.Ref(), err)
		}
		delete(m, "status")
		dropNulls(m)
		if b, err = yaml.Marshal(m); err != nil {
			return nil, fmt.Errorf("%s: %v", o.Ref(), err)
		}
		docs = append(docs, string(b))
	}
	return []byte(strings.Join(docs, "---\n")), nil
}

// dropNulls removes the null fields Go types marshal for nil pointers without omitempty
// (healthCheck.active.timeout...): the API server drops them before it applies the CRD's
// defaults, while egctl keeps them, skips the defaults and then dereferences nil.
func dropNulls(v any) {
	switch t := v.(type) {
	case map[string]any:
		for k, e := range t {
			if e == nil {
				delete(t, k)
				continue
			}
			dropNulls(e)
		}
	case []any:
		for _, e := range t {
			dropNulls(e)
		}
	}
}

// cannotExpress says why egctl cannot run req as the reference would, or "".
func (e *Egctl) cannotExpress(req Request) string {
	if req.Profile.Name != e.Profile {
		return fmt.Sprintf("egctl %s translates as EG %s; profile %s is not its own", e.Version, e.Profile, req.Profile.Name)
	}
	c := req.Config
	if f := c.RuntimeFlags; f != nil && (len(f.Enabled) > 0 || len(f.Disabled) > 0) {
		return "egctl has no runtime flags, and the input sets runtimeFlags"
	}
	if c.MergeGateways {
		return "egctl reads no EnvoyGateway settings, and the input sets mergeGateways"
	}
	if ext := c.ExtensionAPIs; ext != nil && ext.EnableSDSSecretRef {
		return "egctl leaves SDS Secret references off, and the input sets extensionApis.enableSDSSecretRef"
	}
	// egctl always enables these extension APIs; a scenario that turns one off and holds
	// objects of its kind would see them take effect under egctl.
	ext := c.ExtensionAPIs
	off := map[string]string{}
	if ext == nil || !ext.EnableBackend {
		off["Backend"] = "enableBackend"
	}
	if ext == nil || !ext.EnableEnvoyPatchPolicy {
		off["EnvoyPatchPolicy"] = "enableEnvoyPatchPolicy"
	}
	if ext == nil || !ext.EnableLua {
		off["EnvoyExtensionPolicy"] = "enableLua"
	}
	var kinds []string
	for _, o := range req.Objects {
		setting, ok := off[o.Kind]
		if !ok || (o.Kind == "EnvoyExtensionPolicy" && !hasLua(o)) {
			continue
		}
		kinds = append(kinds, fmt.Sprintf("%s (%s is off)", o.Ref(), setting))
	}
	if len(kinds) > 0 {
		return "egctl always enables EnvoyPatchPolicy, Backend and Lua, and the input holds " + strings.Join(kinds, ", ")
	}
	// egctl always runs as if EG had a rate limit service; global rules the scenario's EG
	// refuses (no rateLimit setting) would be accepted.
	if c.RateLimit == nil {
		for _, o := range req.Objects {
			if p, ok := o.Obj.(*egv1a1.BackendTrafficPolicy); ok && p.Spec.RateLimit != nil && p.Spec.RateLimit.Global != nil {
				return fmt.Sprintf(
					"egctl always enables global rate limiting, and the input holds %s with global rules "+
						"(rateLimit is not configured)",
					o.Ref())
			}
		}
	}
	return ""
}

// hasLua reports whether an EnvoyExtensionPolicy carries Lua scripts.
func hasLua(o resource.Object) bool {
	p, ok := o.Obj.(*egv1a1.EnvoyExtensionPolicy)
	return ok && len(p.Spec.Lua) > 0
}
