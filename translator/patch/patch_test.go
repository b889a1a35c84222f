package patch

import (
	"encoding/json"
	"strings"
	"testing"

	egv1a1 "github.com/envoyproxy/gateway/api/v1alpha1"
	clusterv3 "github.com/envoyproxy/go-control-plane/envoy/config/cluster/v3"
	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	tlsv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/transport_sockets/tls/v3"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/durationpb"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"

	"github.com/egharness/egharness/translator/result"
)

func value(t *testing.T, v any) *apiextensionsv1.JSON {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return &apiextensionsv1.JSON{Raw: b}
}

func str(s string) *string { return &s }

func trustStore() *result.XDS {
	return &result.XDS{
		Secrets: []*tlsv3.Secret{{
			Name: SystemTrustStoreSecret,
			Type: &tlsv3.Secret_ValidationContext{ValidationContext: &tlsv3.CertificateValidationContext{
				TrustedCa: &corev3.DataSource{
					Specifier: &corev3.DataSource_Filename{Filename: "/etc/ssl/certs/ca-certificates.crt"}},
			}},
		}},
		Clusters: []*clusterv3.Cluster{{Name: "c", ConnectTimeout: durationpb.New(10e9)}},
	}
}

// EG refuses to patch the shared system trust store once it exists (SDS-03); the secret
// stays as generated.
func TestSystemTrustStoreIsNotPatched(t *testing.T) {
	x := trustStore()
	before := proto.Clone(x.Secrets[0])
	rec, st := newSnapshot(x, false).apply(egv1a1.EnvoyJSONPatchConfig{
		Type: egv1a1.SecretEnvoyResourceType, Name: SystemTrustStoreSecret,
		Operation: egv1a1.JSONPatchOperation{Op: "replace", Path: str("/validation_context/trusted_ca/filename"),
			Value: value(t, "/tmp/mine.pem")},
	})
	if rec.Hit || !strings.HasPrefix(rec.Reason, ReasonRefused+": ") ||
		!strings.Contains(st.err, "cannot be modified by patches") {
		t.Fatalf("got %+v / %+v, want a refusal", rec, st)
	}
	if !proto.Equal(before, x.Secrets[0]) {
		t.Fatalf("the trust store changed: %v", x.Secrets[0])
	}
}

// A failed operation leaves the resource exactly as it was, a good one changes it.
func TestFailedOperationLeavesResource(t *testing.T) {
	x := trustStore()
	s := newSnapshot(x, false)
	before := proto.Clone(x.Clusters[0])
	for _, op := range []egv1a1.JSONPatchOperation{
		{Op: "add", Path: str("/no_such_field"), Value: value(t, 1)},
		{Op: "replace", Path: str("/connect_timeout"), Value: value(t, "-5s")},
		{Op: "test", Path: str("/connect_timeout"), Value: value(t, "1s")},
		{Op: "move", From: str("/nowhere"), Path: str("/name")},
		{Op: "remove"},
	} {
		rec, _ := s.apply(egv1a1.EnvoyJSONPatchConfig{Type: egv1a1.ClusterEnvoyResourceType, Name: "c", Operation: op})
		if rec.Hit {
			t.Errorf("%s %v: a hit", op.Op, op.Path)
		}
		if !proto.Equal(before, x.Clusters[0]) {
			t.Fatalf("%s: the cluster changed to %v", op.Op, x.Clusters[0])
		}
	}
	rec, _ := s.apply(egv1a1.EnvoyJSONPatchConfig{Type: egv1a1.ClusterEnvoyResourceType, Name: "c",
		Operation: egv1a1.JSONPatchOperation{Op: "replace", Path: str("/name"), Value: value(t, "renamed")}})
	if !rec.Hit || x.Clusters[0].GetName() != "renamed" {
		t.Fatalf("rename: %+v, cluster %v", rec, x.Clusters[0])
	}
	// a later operation finds the resource by its new name
	rec, _ = s.apply(egv1a1.EnvoyJSONPatchConfig{Type: egv1a1.ClusterEnvoyResourceType, Name: "renamed",
		Operation: egv1a1.JSONPatchOperation{Op: "test", Path: str("/name"), Value: value(t, "renamed")}})
	if !rec.Hit {
		t.Fatalf("lookup by the new name: %+v", rec)
	}
}

func TestMissReasons(t *testing.T) {
	tests := []struct {
		name   string
		op     egv1a1.JSONPatchOperation
		reason string
	}{
		{"missing value", egv1a1.JSONPatchOperation{Op: "add", Path: str("/name")},
			ReasonInvalidOperation + ": the add operation requires a value"},
		{"no path at all", egv1a1.JSONPatchOperation{Op: "remove"},
			ReasonInvalidOperation + ": a patch operation must specify a path or jsonPath"},
		{"unknown op", egv1a1.JSONPatchOperation{Op: "merge", Path: str("/name")},
			ReasonInvalidOperation + ": unsupported JSONPatch operation"},
		{"missing key", egv1a1.JSONPatchOperation{Op: "remove", Path: str("/lb_policy")}, ReasonNoPath},
		{"bad index",
			egv1a1.JSONPatchOperation{Op: "replace", Path: str("/load_assignment/endpoints/4"),
				Value: value(t, map[string]any{})}, ReasonNoPath},
		{"test", egv1a1.JSONPatchOperation{Op: "test", Path: str("/name"), Value: value(t, "d")}, ReasonTestFailed},
		{"root only jsonPath", egv1a1.JSONPatchOperation{Op: "remove", JSONPath: str("$")},
			ReasonInvalidOperation + `: Cluster "c": unable to convert jsonPath`},
		{"jsonPath selects nothing", egv1a1.JSONPatchOperation{Op: "remove", JSONPath: str("$.load_assignment")},
			ReasonNoPath},
		{"unknown field", egv1a1.JSONPatchOperation{Op: "add", Path: str("/nope"), Value: value(t, true)},
			ReasonInvalidResult + `: Cluster "c" is no longer a Cluster`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rec, _ := newSnapshot(trustStore(), false).apply(
				egv1a1.EnvoyJSONPatchConfig{Type: egv1a1.ClusterEnvoyResourceType, Name: "c", Operation: tc.op})
			if rec.Hit || !strings.HasPrefix(rec.Reason, tc.reason) {
				t.Errorf("got %+v, want a miss starting %q", rec, tc.reason)
			}
		})
	}
}

// jsonPath locations become RFC 6901 pointers: "~" and "/" in keys are escaped, indexes
// are numbers, and path is appended with one slash.
func TestPointersOf(t *testing.T) {
	doc := []byte(`{"a":{"x/y":1,"t~":2},"v":[{"n":"p"},{"n":"q"}]}`)
	for _, tc := range []struct{ path, suffix, want string }{
		{"$.a['x/y']", "", "/a/x~1y"},
		{"$.a['t~']", "", "/a/t~0"},
		{"$.v[?(@.n == 'q')]", "n", "/v/1/n"},
		{"$.v[*]", "/extra", "/v/0/extra,/v/1/extra"},
	} {
		got, err := pointersOf(doc, tc.path, tc.suffix)
		if err != nil || strings.Join(got, ",") != tc.want {
			t.Errorf("%s + %q: got %v %v, want %s", tc.path, tc.suffix, got, err, tc.want)
		}
	}
}

// A whole resource added under a taken name replaces the generated one in what is
// published (one resource per name, the later), with a warning.
func TestDuplicateNameKeepsTheLater(t *testing.T) {
	x := trustStore()
	s := newSnapshot(x, false)
	rec, _ := s.apply(egv1a1.EnvoyJSONPatchConfig{Type: egv1a1.ClusterEnvoyResourceType,
		Operation: egv1a1.JSONPatchOperation{Op: "add", Path: str(""),
			Value: value(t, map[string]any{"name": "c", "connect_timeout": "3s"})}})
	if !rec.Hit {
		t.Fatalf("add: %+v", rec)
	}
	warnings := s.finish()
	if len(x.Clusters) != 1 || x.Clusters[0].GetConnectTimeout().AsDuration().Seconds() != 3 || len(warnings) != 1 {
		t.Fatalf("clusters %v, warnings %v", x.Clusters, warnings)
	}
}
