package result

import (
	"bytes"
	"encoding/json"
	"fmt"

	clusterv3 "github.com/envoyproxy/go-control-plane/envoy/config/cluster/v3"
	endpointv3 "github.com/envoyproxy/go-control-plane/envoy/config/endpoint/v3"
	listenerv3 "github.com/envoyproxy/go-control-plane/envoy/config/listener/v3"
	routev3 "github.com/envoyproxy/go-control-plane/envoy/config/route/v3"
	tlsv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/transport_sockets/tls/v3"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/anypb"

	"github.com/egharness/egharness/internal/parallel"

	// The extension types that may appear inside Any fields must be linked in for protojson
	// to print and parse them.
	_ "github.com/envoyproxy/go-control-plane/envoy/extensions/access_loggers/file/v3"
	_ "github.com/envoyproxy/go-control-plane/envoy/extensions/clusters/dns/v3"
	_ "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/http/grpc_stats/v3"
	_ "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/http/grpc_web/v3"
	_ "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/http/router/v3"
	_ "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/listener/tls_inspector/v3"
	_ "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/network/http_connection_manager/v3"
	_ "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/network/tcp_proxy/v3"
	_ "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/udp/udp_proxy/v3"
	_ "github.com/envoyproxy/go-control-plane/envoy/extensions/load_balancing_policies/least_request/v3"
	_ "github.com/envoyproxy/go-control-plane/envoy/extensions/retry/host/previous_hosts/v3"
	_ "github.com/envoyproxy/go-control-plane/envoy/extensions/upstreams/http/v3"
)

// Each resource is printed as protojson with its `@type`, the way xDS carries it in an Any.
type xdsJSON struct {
	Listeners []json.RawMessage `json:"listeners"`
	Routes    []json.RawMessage `json:"routes"`
	Clusters  []json.RawMessage `json:"clusters"`
	Endpoints []json.RawMessage `json:"endpoints"`
	Secrets   []json.RawMessage `json:"secrets"`
}

// MarshalJSON prints each resource as protojson inside an Any (so it carries `@type`).
func (x XDS) MarshalJSON() ([]byte, error) {
	var out xdsJSON
	var err error
	if out.Listeners, err = marshalAll(x.Listeners); err != nil {
		return nil, err
	}
	if out.Routes, err = marshalAll(x.Routes); err != nil {
		return nil, err
	}
	if out.Clusters, err = marshalAll(x.Clusters); err != nil {
		return nil, err
	}
	if out.Endpoints, err = marshalAll(x.Endpoints); err != nil {
		return nil, err
	}
	if out.Secrets, err = marshalAll(x.Secrets); err != nil {
		return nil, err
	}
	return json.Marshal(out)
}

// UnmarshalJSON reads resources printed by MarshalJSON (or by an external implementation).
func (x *XDS) UnmarshalJSON(data []byte) error {
	var in xdsJSON
	if err := json.Unmarshal(data, &in); err != nil {
		return err
	}
	var err error
	if x.Listeners, err = unmarshalAll[*listenerv3.Listener]("listeners", in.Listeners); err != nil {
		return err
	}
	if x.Routes, err = unmarshalAll[*routev3.RouteConfiguration]("routes", in.Routes); err != nil {
		return err
	}
	if x.Clusters, err = unmarshalAll[*clusterv3.Cluster]("clusters", in.Clusters); err != nil {
		return err
	}
	if x.Endpoints, err = unmarshalAll[*endpointv3.ClusterLoadAssignment]("endpoints", in.Endpoints); err != nil {
		return err
	}
	x.Secrets, err = unmarshalAll[*tlsv3.Secret]("secrets", in.Secrets)
	return err
}

// MarshalResource prints one resource as compact protojson with `@type`, as protojson
// prints it inside an Any. The message is printed directly and the type spliced in front:
// going through anypb.New would encode to binary and decode again first, which was most of
// the time of printing large outputs. protojson's single-line output puts a space after
// some commas on purpose (its output is meant to be unstable); appendCompact takes them out,
// so the bytes are the same from build to build.
func MarshalResource(m proto.Message) (json.RawMessage, error) {
	b, err := protojson.MarshalOptions{UseProtoNames: false}.Marshal(m)
	if err != nil {
		return nil, err
	}
	typ, err := json.Marshal(typeURLPrefix + string(m.ProtoReflect().Descriptor().FullName()))
	if err != nil {
		return nil, err
	}
	if len(b) < 2 || b[0] != '{' {
		return nil, fmt.Errorf("protojson printed %q for a %T", b, m)
	}
	out := make([]byte, 0, len(b)+len(typ)+11)
	out = append(out, `{"@type":`...)
	out = append(out, typ...)
	if b[1] != '}' { // members follow (protojson puts no space after '{')
		out = append(out, ',')
	}
	return appendCompact(out, b[1:]), nil
}

// appendCompact appends js without the spaces outside its strings. It is json.Compact for
// what protojson prints on one line, where a space after a comma is the only whitespace
// outside strings (strings escape control characters), without json.Compact's validation
// pass (protojson's output is valid) and its buffer: a tenth of the cost of printing before.
func appendCompact(out, js []byte) []byte {
	for len(js) > 0 {
		q := bytes.IndexByte(js, '"')
		if q < 0 {
			q = len(js)
		}
		for _, c := range js[:q] {
			if c != ' ' {
				out = append(out, c)
			}
		}
		js = js[q:]
		if len(js) == 0 {
			break
		}
		end := stringEnd(js)
		out = append(out, js[:end]...)
		js = js[end:]
	}
	return out
}

// stringEnd returns the length of the JSON string at the start of js, quotes included.
func stringEnd(js []byte) int {
	i := 1
	for i < len(js) {
		j := bytes.IndexAny(js[i:], `"\`)
		if j < 0 {
			return len(js)
		}
		i += j
		if js[i] == '\\' {
			i += 2
			continue
		}
		return i + 1
	}
	return len(js)
}

const typeURLPrefix = "type.googleapis.com/"

// marshalAll prints the resources on every core; each keeps its place in the list.
func marshalAll[T proto.Message](list []T) ([]json.RawMessage, error) {
	out := make([]json.RawMessage, len(list))
	errs := make([]error, len(list))
	parallel.Each(len(list), func(i int) { out[i], errs[i] = MarshalResource(list[i]) })
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	return out, nil
}

func unmarshalAll[T proto.Message](what string, raw []json.RawMessage) ([]T, error) {
	out := make([]T, 0, len(raw))
	for i, r := range raw {
		var a anypb.Any
		if err := protojson.Unmarshal(r, &a); err != nil {
			return nil, fmt.Errorf("xds.%s[%d]: %v", what, i, err)
		}
		m, err := a.UnmarshalNew()
		if err != nil {
			return nil, fmt.Errorf("xds.%s[%d]: %v", what, i, err)
		}
		t, ok := m.(T)
		if !ok {
			return nil, fmt.Errorf("xds.%s[%d]: a %s does not belong in %s", what, i, a.GetTypeUrl(), what)
		}
		out = append(out, t)
	}
	return out, nil
}
