package result

import (
	"bytes"
	"encoding/json"
	"testing"

	clusterv3 "github.com/envoyproxy/go-control-plane/envoy/config/cluster/v3"
	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/structpb"
)

// MarshalResource's compaction must give json.Compact's bytes for anything protojson prints:
// strings with spaces, quotes, backslashes and escapes inside, empty messages, nested lists.
func TestMarshalResourceCompactsLikeJSONCompact(t *testing.T) {
	names := []string{"", "plain", "with space", `quote " inside`, `back\slash`, `\"`, `ends with \`, "tab\tand\nnewline",
		"é ✓ ,: {}[]", `"`, ` , `}
	msgs := []proto.Message{&clusterv3.Cluster{}}
	for _, n := range names {
		meta, err := structpb.NewStruct(map[string]any{n: []any{n, 1.5, map[string]any{"k": n}}, "x": n})
		if err != nil {
			t.Fatal(err)
		}
		msgs = append(msgs, &clusterv3.Cluster{
			Name:            n,
			AltStatName:     n + " alt",
			Metadata:        &corev3.Metadata{FilterMetadata: map[string]*structpb.Struct{n: meta, "b": meta}},
			DnsLookupFamily: clusterv3.Cluster_V4_ONLY,
		})
	}
	for _, m := range msgs {
		got, err := MarshalResource(m)
		if err != nil {
			t.Fatal(err)
		}
		b, err := protojson.Marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		var c bytes.Buffer
		if err := json.Compact(&c, b); err != nil {
			t.Fatal(err)
		}
		body := c.Bytes()[1:]
		want := `{"@type":"type.googleapis.com/envoy.config.cluster.v3.Cluster"`
		if len(body) > 1 {
			want += ","
		}
		want += string(body)
		if string(got) != want {
			t.Errorf("got  %s\nwant %s", got, want)
		}
		if !json.Valid(got) {
			t.Errorf("not JSON: %s", got)
		}
	}
}

func FuzzAppendCompact(f *testing.F) {
	for _, s := range []string{`{"a": "b c", "d": [1, 2]}`, `{"x":"\" ,"}`, `["\\", " "]`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if !json.Valid([]byte(s)) || bytes.ContainsAny([]byte(s), "\t\r\n") {
			return // protojson's single-line output has no other whitespace
		}
		var want bytes.Buffer
		if err := json.Compact(&want, []byte(s)); err != nil {
			t.Fatal(err)
		}
		if got := appendCompact(nil, []byte(s)); !bytes.Equal(got, want.Bytes()) {
			t.Fatalf("%q: got %q, want %q", s, got, want.Bytes())
		}
	})
}
