package main

import (
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// Every command shows an example, and no flag's help names a placeholder of more than one
// word (pflag turns a `quoted` word into the value's name: `make peers` printed
// "--peers-dir make peers").
func TestHelpExamplesAndPlaceholders(t *testing.T) {
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		if c.Hidden || c.Name() == "help" || c.Name() == "completion" {
			return
		}
		if strings.TrimSpace(c.Example) == "" {
			t.Errorf("%s: no example in its help", c.CommandPath())
		}
		check := func(f *pflag.Flag) {
			name, _ := pflag.UnquoteUsage(f)
			if strings.ContainsAny(name, " `") {
				t.Errorf("%s --%s: the value is shown as %q", c.CommandPath(), f.Name, name)
			}
		}
		c.LocalFlags().VisitAll(check)
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(newRoot())
}

func TestVersion(t *testing.T) {
	code, out, _ := execute(t, "", "--version")
	if code != 0 || !strings.HasPrefix(out, "egharness ") ||
		!strings.Contains(out, "models Envoy Gateway v1.9.") || !strings.Contains(out, "and Gateway API v1.6.") {
		t.Errorf("exit %d:\n%s", code, out)
	}
}
