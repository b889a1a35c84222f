package patch

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	egv1a1 "github.com/envoyproxy/gateway/api/v1alpha1"
	clusterv3 "github.com/envoyproxy/go-control-plane/envoy/config/cluster/v3"
	endpointv3 "github.com/envoyproxy/go-control-plane/envoy/config/endpoint/v3"
	listenerv3 "github.com/envoyproxy/go-control-plane/envoy/config/listener/v3"
	routev3 "github.com/envoyproxy/go-control-plane/envoy/config/route/v3"
	tlsv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/transport_sockets/tls/v3"
	jsonpatch "github.com/evanphx/json-patch/v5"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"

	"github.com/egharness/egharness/translator/result"
)

// Why an operation missed: each record's reason starts with one of these, then the detail.
const (
	// ReasonNotApplied: the policy itself is not in force (gate off, wrong or unknown target).
	ReasonNotApplied = "not applied"
	// ReasonNoResource: no generated resource of that type has that name.
	ReasonNoResource = "no such resource"
	// ReasonNoPath: the JSON pointer (or what the jsonPath selects) is not in the resource.
	ReasonNoPath = "no such path"
	// ReasonTestFailed: a test operation found another value.
	ReasonTestFailed = "test failed"
	// ReasonInvalidResult: the patched JSON is not a valid resource of its type; the
	// resource is left as it was.
	ReasonInvalidResult = "invalid result"
	// ReasonInvalidOperation: the operation itself is malformed (missing value or from,
	// unparseable jsonPath, unsupported type).
	ReasonInvalidOperation = "invalid operation"
	// ReasonRefused: EG refuses the patch (the system_ca_certificates secret).
	ReasonRefused = "refused"
)

// SystemTrustStoreSecret is the shared SDS secret EG v1.9 generates for backends that trust
// the system's CA certificates; patches may neither change it nor take its name.
const SystemTrustStoreSecret = "system_ca_certificates"

// snapshot is the xDS under patch. Resources are found by scanning, first match wins, as
// in EG: a patch may rename a resource and the next one then finds it by its new name.
type snapshot struct {
	x  *result.XDS
	v2 bool
}

func newSnapshot(x *result.XDS, v2 bool) *snapshot { return &snapshot{x: x, v2: v2} }

// finish keeps one resource per type and name, the last, as go-control-plane's snapshot
// does when EG publishes a table where a patch added or renamed a resource onto a name that
// was taken; then it restores the snapshot's order. It returns a warning per resource dropped.
func (s *snapshot) finish() []string {
	var warnings []string
	drop := func(kind string) func(string) {
		return func(name string) {
			warnings = append(warnings,
				fmt.Sprintf(
					"EnvoyPatchPolicy: two %ss are named %q after patching; the snapshot keeps the later "+
						"one, as go-control-plane does",
					kind, name))
		}
	}
	s.x.Listeners = lastByName(s.x.Listeners, (*listenerv3.Listener).GetName, drop("Listener"))
	s.x.Routes = lastByName(s.x.Routes, (*routev3.RouteConfiguration).GetName, drop("RouteConfiguration"))
	s.x.Clusters = lastByName(s.x.Clusters, (*clusterv3.Cluster).GetName, drop("Cluster"))
	s.x.Endpoints = lastByName(s.x.Endpoints, (*endpointv3.ClusterLoadAssignment).GetClusterName,
		drop("ClusterLoadAssignment"))
	s.x.Secrets = lastByName(s.x.Secrets, (*tlsv3.Secret).GetName, drop("Secret"))
	s.x.Sort()
	return warnings
}

func lastByName[T proto.Message](list []T, nameOf func(T) string, dropped func(string)) []T {
	last := make(map[string]int, len(list))
	for i, r := range list {
		last[nameOf(r)] = i
	}
	if len(last) == len(list) {
		return list
	}
	out := make([]T, 0, len(last))
	for i, r := range list {
		if last[nameOf(r)] == i {
			out = append(out, r)
		} else {
			dropped(nameOf(r))
		}
	}
	return out
}

// outcome is what one operation contributes to its policy's Programmed condition: the
// type/name of a resource not found, or an error in EG's wording.
type outcome struct {
	notFound string
	err      string
}

// The patched document is protojson with the proto field names (snake_case), as EG
// writes it: patch paths use /virtual_hosts/0/routes, not /virtualHosts.
var marshalOpts = protojson.MarshalOptions{UseProtoNames: true}

// marshalDoc is the resource's protojson, compacted: protojson varies its whitespace from
// build to build on purpose, and the JSON-patch library keeps the bytes of the parts it does
// not touch, so without this the text of an invalid result (and its column numbers) would
// change with the binary.
func marshalDoc(m proto.Message) ([]byte, error) {
	raw, err := marshalOpts.Marshal(m)
	if err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	if err := json.Compact(&buf, raw); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// newOf returns an empty resource of the type URL, or nil for a type EG does not patch.
func newOf(typeURL egv1a1.EnvoyResourceType) proto.Message {
	switch typeURL {
	case egv1a1.ListenerEnvoyResourceType:
		return &listenerv3.Listener{}
	case egv1a1.RouteConfigurationEnvoyResourceType:
		return &routev3.RouteConfiguration{}
	case egv1a1.ClusterEnvoyResourceType:
		return &clusterv3.Cluster{}
	case egv1a1.ClusterLoadAssignmentEnvoyResourceType:
		return &endpointv3.ClusterLoadAssignment{}
	case egv1a1.SecretEnvoyResourceType:
		return &tlsv3.Secret{}
	}
	return nil
}

// names lists the resources of a type by name, in snapshot order.
func (s *snapshot) names(typeURL egv1a1.EnvoyResourceType) []string {
	var out []string
	switch typeURL {
	case egv1a1.ListenerEnvoyResourceType:
		out = result.Names(s.x.Listeners)
	case egv1a1.RouteConfigurationEnvoyResourceType:
		out = result.Names(s.x.Routes)
	case egv1a1.ClusterEnvoyResourceType:
		out = result.Names(s.x.Clusters)
	case egv1a1.ClusterLoadAssignmentEnvoyResourceType:
		for _, r := range s.x.Endpoints {
			out = append(out, r.GetClusterName())
		}
	case egv1a1.SecretEnvoyResourceType:
		out = result.Names(s.x.Secrets)
	}
	return out
}

// find returns the first resource of the type with the name, and a function that puts a
// replacement in its place; nil when there is none.
func (s *snapshot) find(typeURL egv1a1.EnvoyResourceType, name string) (proto.Message, func(proto.Message)) {
	switch typeURL {
	case egv1a1.ListenerEnvoyResourceType:
		return first(s.x.Listeners, name, (*listenerv3.Listener).GetName)
	case egv1a1.RouteConfigurationEnvoyResourceType:
		return first(s.x.Routes, name, (*routev3.RouteConfiguration).GetName)
	case egv1a1.ClusterEnvoyResourceType:
		return first(s.x.Clusters, name, (*clusterv3.Cluster).GetName)
	case egv1a1.ClusterLoadAssignmentEnvoyResourceType:
		return first(s.x.Endpoints, name, (*endpointv3.ClusterLoadAssignment).GetClusterName)
	case egv1a1.SecretEnvoyResourceType:
		return first(s.x.Secrets, name, (*tlsv3.Secret).GetName)
	}
	return nil, nil
}

func first[T proto.Message](list []T, name string, nameOf func(T) string) (proto.Message, func(proto.Message)) {
	for i, r := range list {
		if nameOf(r) == name {
			return r, func(m proto.Message) { list[i] = m.(T) }
		}
	}
	return nil, nil
}

// add appends a whole new resource (EG does not check that the name is free; finish
// settles duplicates).
func (s *snapshot) add(m proto.Message) {
	switch r := m.(type) {
	case *listenerv3.Listener:
		s.x.Listeners = append(s.x.Listeners, r)
	case *routev3.RouteConfiguration:
		s.x.Routes = append(s.x.Routes, r)
	case *clusterv3.Cluster:
		s.x.Clusters = append(s.x.Clusters, r)
	case *endpointv3.ClusterLoadAssignment:
		s.x.Endpoints = append(s.x.Endpoints, r)
	case *tlsv3.Secret:
		s.x.Secrets = append(s.x.Secrets, r)
	}
}

// apply runs one operation of an accepted policy. It never changes the snapshot unless the
// whole operation succeeds and its result is a valid resource.
func (s *snapshot) apply(p egv1a1.EnvoyJSONPatchConfig) (result.PatchOutcome, outcome) {
	op := p.Operation
	kind := shortType(p.Type)
	if err := validate(op); err != nil {
		return missRec(ReasonInvalidOperation, err.Error()), outcome{err: err.Error()}
	}
	if op.Op == "add" && empty(op.Path) && empty(op.JSONPath) {
		return s.addWhole(p)
	}
	if newOf(p.Type) == nil {
		msg := fmt.Sprintf("unsupported patch type %s", p.Type)
		return missRec(ReasonInvalidOperation, msg), outcome{err: msg}
	}
	dest, put := s.find(p.Type, p.Name)
	if dest == nil {
		return missRec(ReasonNoResource, s.notFoundDetail(p)), outcome{notFound: string(p.Type) + "/" + p.Name}
	}
	if p.Type == egv1a1.SecretEnvoyResourceType && p.Name == SystemTrustStoreSecret {
		msg := fmt.Sprintf("secret name %q is reserved for the system trust store and cannot be modified by patches",
			SystemTrustStoreSecret)
		return missRec(ReasonRefused, msg), outcome{err: msg}
	}
	doc, err := marshalDoc(dest)
	if err != nil {
		msg := fmt.Sprintf("unable to marshal xds resource %s, err: %v", p.Type, err)
		return missRec(ReasonInvalidResult, msg), outcome{err: msg}
	}
	patched, reason, errs := applyOperation(doc, op)
	if len(errs) > 0 {
		msg := strings.Join(errs, "\n")
		return missRec(reason, fmt.Sprintf("%s %q: %s", kind, p.Name, msg)), outcome{err: msg}
	}
	next := newOf(p.Type)
	if err := protojson.Unmarshal(patched, next); err != nil {
		detail := plainSpaces(err.Error())
		msg := fmt.Sprintf("unable to unmarshal xds resource %s, err:%s", patched, detail)
		return missRec(ReasonInvalidResult, fmt.Sprintf("%s %q is no longer a %s: %s", kind, p.Name, kind, detail)),
			outcome{err: msg}
	}
	if rec, out, refused := refuseResult(next, p.Type, fmt.Sprintf("%s %q", kind, p.Name)); refused {
		return rec, out
	}
	put(next)
	return result.PatchOutcome{Hit: true}, outcome{}
}

// addWhole adds the operation's value as a new resource: EG's `add` with an empty path.
func (s *snapshot) addWhole(p egv1a1.EnvoyJSONPatchConfig) (result.PatchOutcome, outcome) {
	raw := p.Operation.Value.Raw
	if len(raw) == 0 {
		msg := "empty value for add operation with empty path"
		return missRec(ReasonInvalidOperation, msg), outcome{err: msg}
	}
	m := newOf(p.Type)
	if m == nil {
		msg := fmt.Sprintf("unsupported patch type %s", p.Type)
		return missRec(ReasonInvalidOperation, msg), outcome{err: msg}
	}
	kind := shortType(p.Type)
	if err := protojson.Unmarshal(raw, m); err != nil {
		detail := plainSpaces(err.Error())
		msg := fmt.Sprintf("unable to unmarshal xds resource %s, err:%s", raw, detail)
		return missRec(ReasonInvalidResult, fmt.Sprintf("the value is not a %s: %s", kind, detail)), outcome{err: msg}
	}
	if rec, out, refused := refuseResult(m, p.Type, "the new "+kind); refused {
		return rec, out
	}
	s.add(m)
	return result.PatchOutcome{Hit: true}, outcome{}
}

// refuseResult is EG's last check of a resource a patch makes, before it takes its place in
// the snapshot: a Secret may not take the system trust store's name, and the resource must
// pass Envoy's validation. subject names the resource in the record of a failed validation.
func refuseResult(resource proto.Message, typeURL egv1a1.EnvoyResourceType,
	subject string) (rec result.PatchOutcome, out outcome, refused bool) {
	if sec, ok := resource.(*tlsv3.Secret); ok && sec.GetName() == SystemTrustStoreSecret {
		msg := fmt.Sprintf("secret name %q is reserved for the system trust store and cannot be used by other resources",
			SystemTrustStoreSecret)
		return missRec(ReasonRefused, msg), outcome{err: msg}, true
	}
	if v, ok := resource.(interface{ Validate() error }); ok {
		if err := v.Validate(); err != nil {
			msg := fmt.Sprintf("validation failed for xds resource %s, err:%s", typeURL, err.Error())
			return missRec(ReasonInvalidResult, fmt.Sprintf("%s fails Envoy's validation: %v", subject, err)),
				outcome{err: msg}, true
		}
	}
	return result.PatchOutcome{}, outcome{}, false
}

// notFoundDetail names the missing resource and what the snapshot holds of its type, with
// the name scheme in force: a patch written for the other scheme shows at a glance (EPP-05).
func (s *snapshot) notFoundDetail(p egv1a1.EnvoyJSONPatchConfig) string {
	kind := shortType(p.Type)
	scheme := "default xDS name scheme"
	if s.v2 {
		scheme = "xDS name scheme V2 (XDSNameSchemeV2)"
	}
	names := s.names(p.Type)
	const show = 6
	list := strings.Join(names, ", ")
	if len(names) > show {
		list = strings.Join(names[:show], ", ") + fmt.Sprintf(", and %d more", len(names)-show)
	}
	if len(names) == 0 {
		list = "none"
	}
	return fmt.Sprintf("%s %q (%s names here: %s; %s)", kind, p.Name, kind, list, scheme)
}

func missRec(reason, detail string) result.PatchOutcome {
	return result.PatchOutcome{Reason: reason + ": " + detail}
}

func empty(s *string) bool { return s == nil || *s == "" }

// shortType is the message name of a type URL (Listener, RouteConfiguration...).
func shortType(t egv1a1.EnvoyResourceType) string {
	s := string(t)
	if i := strings.LastIndex(s, "."); i >= 0 {
		return s[i+1:]
	}
	return s
}

// validate checks the fields an operation needs, with EG's messages.
func validate(op egv1a1.JSONPatchOperation) error {
	if op.Path == nil && op.JSONPath == nil {
		return errors.New("a patch operation must specify a path or jsonPath")
	}
	switch op.Op {
	case "add", "replace", "test":
		if op.Value == nil {
			return fmt.Errorf("the %s operation requires a value", op.Op)
		}
		if op.From != nil {
			return fmt.Errorf("the %s operation doesn't support a from attribute", op.Op)
		}
	case "remove":
		if op.From != nil || op.Value != nil {
			return errors.New("value and from can't be specified with the remove operation")
		}
	case "move", "copy":
		if op.From == nil {
			return fmt.Errorf("the %s operation requires a valid from attribute", op.Op)
		}
		if op.Value != nil {
			return fmt.Errorf("the %s operation doesn't support a value attribute", op.Op)
		}
	default:
		return errors.New("unsupported JSONPatch operation")
	}
	return nil
}

// plainSpaces replaces the non-breaking spaces protobuf-go puts at random into its error
// messages (so that nobody matches them), which would otherwise make output vary by build.
func plainSpaces(s string) string { return strings.ReplaceAll(s, "\u00a0", " ") }

// reasonOf classifies a JSON-patch library error.
func reasonOf(err error) string {
	switch {
	case errors.Is(err, jsonpatch.ErrTestFailed):
		return ReasonTestFailed
	case errors.Is(err, jsonpatch.ErrMissing), errors.Is(err, jsonpatch.ErrInvalidIndex):
		return ReasonNoPath
	}
	return ReasonInvalidOperation
}
