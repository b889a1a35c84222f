package envoytier_test

import (
	"context"
	"strings"
	"testing"

	routev3 "github.com/envoyproxy/go-control-plane/envoy/config/route/v3"
	matcherv3 "github.com/envoyproxy/go-control-plane/envoy/type/matcher/v3"
	"google.golang.org/protobuf/proto"

	"github.com/egharness/egharness/harness/envoytier"
	"github.com/egharness/egharness/harness/scenario"
	"github.com/egharness/egharness/harness/scenario/scenariotest"
	"github.com/egharness/egharness/harness/xdsserver"
)

const scenarioRoot = "../../scenarios"

func scenarios(t *testing.T) []*scenario.Scenario {
	t.Helper()
	return scenariotest.Load(t, scenarioRoot).Scenarios
}

func find(t *testing.T, name string) *scenario.Scenario {
	t.Helper()
	sc := xdsserver.Find(scenarios(t), name)
	if sc == nil {
		t.Fatalf("no scenario %s", name)
	}
	return sc
}

// startTier starts the tier on a real Envoy, or skips in one line ($EGHARNESS_REQUIRE_ENVOY=1
// fails instead).
func startTier(t *testing.T) *envoytier.Tier {
	t.Helper()
	bin := envoytier.FindForTest(t)
	tier, err := envoytier.Start(context.Background(), envoytier.Options{Envoy: bin})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := tier.Close(); err != nil {
			t.Error(err)
		}
	})
	return tier
}

// One Envoy takes scenario after scenario: a good one is ACKed and its traffic agrees, a
// refused one is a NACK with Envoy's message, the next one is served again, and a wrong
// expectation is a disagreement naming both answers.
func TestTierServesRefusesAndCompares(t *testing.T) {
	tier := startTier(t)
	ctx := context.Background()
	if !strings.HasPrefix(tier.Version(), "1.") {
		t.Errorf("version %q", tier.Version())
	}

	good := find(t, "precedence-order")
	o := tier.Run(ctx, good, "v1.9", nil)
	if !o.Acked || !o.Passed() || len(o.Requests) == 0 {
		t.Fatalf("precedence-order: %s", o.Describe(true))
	}
	for _, r := range o.Requests {
		if !r.Replayed() || !r.Agrees() {
			t.Errorf("traffic[%d]: %+v", r.Index, r)
		}
	}

	// A regex RE2 refuses: Envoy NACKs the route configuration.
	l, err := xdsserver.Translate(good, "v1.9")
	if err != nil {
		t.Fatal(err)
	}
	bad := *l.Result
	bad.XDS.Routes = append([]*routev3.RouteConfiguration(nil), bad.XDS.Routes...)
	rc := proto.Clone(bad.XDS.Routes[0]).(*routev3.RouteConfiguration)
	rc.GetVirtualHosts()[0].GetRoutes()[0].Match = &routev3.RouteMatch{
		PathSpecifier: &routev3.RouteMatch_SafeRegex{SafeRegex: &matcherv3.RegexMatcher{Regex: "(unclosed"}}}
	bad.XDS.Routes[0] = rc
	n := tier.Run(ctx, good, "v1.9", &bad)
	if n.Nack == "" || n.Acked || n.Passed() || !strings.Contains(n.Nack, "RouteConfiguration") {
		t.Fatalf("broken regex: want a NACK of the route configuration, got %s", n.Describe(true))
	}
	if !strings.Contains(n.Describe(false), "Envoy refused the xDS") {
		t.Errorf("describe: %s", n.Describe(false))
	}

	// Served again after the refusal, with an expectation that is wrong on purpose.
	wrong := *good
	e := good.ExpectFor("v1.9")
	e.Traffic = append([]scenario.TrafficExpect(nil), e.Traffic...)
	e.Traffic[0].Expect.Status = 418
	wrong.Expect, wrong.ExpectByProfile = e, nil
	w := tier.Run(ctx, &wrong, "v1.9", nil)
	if !w.Acked || w.Passed() || len(w.Requests[0].VsScenario) == 0 || len(w.Requests[0].VsChecker) != 0 {
		t.Fatalf("wrong expectation: %s", w.Describe(true))
	}
	if d := w.Describe(false); !strings.Contains(d, "the scenario expects 418") || !strings.Contains(d, "live Envoy:") ||
		!strings.Contains(d, "route checker:") {
		t.Errorf("a disagreement prints both answers: %s", d)
	}

	s := envoytier.Summarize(tier.Version(), []*envoytier.Outcome{o, n, w})
	if s.Served != 3 || s.Acked != 2 || s.Nacked != 1 || s.Disagree < 1 || s.Failed != 2 {
		t.Errorf("summary %+v", s)
	}
}

// Upstream TLS is verified for real (a tier CA Envoy trusts, echo leaves with the names it
// checks), tokens are verified by jwt_authn, ext_authz calls reach the stand-in, and a
// request's clientIP reaches Envoy through the PROXY protocol (network RBAC on it), and
// geoip filters open the stand-in MaxMind databases (geolocation RBAC on them).
func TestTierStandIns(t *testing.T) {
	tier := startTier(t)
	for _, name := range []string{"backend-tls-policy", "jwt-gateway-shared-provider", "ext-authz", "client-validation",
		"oidc", "tcp-authorization", "authorization-geoip", "authorization-geoip-prerequisites"} {
		sc := find(t, name)
		o := tier.Run(context.Background(), sc, "v1.9", nil)
		replayed := 0
		for _, r := range o.Requests {
			if r.Replayed() {
				replayed++
			}
		}
		if !o.Passed() || replayed == 0 ||
			((name == "tcp-authorization" || strings.HasPrefix(name, "authorization-geoip")) && replayed != len(o.Requests)) {
			t.Errorf("%s: %s", name, o.Describe(true))
		}
	}
}
