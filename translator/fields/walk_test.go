package fields

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/egharness/egharness/translator/resource"
)

func object(t *testing.T, kind, ns, name, spec string) resource.Object {
	t.Helper()
	raw := `{"apiVersion":"x/v1","kind":"` + kind + `","metadata":{"name":"` + name +
		`","namespace":"` + ns + `"},"spec":` + spec + `}`
	var m map[string]any
	if err := json.Unmarshal([]byte(raw), &m); err != nil {
		t.Fatal(err)
	}
	return resource.Object{Kind: kind, Obj: &unstructured.Unstructured{Object: m}, Raw: []byte(raw)}
}

func paths(gs []Gap) []string {
	var out []string
	for _, g := range gs {
		out = append(out, g.Object.String()+" "+g.Path)
	}
	return out
}

func TestGaps(t *testing.T) {
	objs := []resource.Object{
		// handled fields only: nothing to say
		object(t, "BackendTrafficPolicy", "default", "quiet",
			`{"targetRefs":[{"group":"gateway.networking.k8s.io","kind":"HTTPRoute","name":"r"}],`+
				`"timeout":{"http":{"requestTimeout":"5s"}},"retry":{"numRetries":3}}`),
		// three gaps, one of them set in two list elements; a null is not set
		object(t, "BackendTrafficPolicy", "default", "p",
			`{"admissionControl":{"samplingWindow":"30s"},"httpUpgrade":[{"type":"websocket"},{"type":"spdy/3.1"}],"dns":null,`+
				`"timeout":{"http":{"requestTimeout":"1s","maxStreamDuration":"9s"}}}`),
		// a gap below lists: one per object and path
		object(t, "HTTPRoute", "ns", "r",
			`{"rules":[{"sessionPersistence":{"sessionName":"a"}},{"name":"x","sessionPersistence":{"sessionName":"b"}}]}`),
		// a field the registry does not know (another release's CRD)
		object(t, "Backend", "default", "b", `{"endpoints":[{"ip":{"address":"10.0.0.1","port":80}}],"futureField":true}`),
		// no-effect fields and map values below them say nothing
		object(t, "Gateway", "default", "g",
			`{"gatewayClassName":"eg","infrastructure":{"labels":{"a":"b"}},"listeners":[{"name":"h",`+
				`"port":80,"protocol":"HTTP"}]}`),
		// a kind the registry does not have is not read
		object(t, "Service", "default", "s", `{"clusterIP":"10.0.0.1"}`),
	}
	got := paths(Gaps(objs))
	want := []string{
		"Backend/default/b spec.futureField",
		"BackendTrafficPolicy/default/p spec.admissionControl",
		"BackendTrafficPolicy/default/p spec.httpUpgrade",
		"BackendTrafficPolicy/default/p spec.timeout.http.maxStreamDuration",
		"HTTPRoute/ns/r spec.rules[].sessionPersistence",
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("gaps:\n got %q\nwant %q", got, want)
	}
	// the same input twice gives the same list (sorted, each once)
	if again := paths(Gaps(append(objs, objs...))); !reflect.DeepEqual(again, want) {
		t.Fatalf("gaps of the input twice: %q", again)
	}
	ws := Warnings(objs[1:2])
	if len(ws) != 3 ||
		ws[0] != "BackendTrafficPolicy default/p: spec.admissionControl is not translated; EG v1.9 would add an "+
			"envoy.filters.http.admission_control filter" {
		t.Fatalf("warnings: %q", ws)
	}
	if w := Gaps(objs[3:4])[0].Warning(); !strings.Contains(w,
		"spec.futureField is not known to the reference translator") {
		t.Fatalf("unknown field warning: %q", w)
	}
	if n := Gaps(objs[1:2])[0].Note(); !strings.HasPrefix(n,
		"BackendTrafficPolicy default/p: spec.admissionControl is not translated by the reference translator, so its "+
			"effect is not compared (EG v1.9 would add") {
		t.Fatalf("note: %q", n)
	}
}

func TestCompactRoundTrip(t *testing.T) {
	in := []string{"spec.a.b", "spec.a.c[].d", "spec.a.c[].e", "spec.f", "spec.g.*.h"}
	c := Compact(in)
	if c != "spec{a{b,c[]{d,e}},f,g.*.h}" {
		t.Fatalf("compact: %s", c)
	}
	if out := expand(c); !reflect.DeepEqual(out, in) {
		t.Fatalf("expand(%s) = %q", c, out)
	}
}
