package scenario

import (
	"fmt"
	"strings"
)

// Finding severities an upgrade expectation may name (harness/upgrade's).
var upgradeSeverities = []string{"breaking", "warning", "info"}

// validateUpgrade checks an upgrade block: two distinct profiles the scenario runs under,
// known behavior IDs, known severities, well-formed object references (that they name the
// scenario's objects is checked with the other references).
func (l Loader) validateUpgrade(s *Scenario, u *UpgradeExpect, addf func(int, string, ...any)) {
	for _, side := range []struct{ key, p string }{{"from", u.From}, {"to", u.To}} {
		switch {
		case side.p == "":
			addf(s.Line("upgrade"), "upgrade.%s is required", side.key)
		case !contains(s.ProfilesOrDefault(), side.p):
			addf(s.Line("upgrade."+side.key), "upgrade.%s: the scenario does not run under %s (profiles: %s)", side.key, side.p,
				strings.Join(s.ProfilesOrDefault(), ", "))
		}
	}
	if u.From != "" && u.From == u.To {
		addf(s.Line("upgrade.to"), "upgrade: from and to are the same profile %s", u.From)
	}
	for i, f := range u.Findings {
		p := fmt.Sprintf("upgrade.findings[%d]", i)
		if l.Catalog.Get(f.ID) == nil {
			addf(s.Line(p+".id"), "%s.id: unknown behavior ID %q (see scenarios/behaviors.yaml)", p, f.ID)
		}
		if !contains(upgradeSeverities, f.Severity) {
			addf(s.Line(p+".severity"), "%s.severity: %q is not one of breaking, warning, info", p, f.Severity)
		}
	}
}
