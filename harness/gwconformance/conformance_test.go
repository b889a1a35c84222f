package gwconformance_test

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"sigs.k8s.io/gateway-api/conformance/utils/suite"

	"github.com/egharness/egharness/harness/envoytier"
	"github.com/egharness/egharness/harness/gwconformance"
	"github.com/egharness/egharness/harness/impl"
	"github.com/egharness/egharness/translator/profile"
)

// buildEchoBasic builds the suite's backend from the module go.mod requires.
func buildEchoBasic(t *testing.T) string {
	t.Helper()
	out := filepath.Join(t.TempDir(), "echo-basic")
	cmd := exec.Command("go", "build", "-o", out, "sigs.k8s.io/gateway-api/conformance/echo-basic")
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("building echo-basic: %v\n%s", err, b)
	}
	return out
}

func options(t *testing.T, envoy, backend string, so suite.ConfigurableOptions) gwconformance.Options {
	t.Helper()
	p, err := profile.Get("v1.9")
	if err != nil {
		t.Fatal(err)
	}
	so.ConformanceProfiles = []suite.ConformanceProfileName{suite.GatewayHTTPConformanceProfileName}
	if so.SupportedFeatures, err = gwconformance.ProfileFeatures(so.ConformanceProfiles); err != nil {
		t.Fatal(err)
	}
	so.CleanupTestResources = true
	so.Implementation.Organization, so.Implementation.Project = "egharness", "reference"
	return gwconformance.Options{Impl: impl.Reference{}, Profile: p, Envoy: envoy, Backend: backend, Suite: so}
}

// The whole GATEWAY-HTTP profile of Gateway API's own suite, against the reference
// translator and a real Envoy, offline: every core and extended test passes, as in EG
// v1.9's published report (37 core, 55 extended). Skipped without `make envoy` unless
// $EGHARNESS_REQUIRE_ENVOY is set.
func TestGatewayHTTPProfile(t *testing.T) {
	wd, _ := os.Getwd()
	envoy, err := envoytier.Find("", wd)
	if errors.Is(err, envoytier.ErrNoEnvoy) && os.Getenv(envoytier.RequireEnvVar) == "" {
		t.Skipf("no Envoy (make envoy): %v", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	if err := gwconformance.CanBindPrivileged(); err != nil {
		t.Skip(err)
	}
	out := gwconformance.Run(t, options(t, envoy, buildEchoBasic(t), suite.ConfigurableOptions{}))
	var failed []string
	for _, r := range out.Results {
		if r.Outcome == "failed" {
			failed = append(failed, r.Name)
		}
	}
	if len(failed) > 0 {
		t.Errorf("failed: %s\n%s", strings.Join(failed, ", "), out.Summary())
	}
	if out.Report == nil || len(out.Report.ProfileReports) != 1 {
		t.Fatalf("want one profile report, got %+v", out.Report)
	}
	pr := out.Report.ProfileReports[0]
	if pr.Core.Result != "success" || pr.Core.Statistics.Passed != 37 {
		t.Errorf("GATEWAY-HTTP core: %s, %d passed (EG v1.9: 37)", pr.Core.Result, pr.Core.Statistics.Passed)
	}
	if pr.Extended == nil || pr.Extended.Result != "success" || pr.Extended.Statistics.Passed != 55 {
		t.Errorf("GATEWAY-HTTP extended: %+v (EG v1.9: 55 passed)", pr.Extended)
	}
	if out.Report.Mode != gwconformance.Mode {
		t.Errorf("report mode %q, want %q", out.Report.Mode, gwconformance.Mode)
	}
}

// Without Envoy the route checker carries the suite's plain HTTP requests: a routing test
// passes through the unmodified suite all the same.
func TestRouteCheckerPlane(t *testing.T) {
	for _, name := range []string{"HTTPRouteSimpleSameNamespace", "HTTPRouteRequestHeaderModifier",
		"HTTPRouteRedirectPath", "HTTPRouteWeight"} {
		t.Run(name, func(t *testing.T) {
			out := gwconformance.Run(t, options(t, "", "", suite.ConfigurableOptions{RunTest: name}))
			if len(out.Results) != 1 || out.Results[0].Outcome != "passed" {
				t.Errorf("%s through the route checker: %+v\n%s", name, out.Results, out.Summary())
			}
		})
	}
}
