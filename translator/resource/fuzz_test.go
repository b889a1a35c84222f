package resource_test

import (
	"bytes"
	"fmt"
	"regexp"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/egharness/egharness/internal/fuzzseed"
	"github.com/egharness/egharness/internal/yamlpos"
	"github.com/egharness/egharness/translator/resource"
)

// msgStart is how every Decode message starts: the file and a line, or (the file size
// limit) the file alone.
var msgStart = regexp.MustCompile(`^fuzz\.yaml(:[1-9][0-9]*)?: `)

// FuzzDecode feeds Decode broken and hostile object files. Whatever the bytes: no panic,
// no hang, every message names the file (and a line inside it), every object returned is
// whole, named and unique, and re-encoding the objects gives the same objects back.
func FuzzDecode(f *testing.F) {
	texts, err := fuzzseed.ObjectTexts("../../scenarios")
	if err != nil {
		f.Fatal(err)
	}
	for _, t := range texts {
		f.Add(t, false)
		f.Add(t, true)
	}
	f.Add([]byte("a: &a [*a]\n"), false)
	f.Add([]byte(configMap("c")+"data:\n"+billionLaughs("  ")), false)
	f.Add([]byte(nested(120)), true)
	f.Add([]byte(
		"apiVersion: gateway.envoyproxy.io/v1alpha1\nkind: EnvoyGateway\nextensionApis: {enableEnvoyPatchPolicy: true}\n"),
		false)
	f.Fuzz(func(t *testing.T, data []byte, skipUnknown bool) {
		lim := resource.Limits{MaxObjects: 200, MaxDepth: 40, MaxAliasExpansion: 64 << 10}
		opts := resource.Options{SkipUnknownKinds: skipUnknown, DefaultNamespace: "fuzz-ns", Limits: lim, StrictTypes: true}
		dec, err := resource.Decode("fuzz.yaml", data, opts)
		lines := yamlpos.LineCount(data) // as YAML counts them: a lone CR ends a line too
		for _, m := range errLines(err) {
			if !msgStart.MatchString(m) {
				t.Errorf("message does not start with the file and line: %q", m)
			}
			var l int
			if _, err := fmt.Sscanf(m, "fuzz.yaml:%d:", &l); err == nil && l > lines {
				t.Errorf("message points past the last line (%d): %q", lines, m)
			}
		}
		// Objects that did not fit their Go type strictly carry why, with file and line;
		// the rest must survive the round trip below.
		kept := dec.Objects[:0:0]
		for _, o := range dec.Objects {
			if o.DecodeErr != nil {
				for _, m := range errLines(o.DecodeErr) {
					if !msgStart.MatchString(m) {
						t.Errorf("decode problem does not start with the file and line: %q", m)
					}
				}
				continue
			}
			kept = append(kept, o)
		}
		dec.Objects = kept
		seen := map[resource.Ref]bool{}
		for _, o := range dec.Objects {
			checkObject(t, o, lines)
			if seen[o.Ref()] {
				t.Errorf("%s returned twice", o.Ref())
			}
			seen[o.Ref()] = true
		}
		if len(dec.Objects)+len(dec.Notes) > lim.MaxObjects {
			t.Errorf("%d objects and notes, over the limit of %d", len(dec.Objects)+len(dec.Notes), lim.MaxObjects)
		}
		for _, n := range dec.Notes {
			if !msgStart.MatchString(n) {
				t.Errorf("note does not start with the file and line: %q", n)
			}
		}
		if len(dec.Objects) == 0 {
			return
		}
		// What Decode returns, written out again, decodes to the same objects: nothing
		// decoded is lost or invented on the way (the exec adapter relies on it).
		var buf bytes.Buffer
		for i, o := range dec.Objects {
			b, err := marshal(o)
			if err != nil {
				t.Fatalf("%s does not encode: %v", o.Ref(), err)
			}
			if i > 0 {
				buf.WriteString("---\n")
			}
			buf.Write(b)
		}
		again, err := resource.Decode("again.yaml", buf.Bytes(),
			resource.Options{DefaultNamespace: "fuzz-ns", StrictTypes: true,
				Limits: resource.Limits{MaxFileSize: -1, MaxObjects: -1, MaxDepth: -1, MaxAliasExpansion: -1}})
		if err != nil {
			t.Fatalf("the decoded objects, encoded again, do not decode: %v\n%s", err, buf.Bytes())
		}
		if len(again.Objects) != len(dec.Objects) {
			t.Fatalf("%d objects decode again as %d", len(dec.Objects), len(again.Objects))
		}
		for i, o := range again.Objects {
			if o.Ref() != dec.Objects[i].Ref() {
				t.Errorf("object %d: %s decodes again as %s", i, dec.Objects[i].Ref(), o.Ref())
			}
			a, _ := marshal(dec.Objects[i])
			b, _ := marshal(o)
			if !bytes.Equal(a, b) {
				t.Errorf("%s changes when encoded and decoded again:\n%s\n---\n%s", o.Ref(), a, b)
			}
		}
	})
}

func checkObject(t *testing.T, o resource.Object, lines int) {
	t.Helper()
	if o.Obj == nil || o.Kind == "" || o.APIVersion == "" {
		t.Fatalf("incomplete object %+v", o)
	}
	if !resource.KnownKind(o.APIVersion, o.Kind) {
		t.Errorf("%s: kind %s %s is not known", o.Ref(), o.APIVersion, o.Kind)
	}
	r := o.Ref()
	if r.Name == "" {
		t.Errorf("object without a name: %+v", o)
	}
	if resource.ClusterScoped(o.Kind) != (r.Namespace == "") {
		t.Errorf("%s: namespace %q for a kind that is cluster-scoped: %t", r, r.Namespace, resource.ClusterScoped(o.Kind))
	}
	if o.Line < 1 || o.Line > lines {
		t.Errorf("%s at line %d of %d", r, o.Line, lines)
	}
}

// marshal writes an object as YAML, the way the exec adapter hands objects on.
func marshal(o resource.Object) ([]byte, error) { return yaml.Marshal(o.Obj) }
