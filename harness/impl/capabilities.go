package impl

import (
	"errors"
	"fmt"
)

// Capabilities is what an implementation says about the part of a result it produces.
// Implementations that do not declare any produce the whole result (as the exec protocol
// does) and are judged against the reference.
type Capabilities struct {
	// Golden: the implementation's output is the reference translation itself, so the
	// byte-exact goldens apply to it and its results are checked against the scenarios
	// directly; any other implementation is compared with the reference fact by fact
	// (runner.comparePeer). Only Reference declares it: --impl-capabilities cannot.
	Golden bool
	// NoAdmission: the implementation does no admission of its own (an offline translator
	// that reads objects a cluster already admitted). The harness then plays the API
	// server: it hands over only the objects the reference admits, and admission is neither
	// checked nor compared.
	NoAdmission bool
	// Omits names parts of a result the implementation never produces; checks and facts
	// about them are left out: "secrets" (xDS secrets), "warnings", "patches" (the record
	// of each EnvoyPatchPolicy operation), "patch-status" (the Programmed condition of
	// EnvoyPatchPolicies).
	Omits []string
}

// Capable is an Implementation that declares its Capabilities.
type Capable interface {
	Capabilities() Capabilities
}

// CapabilitiesOf returns what im declares, or the whole result (and no goldens).
func CapabilitiesOf(im Implementation) Capabilities {
	if c, ok := im.(Capable); ok {
		return c.Capabilities()
	}
	return Capabilities{}
}

// OmitsPart reports whether the implementation never produces part.
func (c Capabilities) OmitsPart(part string) bool {
	for _, p := range c.Omits {
		if p == part {
			return true
		}
	}
	return false
}

// SkipError is returned by Translate for a scenario the implementation cannot express (a
// setting it has no way to take, a version it does not reproduce). The scenario is
// skipped, with Reason, rather than failed.
type SkipError struct{ Reason string }

func (e *SkipError) Error() string { return "skipped: " + e.Reason }

// Skipped returns the reason err skips a scenario, or "".
func Skipped(err error) string {
	var s *SkipError
	if errors.As(err, &s) {
		return s.Reason
	}
	return ""
}

// ParseCapabilities reads a comma-separated list as --impl-capabilities takes it:
// no-admission, no-secrets, no-warnings, no-patches (no operation records, no Programmed
// condition on EnvoyPatchPolicies).
func ParseCapabilities(list []string) (Capabilities, error) {
	var c Capabilities
	for _, x := range list {
		switch x {
		case "no-admission":
			c.NoAdmission = true
		case "no-secrets":
			c.Omits = append(c.Omits, "secrets")
		case "no-warnings":
			c.Omits = append(c.Omits, "warnings")
		case "no-patches":
			c.Omits = append(c.Omits, "patches", "patch-status")
		default:
			return Capabilities{}, fmt.Errorf("capability %q: want no-admission, no-secrets, no-warnings or no-patches", x)
		}
	}
	return c, nil
}
