// Package impl is the seam between the harness and what it tests: anything that turns a
// scenario's objects into a result. The reference translator runs in process; adapters for
// other implementations (an exec command, egctl, a live cluster) satisfy the same interface.
package impl

import (
	"context"
	"strings"
	"time"

	"github.com/egharness/egharness/translator"
	"github.com/egharness/egharness/translator/config"
	"github.com/egharness/egharness/translator/profile"
	"github.com/egharness/egharness/translator/resource"
	"github.com/egharness/egharness/translator/result"
)

// Request is one translation to perform.
type Request struct {
	Scenario string
	Objects  []resource.Object
	Config   config.Config
	Profile  profile.Profile
}

// Implementation translates objects. What part of a result it produces, and whether the
// goldens apply to it, it says in Capabilities (see Capable).
type Implementation interface {
	Name() string
	Translate(ctx context.Context, req Request) (*result.Result, error)
}

// Reference is the in-process reference translator.
type Reference struct{}

// Name implements Implementation.
func (Reference) Name() string { return "reference" }

// Capabilities implements Capable: the whole result, and the goldens are its output.
func (Reference) Capabilities() Capabilities { return Capabilities{Golden: true} }

// Translate implements Implementation.
func (Reference) Translate(_ context.Context, req Request) (*result.Result, error) {
	return translator.Translate(translator.Input{Objects: req.Objects, Config: req.Config, Profile: req.Profile})
}

// Get returns the implementation named by --impl with default options (see Open).
func Get(name string) (Implementation, error) { return Open(name, Options{}) }

// Options tune the implementations Open returns.
type Options struct {
	// Limits bound what is read back from an external implementation (its output size).
	Limits resource.Limits
	// Caps applies to exec: implementations (what the command does not produce).
	Caps Capabilities
	// PeersDir holds installed peers (egctl-v1.9.1/egctl...); "" means $EGHARNESS_PEERS,
	// else peers/ (where `make peers` installs them).
	PeersDir string
	// Timeout bounds each translation by an external command (exec:, egctl@); 0 means
	// one minute (--exec-timeout).
	Timeout time.Duration
}

// Open returns the implementation named by --impl: "reference", "exec:COMMAND" for any
// command speaking the exec protocol (see Exec), or "egctl@VERSION" for a released
// egctl (see Egctl).
func Open(name string, o Options) (Implementation, error) {
	switch {
	case name == "" || name == "reference":
		return Reference{}, nil
	case strings.HasPrefix(name, "exec:") && strings.TrimSpace(strings.TrimPrefix(name, "exec:")) != "":
		return Exec{Command: strings.TrimPrefix(name, "exec:"), Limits: o.Limits, Caps: o.Caps, Timeout: o.Timeout}, nil
	case strings.HasPrefix(name, "egctl@"):
		return OpenEgctl(strings.TrimPrefix(name, "egctl@"), o)
	}
	return nil, &UnknownError{Name: name}
}

// UnknownError is an --impl value nobody implements (yet).
type UnknownError struct{ Name string }

func (e *UnknownError) Error() string {
	return "unknown implementation " + e.Name + " (known: reference, exec:COMMAND, egctl@VERSION)"
}
