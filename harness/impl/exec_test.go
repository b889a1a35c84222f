package impl

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	egv1a1 "github.com/envoyproxy/gateway/api/v1alpha1"

	"github.com/egharness/egharness/internal/testutil"
	"github.com/egharness/egharness/translator"
	"github.com/egharness/egharness/translator/config"
	"github.com/egharness/egharness/translator/resource"
)

const objects = testutil.Gateway

func request(t *testing.T) Request {
	t.Helper()
	objs, p := testutil.DecodeV19(t, "in.yaml", objects)
	on := true
	return Request{Scenario: "demo", Objects: objs, Profile: p,
		Config: config.Config{ExtensionAPIs: &egv1a1.ExtensionAPISettings{EnableEnvoyPatchPolicy: on}}}
}

// The input an external command reads decodes back into the same objects and settings.
func TestInputRoundTrip(t *testing.T) {
	req := request(t)
	in, err := Input(req)
	if err != nil {
		t.Fatal(err)
	}
	dec, err := resource.Decode("stdin", in, resource.Options{})
	if err != nil {
		t.Fatalf("the rendered input does not decode: %v\n%s", err, in)
	}
	if len(dec.Objects) != len(req.Objects) {
		t.Fatalf("%d objects back, want %d", len(dec.Objects), len(req.Objects))
	}
	for i := range dec.Objects {
		if dec.Objects[i].Ref() != req.Objects[i].Ref() {
			t.Errorf("object %d is %s, want %s", i, dec.Objects[i].Ref(), req.Objects[i].Ref())
		}
	}
	if dec.EnvoyGateway == nil || dec.EnvoyGateway.ExtensionAPIs == nil ||
		!dec.EnvoyGateway.ExtensionAPIs.EnableEnvoyPatchPolicy {
		t.Errorf("the EnvoyGateway settings did not come through: %+v", dec.EnvoyGateway)
	}
}

func TestExecAnswer(t *testing.T) {
	req := request(t)
	res, err := translator.Translate(translator.Input{Objects: req.Objects, Profile: req.Profile})
	if err != nil {
		t.Fatal(err)
	}
	js, err := json.Marshal(res)
	if err != nil {
		t.Fatal(err)
	}
	// The command echoes a reference translation and checks what it was given.
	cmd := `test "$EGHARNESS_PROFILE" = v1.9 && test "$EGHARNESS_SCENARIO" = demo && test "$EGHARNESS_MERGE_GATEWAYS" = ` +
		`false && grep -q 'kind: Gateway' && echo '` + string(
		js) + `'`
	got, err := Exec{Command: cmd}.Translate(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	// A scenario that merges Gateways says so in the environment.
	merged := req
	merged.Config.MergeGateways = true
	mergeCheck := `test "$EGHARNESS_MERGE_GATEWAYS" = true && cat >/dev/null && echo '` + string(js) + `'`
	if _, err := (Exec{Command: mergeCheck}).Translate(context.Background(), merged); err != nil {
		t.Errorf("EGHARNESS_MERGE_GATEWAYS not true for a merging scenario: %v", err)
	}
	// the Gateway's listener and the proxy's readiness listener
	if len(got.XDS.Listeners) != 2 || got.XDS.Listeners[0].GetName() != "default/eg/http" ||
		got.XDS.Listeners[1].GetName() != "envoy-gateway-proxy-ready-0.0.0.0-19003" {
		t.Errorf("listeners read back: %v", got.XDS.Listeners)
	}
	if got.Status(res.Statuses[0].Object) == nil {
		t.Errorf("statuses were not read back: %+v", got.Statuses)
	}
}

func TestExecFailures(t *testing.T) {
	req := request(t)
	tests := []struct {
		name, cmd, want string
		timeout         time.Duration
	}{
		{"non-zero exit with stderr", "cat >/dev/null; echo 'cannot translate HTTPRoute x' >&2; exit 4",
			"exit status 4\ncannot translate HTTPRoute x", 0},
		{"not JSON", "cat >/dev/null; echo hello", "its output is not the translate -o json shape", 0},
		{"unknown field", `cat >/dev/null; echo '{"listeners": []}'`, `unknown field "listeners"`, 0},
		{"bad xDS", `cat >/dev/null; echo '{"xds": {"listeners": [{"@type": "type.googleapis.com/nope.Nothing"}]}}'`,
			"xds.listeners[0]", 0},
		{"timeout", "sleep 5", "no answer within 200ms", 200 * time.Millisecond},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Exec{Command: tt.cmd, Timeout: tt.timeout}.Translate(context.Background(), req)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %v, want one containing %q", err, tt.want)
			}
		})
	}
}

// An implementation that prints without end is stopped at the output limit, with the flag
// that raises it, well before its timeout.
func TestExecOutputLimit(t *testing.T) {
	req := request(t)
	start := time.Now()
	_, err := Exec{Command: "cat >/dev/null; yes", Limits: resource.Limits{MaxFileSize: 64 << 10}}.Translate(
		context.Background(), req)
	want := "exec:cat >/dev/null; yes: its standard output: it printed more than the file size limit of 64 KiB " +
		"(raise it with --max-file-size)"
	if err == nil || err.Error() != want {
		t.Fatalf("error %v\nwant %s", err, want)
	}
	if d := time.Since(start); d > 30*time.Second {
		t.Errorf("stopping took %s", d)
	}
	// Under the limit, the same output size is fine.
	res, err := translator.Translate(translator.Input{Objects: req.Objects, Profile: req.Profile})
	if err != nil {
		t.Fatal(err)
	}
	js, _ := json.Marshal(res)
	if _, err := (Exec{Command: "cat >/dev/null; echo '" + string(js) + "'",
		Limits: resource.Limits{MaxFileSize: int64(len(js) + 1)}}).Translate(context.Background(), req); err != nil {
		t.Errorf("an output within the limit was refused: %v", err)
	}
}

func TestGet(t *testing.T) {
	for name, want := range map[string]string{"": "reference", "reference": "reference",
		"exec:./adapter --x": "exec:./adapter --x"} {
		im, err := Get(name)
		if err != nil || im.Name() != want {
			t.Errorf("Get(%q) = %v, %v; want %s", name, im, err, want)
		}
	}
	for _, bad := range []string{"exec:", "exec:  ", "egctl"} {
		if _, err := Get(bad); err == nil {
			t.Errorf("Get(%q) accepted", bad)
		}
	}
}

// Exit status 3 says the command cannot express the scenario: a skip with its reason.
func TestExecCannotExpress(t *testing.T) {
	req := request(t)
	_, err := Exec{Command: "cat >/dev/null; echo 'some log' >&2; echo 'no runtime flags here' >&2; exit 3"}.Translate(
		context.Background(), req)
	if why := Skipped(err); why != "no runtime flags here" {
		t.Errorf("skip reason %q (error %v)", why, err)
	}
	caps, err := ParseCapabilities([]string{"no-admission", "no-secrets"})
	if err != nil || !caps.NoAdmission || !caps.OmitsPart("secrets") || caps.OmitsPart("warnings") {
		t.Errorf("ParseCapabilities: %+v, %v", caps, err)
	}
	if _, err := ParseCapabilities([]string{"no-xds"}); err == nil {
		t.Errorf("an unknown capability was accepted")
	}
	im, _ := Open("exec:x", Options{Caps: caps})
	if !CapabilitiesOf(im).NoAdmission {
		t.Errorf("exec: does not carry its capabilities")
	}
}
