package xds

import (
	"testing"

	listenerv3 "github.com/envoyproxy/go-control-plane/envoy/config/listener/v3"
	"github.com/google/go-cmp/cmp"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/testing/protocmp"

	"github.com/egharness/egharness/translator/ir"
)

// TestOpenTelemetryAccessLogMatchesEG builds the listener access log of EG v1.9.1's xDS
// translator test case accesslog-otel-headers (its IR written as ours) and compares it
// with EG's output: body, attributes after the pod's, resource attributes, authority,
// headers as initial metadata, the NR filter at the listener.
func TestOpenTelemetryAccessLogMatchesEG(t *testing.T) {
	var want *listenerv3.Listener
	for _, d := range egDocs(t, "accesslog-otel-headers.listeners.yaml") {
		l := &listenerv3.Listener{}
		if err := protojson.Unmarshal(d, l); err != nil {
			t.Fatal(err)
		}
		if len(l.AccessLog) > 0 {
			want = l
			break
		}
	}
	if want == nil {
		t.Fatal("EG's case has no listener with access logs")
	}
	al := &ir.AccessLog{OpenTelemetry: []ir.OpenTelemetryAccessLog{{
		Body: "[%START_TIME%] \"%REQ(:METHOD)% %REQ(X-ENVOY-ORIGINAL-PATH?:PATH)% " +
			"%PROTOCOL%\" %RESPONSE_CODE%\n",
		Attributes:         []ir.KeyValue{{Key: "response_code", Value: "%RESPONSE_CODE%"}},
		ResourceAttributes: []ir.KeyValue{{Key: "cluster_name", Value: "cluster1"}},
		Authority:          "otel-collector.default.svc.cluster.local",
		Headers: []ir.KeyValue{{Key: "Authorization", Value: "Bearer my-api-key"},
			{Key: "X-Tenant-ID", Value: "tenant-123"}},
		Destination: &ir.Destination{Name: "accesslog-0", HTTP2: true},
	}}}
	got := accessLogs(al, logAtListener)
	if d := cmp.Diff(want.AccessLog, got, protocmp.Transform()); d != "" {
		t.Errorf("listener access log differs from EG's:\n%s", d)
	}
}

// TestAccessLogFilter: CEL matches, alone, several, and with the listener's NR filter.
func TestAccessLogFilter(t *testing.T) {
	if f := accessLogFilter(nil, false); f != nil {
		t.Errorf("no matches, no NR: got %v, want none", f)
	}
	if f := accessLogFilter(nil, true); f.GetResponseFlagFilter() == nil {
		t.Errorf("NR alone: got %v", f)
	}
	if f := accessLogFilter([]string{"a"}, false); f.GetExtensionFilter().GetName() != celLogFilter {
		t.Errorf("one match: got %v", f)
	}
	f := accessLogFilter([]string{"a", "b"}, true)
	fs := f.GetAndFilter().GetFilters()
	if len(fs) != 3 || fs[0].GetExtensionFilter() == nil || fs[1].GetExtensionFilter() == nil ||
		fs[2].GetResponseFlagFilter() == nil {
		t.Errorf("two matches and NR: got %v", f)
	}
}
