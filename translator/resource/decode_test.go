package resource_test

import (
	"fmt"
	"reflect"
	"runtime"
	"sort"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	gwapiv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/egharness/egharness/translator/resource"
)

// errLines splits a joined error (joins nest: one per bad document, one per problem) into
// its messages.
func errLines(err error) []string {
	if err == nil {
		return nil
	}
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		var out []string
		for _, e := range j.Unwrap() {
			out = append(out, errLines(e)...)
		}
		return out
	}
	return []string{err.Error()}
}

func decode(t *testing.T, text string, opts resource.Options) (resource.Decoded, []string) {
	t.Helper()
	dec, err := resource.Decode("in.yaml", []byte(text), opts)
	errs := errLines(err)
	if opts.StrictTypes {
		// What strict reading finds in a CRD kind's object is on the object.
		for _, o := range dec.Objects {
			errs = append(errs, errLines(o.DecodeErr)...)
		}
	}
	return dec, errs
}

func oneError(t *testing.T, errs []string) string {
	t.Helper()
	if len(errs) != 1 {
		t.Fatalf("got %d errors %q, want 1", len(errs), errs)
	}
	return errs[0]
}

const (
	service = "apiVersion: v1\nkind: Service\nmetadata: {name: app, namespace: apps}\nspec: {ports: [{port: 8080}]}\n"
	gwClass = "apiVersion: gateway.networking.k8s.io/v1\nkind: GatewayClass\nmetadata: {name: eg}\n" +
		"spec: {controllerName: gateway.envoyproxy.io/gatewayclass-controller}\n"
)

func TestDecodeObjects(t *testing.T) {
	text := gwClass + "---\n" + service + "---\n" +
		"apiVersion: gateway.networking.k8s.io/v1\nkind: HTTPRoute\nmetadata: {name: r, namespace: apps}\nspec:\n" +
		"  hostnames: [a.example.com]\n"
	dec, errs := decode(t, text, resource.Options{})
	if len(errs) > 0 {
		t.Fatalf("errors: %q", errs)
	}
	if len(dec.Objects) != 3 {
		t.Fatalf("got %d objects, want 3", len(dec.Objects))
	}
	want := []struct {
		ref  string
		line int
	}{{"GatewayClass/eg", 1}, {"Service/apps/app", 6}, {"HTTPRoute/apps/r", 11}}
	for i, w := range want {
		o := dec.Objects[i]
		if o.Ref().String() != w.ref || o.Line != w.line || o.File != "in.yaml" {
			t.Errorf("object %d = %s at %s:%d, want %s at line %d", i, o.Ref(), o.File, o.Line, w.ref, w.line)
		}
	}
	if _, ok := dec.Objects[0].Obj.(*gwapiv1.GatewayClass); !ok {
		t.Errorf("GatewayClass decoded into %T", dec.Objects[0].Obj)
	}
	svc, ok := dec.Objects[1].Obj.(*corev1.Service)
	if !ok || len(svc.Spec.Ports) != 1 || svc.Spec.Ports[0].Port != 8080 {
		t.Errorf("Service decoded into %T %+v", dec.Objects[1].Obj, dec.Objects[1].Obj)
	}
	r, ok := dec.Objects[2].Obj.(*gwapiv1.HTTPRoute)
	if !ok || len(r.Spec.Hostnames) != 1 || r.Spec.Hostnames[0] != "a.example.com" {
		t.Errorf("HTTPRoute decoded into %T %+v", dec.Objects[2].Obj, dec.Objects[2].Obj)
	}
	if dec.Objects[1].Where() != "in.yaml:6" {
		t.Errorf("Where() = %q, want in.yaml:6", dec.Objects[1].Where())
	}
	if dec.Objects[1].APIVersion != "v1" || dec.Objects[1].Kind != "Service" {
		t.Errorf("APIVersion/Kind = %q/%q", dec.Objects[1].APIVersion, dec.Objects[1].Kind)
	}
}

func TestDecodeUnknownKind(t *testing.T) {
	text := service + "---\napiVersion: v1\nkind: Pod\nmetadata: {name: web, namespace: apps}\n"
	dec, errs := decode(t, text, resource.Options{})
	msg := oneError(t, errs)
	if !strings.HasPrefix(msg, `in.yaml:6: Pod apps/web: unknown kind "Pod" in "v1"`) {
		t.Errorf("error %q does not name file:line and the object", msg)
	}
	if !strings.Contains(msg, "HTTPRoute") || !strings.Contains(msg, "Service") {
		t.Errorf("error %q does not list the known kinds", msg)
	}
	if len(dec.Objects) != 1 || dec.Objects[0].Ref().String() != "Service/apps/app" {
		t.Errorf("the good Service was not returned next to the bad Pod: %v", dec.Objects)
	}
}

func TestDecodeUnknownGroupKind(t *testing.T) {
	text := "apiVersion: gateway.networking.k8s.io/v1\nkind: HTTPRouteList\nmetadata: {name: x}\n"
	_, errs := decode(t, text, resource.Options{StrictTypes: true})
	if msg := oneError(t, errs); !strings.HasPrefix(msg, `in.yaml:1: HTTPRouteList x: unknown kind "HTTPRouteList"`) {
		t.Errorf("error %q", msg)
	}
}

func TestDecodeSkipUnknownKinds(t *testing.T) {
	text := "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web}\n---\n" + service
	dec, errs := decode(t, text, resource.Options{SkipUnknownKinds: true})
	if len(errs) != 0 {
		t.Fatalf("errors %q, want none with SkipUnknownKinds", errs)
	}
	if len(dec.Notes) != 1 ||
		dec.Notes[0] != "in.yaml:1: skipped Deployment web (apps/v1): not a kind egharness translates" {
		t.Errorf("notes = %q", dec.Notes)
	}
	if len(dec.Objects) != 1 || dec.Objects[0].Line != 5 {
		t.Errorf("objects = %v, want the Service at line 5", dec.Objects)
	}
}

func TestDecodeDuplicateObject(t *testing.T) {
	text := service + "---\n" + gwClass + "---\n" + service
	dec, errs := decode(t, text, resource.Options{})
	msg := oneError(t, errs)
	if msg != "in.yaml:11: Service/apps/app: duplicate object (first defined at line 1)" {
		t.Errorf("error %q, want both lines", msg)
	}
	if len(dec.Objects) != 2 {
		t.Errorf("got %d objects, want the first Service and the GatewayClass", len(dec.Objects))
	}
}

// Objects without a namespace go to "default", so a second one written with it collides.
func TestDecodeDuplicateAfterDefaulting(t *testing.T) {
	text := "apiVersion: v1\nkind: Service\nmetadata: {name: app}\n---\napiVersion: v1\nkind: Service\n" +
		"metadata: {name: app, namespace: default}\n"
	_, errs := decode(t, text, resource.Options{})
	if msg := oneError(t, errs); msg != "in.yaml:5: Service/default/app: duplicate object (first defined at line 1)" {
		t.Errorf("error %q", msg)
	}
}

func TestDecodeMissingName(t *testing.T) {
	text := "apiVersion: v1\nkind: Service\nmetadata: {namespace: apps}\n"
	_, errs := decode(t, text, resource.Options{})
	if msg := oneError(t, errs); msg != "in.yaml:1: Service: metadata.name is required" {
		t.Errorf("error %q", msg)
	}
}

func TestDecodeMissingKind(t *testing.T) {
	text := "apiVersion: v1\nmetadata: {name: app}\n"
	_, errs := decode(t, text, resource.Options{})
	if msg := oneError(t, errs); msg != "in.yaml:1: app: apiVersion and kind are required" {
		t.Errorf("error %q", msg)
	}
}

func TestDecodeClusterScopedWithNamespace(t *testing.T) {
	text := "apiVersion: gateway.networking.k8s.io/v1\nkind: GatewayClass\nmetadata: {name: eg, namespace: apps}\n" +
		"spec: {controllerName: x.io/y}\n"
	dec, errs := decode(t, text, resource.Options{StrictTypes: true})
	if msg := oneError(t,
		errs); msg != "in.yaml:1: GatewayClass apps/eg: GatewayClass is cluster-scoped and takes no namespace" {
		t.Errorf("error %q", msg)
	}
	// It is returned, as the API server would take it (namespace cleared), carrying why.
	if len(dec.Objects) != 1 || dec.Objects[0].Ref().String() != "GatewayClass/eg" || dec.Objects[0].DecodeErr == nil {
		t.Errorf("objects %v, want the GatewayClass without its namespace and its problem", dec.Objects)
	}
}

func TestDecodeClusterScopedKeepsNoNamespace(t *testing.T) {
	dec, errs := decode(t, gwClass, resource.Options{DefaultNamespace: "envoy-gateway-system"})
	if len(errs) != 0 {
		t.Fatal(errs)
	}
	if ns := dec.Objects[0].Obj.GetNamespace(); ns != "" {
		t.Errorf("GatewayClass got namespace %q", ns)
	}
	if dec.Objects[0].Ref().String() != "GatewayClass/eg" {
		t.Errorf("ref %s", dec.Objects[0].Ref())
	}
}

func TestDecodeDefaultNamespace(t *testing.T) {
	text := "apiVersion: v1\nkind: Service\nmetadata: {name: app}\n"
	tests := []struct {
		opts resource.Options
		want string
	}{
		{resource.Options{}, "default"},
		{resource.Options{DefaultNamespace: "envoy-gateway-system"}, "envoy-gateway-system"},
	}
	for _, tt := range tests {
		dec, errs := decode(t, text, tt.opts)
		if len(errs) != 0 {
			t.Fatal(errs)
		}
		if got := dec.Objects[0].Obj.GetNamespace(); got != tt.want {
			t.Errorf("DefaultNamespace %q: namespace %q, want %q", tt.opts.DefaultNamespace, got, tt.want)
		}
		if got := dec.Objects[0].Ref().String(); got != "Service/"+tt.want+"/app" {
			t.Errorf("ref %q", got)
		}
	}
	// A namespace that is written is kept.
	dec, _ := decode(t, service, resource.Options{DefaultNamespace: "other"})
	if got := dec.Objects[0].Obj.GetNamespace(); got != "apps" {
		t.Errorf("written namespace replaced by %q", got)
	}
}

func TestDecodeLineOffset(t *testing.T) {
	text := service + "---\n" +
		"apiVersion: v1\nkind: Service\nmetadata: {name: other}\nspec:\n  ports:\n  - port: 80\n    bogus: 1\n"
	dec, errs := decode(t, text, resource.Options{LineOffset: 20})
	msg := oneError(t, errs)
	// The second document starts on line 6; its bogus field is on line 12.
	if msg != `in.yaml:32: Service other: unknown field "spec.ports[0].bogus"` {
		t.Errorf("error %q, want line 12 + offset 20", msg)
	}
	if len(dec.Objects) != 1 || dec.Objects[0].Line != 21 {
		t.Errorf("objects %v, want the first Service at line 21", dec.Objects)
	}
}

func TestDecodeStrictFieldErrors(t *testing.T) {
	text := "apiVersion: gateway.networking.k8s.io/v1\nkind: Gateway\nmetadata: {name: g}\nspec:\n" +
		"  gatewayClassName: eg\n  listeners:\n  - name: http\n    protocol: HTTP\n    port: 80\n    bogus: 1\n" +
		"  extra: true\n"
	_, errs := decode(t, text, resource.Options{StrictTypes: true})
	if len(errs) != 2 {
		t.Fatalf("errors %q, want 2", errs)
	}
	sort.Strings(errs)
	want := []string{
		`in.yaml:10: Gateway g: unknown field "spec.listeners[0].bogus"`,
		`in.yaml:11: Gateway g: unknown field "spec.extra"`,
	}
	for i := range want {
		if errs[i] != want[i] {
			t.Errorf("error %d = %q, want %q", i, errs[i], want[i])
		}
	}
}

func TestDecodeTypeError(t *testing.T) {
	text := service + "---\napiVersion: gateway.networking.k8s.io/v1\nkind: HTTPRoute\nmetadata: {name: r}\nspec:\n" +
		"  hostnames: a.example.com\n"
	_, errs := decode(t, text, resource.Options{StrictTypes: true})
	msg := oneError(t, errs)
	if !strings.HasPrefix(msg, "in.yaml:10: HTTPRoute r: cannot unmarshal string") {
		t.Errorf("error %q, want line 10 (hostnames)", msg)
	}
}

func TestDecodeSyntaxErrorLine(t *testing.T) {
	text := service + "---\napiVersion: v1\nkind: Service\nmetadata: {name: x}\nspec: [\n"
	dec, errs := decode(t, text, resource.Options{LineOffset: 3})
	msg := oneError(t, errs)
	if !strings.HasPrefix(msg, "in.yaml:") || !strings.Contains(msg, "malformed YAML") {
		t.Fatalf("error %q", msg)
	}
	// The bad document runs from line 6 to line 9 (+3): the error must point inside it.
	var line int
	if _, err := fmt.Sscanf(msg, "in.yaml:%d:", &line); err != nil || line < 9 || line > 12 {
		t.Errorf("error %q points at line %d, want one of 9..12", msg, line)
	}
	if len(dec.Objects) != 1 {
		t.Errorf("good document not returned: %v", dec.Objects)
	}
}

// The duplicate key error should name the file line like every other decoding error.
func TestDecodeDuplicateKeyLine(t *testing.T) {
	text := service + "---\napiVersion: v1\nkind: Service\nmetadata:\n  name: a\n  name: b\n"
	_, errs := decode(t, text, resource.Options{})
	msg := oneError(t, errs)
	if !strings.HasPrefix(msg, "in.yaml:10: ") {
		t.Errorf("error %q, want it to start with in.yaml:10: (the second name:)", msg)
	}
}

func TestDecodeEnvoyGateway(t *testing.T) {
	eg := "apiVersion: gateway.envoyproxy.io/v1alpha1\nkind: EnvoyGateway\nextensionApis: {enableEnvoyPatchPolicy: true}\n"
	dec, errs := decode(t, service+"---\n"+eg, resource.Options{})
	if len(errs) != 0 {
		t.Fatal(errs)
	}
	if dec.EnvoyGateway == nil || dec.EnvoyGateway.ExtensionAPIs == nil ||
		!dec.EnvoyGateway.ExtensionAPIs.EnableEnvoyPatchPolicy {
		t.Fatalf("EnvoyGateway = %+v", dec.EnvoyGateway)
	}
	if len(dec.Objects) != 1 || dec.Objects[0].Kind != "Service" {
		t.Errorf("the EnvoyGateway document is among Objects: %v", dec.Objects)
	}

	dec, errs = decode(t, eg+"---\n"+service+"---\n"+eg, resource.Options{})
	if msg := oneError(t, errs); msg != "in.yaml:10: EnvoyGateway: a second EnvoyGateway configuration document" {
		t.Errorf("error %q", msg)
	}
	if dec.EnvoyGateway == nil || len(dec.Objects) != 1 {
		t.Errorf("the first EnvoyGateway and the Service should still be returned: %+v", dec)
	}

	_, errs = decode(t, eg+"bogus: 1\n", resource.Options{LineOffset: 2})
	if msg := oneError(t, errs); msg != `in.yaml:6: EnvoyGateway: unknown field "bogus"` {
		t.Errorf("error %q", msg)
	}
}

func TestDecodeEveryBadDocumentReported(t *testing.T) {
	text := "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\n---\n" + service + "---\napiVersion: v1\nkind: Service\n" +
		"metadata: {namespace: x}\n---\n" + gwClass
	dec, errs := decode(t, text, resource.Options{})
	if len(errs) != 2 {
		t.Fatalf("errors %q, want 2", errs)
	}
	if !strings.HasPrefix(errs[0], "in.yaml:1: Pod p:") || errs[1] != "in.yaml:10: Service: metadata.name is required" {
		t.Errorf("errors %q", errs)
	}
	var refs []string
	for _, o := range dec.Objects {
		refs = append(refs, o.Ref().String())
	}
	if strings.Join(refs, " ") != "Service/apps/app GatewayClass/eg" {
		t.Errorf("good objects %v", refs)
	}
}

func TestDecodeBlankDocuments(t *testing.T) {
	text := "---\n# only a comment\n---\n\n---\n" + service + "---\n"
	dec, errs := decode(t, text, resource.Options{})
	if len(errs) != 0 {
		t.Fatal(errs)
	}
	if len(dec.Objects) != 1 || dec.Objects[0].Line != 6 {
		t.Errorf("objects %v, want the Service at line 6", dec.Objects)
	}
}

func TestKnownKind(t *testing.T) {
	tests := []struct {
		apiVersion, kind string
		want             bool
	}{
		{"v1", "Service", true},
		{"v1", "Pod", false},
		{"discovery.k8s.io/v1", "EndpointSlice", true},
		{"gateway.networking.k8s.io/v1", "HTTPRoute", true},
		{"gateway.networking.k8s.io/v1", "HTTPRouteList", false},
		{"gateway.networking.k8s.io/v1", "CreateOptions", false},
		{"gateway.envoyproxy.io/v1alpha1", "SecurityPolicy", true},
		{"not a version/x/y", "Service", false},
	}
	for _, tt := range tests {
		if got := resource.KnownKind(tt.apiVersion, tt.kind); got != tt.want {
			t.Errorf("KnownKind(%q, %q) = %t, want %t", tt.apiVersion, tt.kind, got, tt.want)
		}
	}
}

// A cluster dump from `kubectl get -o yaml` is a List: its items are objects with their own
// lines, counted against the object limit; unknown kinds among them are skipped as notes.
func TestDecodeList(t *testing.T) {
	text := `apiVersion: v1
kind: List
items:
- apiVersion: v1
  kind: Service
  metadata: {name: a, namespace: default}
- apiVersion: apps/v1
  kind: Deployment
  metadata: {name: d}
- apiVersion: v1
  kind: Service
  metadata: {name: b, namespace: default}
  spec:
    portz: []
`
	dec, errs := decode(t, text, resource.Options{SkipUnknownKinds: true})
	if len(dec.Objects) != 1 || dec.Objects[0].Ref().Name != "a" || dec.Objects[0].Line != 4 {
		t.Errorf("objects %+v", dec.Objects)
	}
	if len(dec.Notes) != 1 || !strings.HasPrefix(dec.Notes[0], "in.yaml:7: skipped Deployment") {
		t.Errorf("notes %q", dec.Notes)
	}
	if msg := oneError(t, errs); msg != `in.yaml:14: Service default/b: unknown field "spec.portz"` {
		t.Errorf("error %q", msg)
	}

	_, errs = decode(t, text, resource.Options{SkipUnknownKinds: true, Limits: resource.Limits{MaxObjects: 2}})
	if msg := oneError(t, errs); !strings.HasPrefix(msg, "in.yaml:10: ") {
		t.Errorf("object limit: %q", msg)
	}
	_, errs = decode(t, "apiVersion: v1\nkind: List\nitems: {a: 1}\n", resource.Options{})
	if msg := oneError(t, errs); !strings.Contains(msg, "items must be a list") {
		t.Errorf("bad items: %q", msg)
	}
}

// Large files are decoded on every core; the result (objects, notes, errors and their
// order) must be what one core gives.
func TestDecodeParallelSameAsSequential(t *testing.T) {
	var b strings.Builder
	for i := 0; i < 150; i++ {
		switch i % 7 {
		case 0:
			fmt.Fprintf(&b, "apiVersion: v1\nkind: Service\nmetadata: {name: s%d, namespace: default}\nspec: {portz: []}\n---\n",
				i)
		case 1:
			fmt.Fprintf(&b, "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: d%d}\n---\n", i)
		case 2:
			b.WriteString("apiVersion: v1\nkind: Service\nmetadata: {name: dup, namespace: default}\n---\n")
		case 3:
			fmt.Fprintf(&b,
				"apiVersion: v1\nkind: List\nitems:\n- apiVersion: v1\n  kind: Service\n"+
					"  metadata: {name: l%d, namespace: default}\n---\n",
				i)
		case 4:
			fmt.Fprintf(&b, "base: &b {name: a%d, namespace: default}\napiVersion: v1\nkind: Service\nmetadata: *b\n---\n", i)
		default:
			fmt.Fprintf(&b, "apiVersion: v1\nkind: Service\nmetadata: {name: s%d}\nspec: {ports: [{port: %d}]}\n---\n", i, 80+i)
		}
	}
	opts := resource.Options{SkipUnknownKinds: true}
	par, parErrs := decode(t, b.String(), opts)
	prev := runtime.GOMAXPROCS(1)
	seq, seqErrs := decode(t, b.String(), opts)
	runtime.GOMAXPROCS(prev)
	if prev < 2 {
		t.Skip("one CPU: the parallel path is not taken")
	}
	if !reflect.DeepEqual(parErrs, seqErrs) {
		t.Errorf("errors differ:\nparallel   %q\nsequential %q", parErrs, seqErrs)
	}
	if !reflect.DeepEqual(par.Notes, seq.Notes) {
		t.Errorf("notes differ")
	}
	if len(par.Objects) != len(seq.Objects) || len(par.Objects) < 50 {
		t.Fatalf("%d objects in parallel, %d sequentially", len(par.Objects), len(seq.Objects))
	}
	for i := range par.Objects {
		if par.Objects[i].Ref() != seq.Objects[i].Ref() || par.Objects[i].Line != seq.Objects[i].Line ||
			!reflect.DeepEqual(par.Objects[i].Obj, seq.Objects[i].Obj) {
			t.Errorf("object %d: %v line %d, sequentially %v line %d", i, par.Objects[i].Ref(), par.Objects[i].Line,
				seq.Objects[i].Ref(), seq.Objects[i].Line)
		}
	}
}

// Without StrictTypes, objects of the CRD-defined groups are the API server's to refuse: a
// wrong type, an unknown field or an unknown kind is no reading error, and the object keeps
// its JSON for admission.
func TestDecodeGovernedLeniently(t *testing.T) {
	text := "apiVersion: gateway.networking.k8s.io/v1\nkind: HTTPRoute\nmetadata: {name: r}\nspec:\n" +
		"  hostnames: a.example.com\n" +
		"---\napiVersion: gateway.networking.k8s.io/v1\nkind: FooRoute\nmetadata: {name: f}\n" +
		"---\napiVersion: gateway.networking.k8s.io/v1\nkind: GatewayClass\nmetadata: {name: eg, namespace: apps}\n" +
		"spec: {controllerName: x.io/y, bogus: 1}\n"
	dec, errs := decode(t, text, resource.Options{})
	if len(errs) != 0 {
		t.Fatalf("errors %q, want none", errs)
	}
	if len(dec.Objects) != 3 {
		t.Fatalf("objects %v, want 3", dec.Objects)
	}
	want := []struct {
		ref       string
		decodeErr bool
	}{{"HTTPRoute/default/r", true}, {"FooRoute/default/f", true}, {"GatewayClass/eg", false}}
	for i, w := range want {
		o := dec.Objects[i]
		if o.Ref().String() != w.ref || (o.DecodeErr != nil) != w.decodeErr || len(o.Raw) == 0 {
			t.Errorf("object %d: %s, decode error %v, raw %d bytes; want %s, decode error %v, raw JSON", i, o.Ref(), o.DecodeErr,
				len(o.Raw), w.ref, w.decodeErr)
		}
	}
	if msg := fmt.Sprint(dec.Objects[0].DecodeErr); !strings.HasPrefix(msg,
		"in.yaml:5: HTTPRoute r: cannot unmarshal string") {
		t.Errorf("decode error %q, want the strict decoder's, with its line", msg)
	}
}
