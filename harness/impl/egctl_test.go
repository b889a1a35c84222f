package impl

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	egv1a1 "github.com/envoyproxy/gateway/api/v1alpha1"

	"github.com/egharness/egharness/harness/facts"
	"github.com/egharness/egharness/translator"
	"github.com/egharness/egharness/translator/config"
	"github.com/egharness/egharness/translator/profile"
	"github.com/egharness/egharness/translator/resource"
)

// testdata/egctl-v1.9.1 holds inputs and what real egctl v1.9.1 printed for them
// (`egctl x translate -f X.in.yaml --to gateway-api,xds -o json`). Read back, the output
// agrees with the reference on every fact: the statuses, the listeners and their filter
// chains, the route order and actions, the clusters.
func TestReadEgctlOutputAgreesWithReference(t *testing.T) {
	for _, name := range []string{"weighted-canary", "https-listeners-share-port"} {
		t.Run(name, func(t *testing.T) {
			dir := filepath.Join("testdata", "egctl-v1.9.1")
			in, err := os.ReadFile(filepath.Join(dir, name+".in.yaml"))
			if err != nil {
				t.Fatal(err)
			}
			out, err := os.ReadFile(filepath.Join(dir, name+".out.json"))
			if err != nil {
				t.Fatal(err)
			}
			got, err := ReadEgctlOutput(out)
			if err != nil {
				t.Fatal(err)
			}
			dec, err := resource.Decode(name+".in.yaml", in, resource.Options{DefaultNamespace: "default"})
			if err != nil {
				t.Fatal(err)
			}
			p, _ := profile.Get("v1.9")
			ref, err := translator.Translate(translator.Input{Objects: dec.Objects, Profile: p})
			if err != nil {
				t.Fatal(err)
			}
			o := facts.Options{NoAdmission: true, NoSecrets: true}
			want, have := facts.Of(ref, o), facts.Of(got, o)
			if len(have) < 10 {
				t.Fatalf("only %d facts read from egctl's output: %v", len(have), have)
			}
			for _, d := range facts.Compare(want, have) {
				t.Errorf("%s", d)
			}
			// The proxy's readiness listener is in egctl's LDS and is read like the others.
			ready := false
			for _, l := range got.XDS.Listeners {
				ready = ready || l.GetName() == "envoy-gateway-proxy-ready-0.0.0.0-19003"
			}
			if !ready {
				t.Errorf("the readiness listener was not read from egctl's output")
			}
		})
	}
}

func TestReadEgctlOutputErrors(t *testing.T) {
	for in, want := range map[string]string{
		`not json`:        "its output is not egctl's JSON",
		`{"gateways": 3}`: "gateways:",
		`{"xds": {"default/eg": {"configs": [{"@type": "type.googleapis.com/envoy.admin.v3.ClustersConfigDump", ` +
			`"dynamicActiveClusters": [{"nope": 1}]}]}}}`: "no cluster",
		`{"xds": {"default/eg": {"configs": [{"@type": "type.googleapis.com/envoy.admin.v3.ClustersConfigDump", ` +
			`"dynamicActiveClusters": [{"cluster": {"name": 5}}]}]}}}`: "dynamicActiveClusters[0]",
	} {
		if _, err := ReadEgctlOutput([]byte(in)); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: error %v, want one containing %q", in, err, want)
		}
	}
}

// A typed config this binary does not link in is kept as a Struct, with a warning, and the
// names around it still decode.
func TestReadEgctlOutputUnknownType(t *testing.T) {
	dump := map[string]any{"xds": map[string]any{"default/eg": map[string]any{"configs": []any{map[string]any{
		"@type": "type.googleapis.com/envoy.admin.v3.ClustersConfigDump",
		"dynamicActiveClusters": []any{map[string]any{"cluster": map[string]any{
			"@type": "type.googleapis.com/envoy.config.cluster.v3.Cluster",
			"name":  "c1",
			"typedExtensionProtocolOptions": map[string]any{"x": map[string]any{
				"@type": "type.googleapis.com/vendor.v1.Secret", "knob": 3}},
		}}},
	}}}}}
	b, _ := json.Marshal(dump)
	res, err := ReadEgctlOutput(b)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.XDS.Clusters) != 1 || res.XDS.Clusters[0].GetName() != "c1" {
		t.Fatalf("clusters: %v", res.XDS.Clusters)
	}
	if len(res.Warnings) != 1 || !strings.Contains(res.Warnings[0], "vendor.v1.Secret") {
		t.Errorf("warnings: %q", res.Warnings)
	}
}

func TestOpenEgctl(t *testing.T) {
	dir := t.TempDir()
	_, err := OpenEgctl("v1.9.1", Options{PeersDir: dir})
	var ni *NotInstalledError
	if err == nil || !errors.As(err, &ni) {
		t.Fatalf("error %v, want NotInstalledError", err)
	}
	for _, want := range []string{"egctl@v1.9.1 is not installed", "make peers",
		"GOBIN=" + dir + "/egctl-v1.9.1 go install github.com/envoyproxy/gateway/cmd/egctl@v1.9.1"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("%q lacks %q", err, want)
		}
	}
	if _, err := OpenEgctl("v1.8.0", Options{PeersDir: dir}); err == nil ||
		!strings.Contains(err.Error(), "go install -tags exclude_graphdriver_btrfs") {
		t.Errorf("v1.8.0's install command lacks its tags: %v", err)
	}
	for _, bad := range []string{"latest", "v1.7.0"} {
		if _, err := OpenEgctl(bad, Options{PeersDir: dir}); err == nil || strings.Contains(err.Error(), "not installed") {
			t.Errorf("egctl@%s: %v", bad, err)
		}
	}
	bin := filepath.Join(dir, "egctl-v1.9.1", "egctl")
	if err := os.MkdirAll(filepath.Dir(bin), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bin, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	e, err := Open("egctl@v1.9.1", Options{PeersDir: dir})
	if err != nil || e.Name() != "egctl@v1.9.1" || CapabilitiesOf(e).Golden {
		t.Fatalf("Open: %v, %v", e, err)
	}
	if e.(*Egctl).Profile != "v1.9" {
		t.Errorf("profile %s", e.(*Egctl).Profile)
	}
}

func TestEgctlSkips(t *testing.T) {
	e := &Egctl{Version: "v1.9.1", Profile: "v1.9"}
	base := request(t)
	backend := `apiVersion: gateway.envoyproxy.io/v1alpha1
kind: Backend
metadata: {name: partner, namespace: default}
spec: {endpoints: [{fqdn: {hostname: partner.example.com, port: 443}}]}
`
	dec, err := resource.Decode("b.yaml", []byte(backend), resource.Options{})
	if err != nil {
		t.Fatal(err)
	}
	v18, _ := profile.Get("v1.8")
	tests := map[string]struct {
		mod  func(r *Request)
		want string
	}{
		"other profile": {func(r *Request) { r.Profile = v18 }, "profile v1.8 is not its own"},
		"runtime flags": {func(r *Request) {
			r.Config.RuntimeFlags = &egv1a1.RuntimeFlags{Enabled: []egv1a1.RuntimeFlag{"XDSNameSchemeV2"}}
		}, "no runtime flags"},
		"merge gateways": {func(r *Request) { r.Config.MergeGateways = true }, "mergeGateways"},
		"sds secret refs": {func(r *Request) {
			r.Config = config.Config{ExtensionAPIs: &egv1a1.ExtensionAPISettings{EnableSDSSecretRef: true}}
		}, "enableSDSSecretRef"},
		"backend off": {func(r *Request) {
			r.Config = config.Config{}
			r.Objects = append(r.Objects, dec.Objects...)
		}, "Backend/default/partner (enableBackend is off)"},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			r := base
			r.Objects = append(r.Objects[:0:0], base.Objects...)
			tt.mod(&r)
			_, err := e.Translate(context.Background(), r)
			if why := Skipped(err); !strings.Contains(why, tt.want) {
				t.Errorf("skip reason %q (error %v), want one containing %q", why, err, tt.want)
			}
		})
	}
	// Backend enabled: expressible (the translation itself then fails here, there being no
	// binary, but not as a skip).
	r := base
	r.Config = config.Config{ExtensionAPIs: &egv1a1.ExtensionAPISettings{EnableBackend: true}}
	r.Objects = append(append(r.Objects[:0:0], base.Objects...), dec.Objects...)
	if _, err := e.Translate(context.Background(), r); Skipped(err) != "" {
		t.Errorf("skipped with Backend enabled: %v", err)
	}
}

// egctl applies no CRD default to a field the input sets to null, so the input it gets
// carries no nulls: a healthCheck without a timeout reaches it without a timeout key.
func TestEgctlInputDropsNulls(t *testing.T) {
	btp := &egv1a1.BackendTrafficPolicy{}
	btp.APIVersion, btp.Kind = egv1a1.GroupVersion.String(), egv1a1.KindBackendTrafficPolicy
	btp.Name, btp.Namespace = "hc", "default"
	btp.Spec.HealthCheck = &egv1a1.HealthCheck{Active: &egv1a1.ActiveHealthCheck{Type: egv1a1.ActiveHealthCheckerTypeTCP}}
	in, err := egctlInput([]resource.Object{{Obj: btp}})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(in), "null") || strings.Contains(string(in), "timeout") {
		t.Errorf("nulls left in egctl's input:\n%s", in)
	}
	if !strings.Contains(string(in), "type: TCP") {
		t.Errorf("the set fields must stay:\n%s", in)
	}
}
