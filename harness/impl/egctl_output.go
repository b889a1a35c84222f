package impl

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	clusterv3 "github.com/envoyproxy/go-control-plane/envoy/config/cluster/v3"
	endpointv3 "github.com/envoyproxy/go-control-plane/envoy/config/endpoint/v3"
	listenerv3 "github.com/envoyproxy/go-control-plane/envoy/config/listener/v3"
	routev3 "github.com/envoyproxy/go-control-plane/envoy/config/route/v3"
	tlsv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/transport_sockets/tls/v3"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoregistry"
	_ "google.golang.org/protobuf/types/known/structpb" // unknown Anys are kept as Structs
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/egharness/egharness/translator/resource"
	"github.com/egharness/egharness/translator/result"
)

// The shape `egctl x translate --to gateway-api,xds -o json` prints: the Gateway API
// resources it read, each with the status it computed, under keys such as gateways and
// httpRoutes (or one object under gatewayClass); and under xds, per Gateway (or merged
// proxy), an Envoy admin ConfigDump whose dumps hold the dynamic listeners, route
// configurations, clusters and load assignments.
type egctlObject struct {
	Kind     string `json:"kind"`
	Metadata struct {
		Name      string `json:"name"`
		Namespace string `json:"namespace"`
	} `json:"metadata"`
	Status *struct {
		Conditions []metav1.Condition `json:"conditions"`
		Listeners  []struct {
			Name           string             `json:"name"`
			AttachedRoutes int32              `json:"attachedRoutes"`
			Conditions     []metav1.Condition `json:"conditions"`
			SupportedKinds []struct {
				Kind string `json:"kind"`
			} `json:"supportedKinds"`
		} `json:"listeners"`
		Parents   []egctlParent `json:"parents"`
		Ancestors []egctlParent `json:"ancestors"`
	} `json:"status"`
}

type egctlParent struct {
	ParentRef   *egctlRef          `json:"parentRef"`
	AncestorRef *egctlRef          `json:"ancestorRef"`
	Conditions  []metav1.Condition `json:"conditions"`
}

type egctlRef struct {
	Group       string `json:"group"`
	Kind        string `json:"kind"`
	Namespace   string `json:"namespace"`
	Name        string `json:"name"`
	SectionName string `json:"sectionName"`
	Port        int32  `json:"port"`
}

// ReadEgctlOutput converts egctl's JSON output into a result: statuses from the printed
// objects, xDS from the config dumps (the proxy's readiness listener included: EG's
// translator puts it in every proxy's LDS, and the reference emits it too).
func ReadEgctlOutput(data []byte) (*result.Result, error) {
	var top map[string]json.RawMessage
	if err := json.Unmarshal(data, &top); err != nil {
		return nil, fmt.Errorf("its output is not egctl's JSON: %v", err)
	}
	res := &result.Result{}
	keys := make([]string, 0, len(top))
	for k := range top {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		switch k {
		case "xds":
			if err := readConfigDumps(top[k], res); err != nil {
				return nil, err
			}
		case "xdsIR", "infraIR":
		default:
			if err := readObjects(k, top[k], res); err != nil {
				return nil, err
			}
		}
	}
	res.Normalize()
	return res, nil
}

func readObjects(key string, raw json.RawMessage, res *result.Result) error {
	var list []egctlObject
	if strings.HasPrefix(strings.TrimSpace(string(raw)), "{") {
		var one egctlObject
		if err := json.Unmarshal(raw, &one); err != nil {
			return fmt.Errorf("%s: %v", key, err)
		}
		list = []egctlObject{one}
	} else if err := json.Unmarshal(raw, &list); err != nil {
		return fmt.Errorf("%s: %v", key, err)
	}
	for _, o := range list {
		st := o.Status
		if o.Kind == "" || st == nil ||
			(len(st.Conditions) == 0 && len(st.Listeners) == 0 && len(st.Parents) == 0 && len(st.Ancestors) == 0) {
			continue // an object without a status (a Service, a Secret...)
		}
		os := result.ObjectStatus{
			Object:     resource.Ref{Kind: o.Kind, Namespace: o.Metadata.Namespace, Name: o.Metadata.Name},
			Conditions: conditions(st.Conditions),
		}
		for _, l := range st.Listeners {
			ls := result.ListenerStatus{Name: l.Name, AttachedRoutes: l.AttachedRoutes, Conditions: conditions(l.Conditions)}
			for _, k := range l.SupportedKinds {
				ls.SupportedKinds = append(ls.SupportedKinds, k.Kind)
			}
			os.Listeners = append(os.Listeners, ls)
		}
		for _, p := range append(st.Parents, st.Ancestors...) {
			ref := p.ParentRef
			if ref == nil {
				ref = p.AncestorRef
			}
			if ref == nil {
				continue
			}
			pr := result.ParentRef{Kind: ref.Kind, Namespace: ref.Namespace, Name: ref.Name, SectionName: ref.SectionName,
				Port: ref.Port}
			if pr.Kind == "" {
				pr.Kind = "Gateway" // the API's default
			}
			if pr.Namespace == "" && pr.Kind != "GatewayClass" {
				// A parentRef without one is in the object's; a GatewayClass has none.
				pr.Namespace = o.Metadata.Namespace
			}
			os.Parents = append(os.Parents, result.ParentStatus{Ref: pr, Conditions: conditions(p.Conditions)})
		}
		res.Statuses = append(res.Statuses, os)
	}
	return nil
}

func conditions(in []metav1.Condition) []result.Condition {
	out := make([]result.Condition, 0, len(in))
	for _, c := range in {
		out = append(out, result.Condition{Type: c.Type, Status: string(c.Status), Reason: c.Reason, Message: c.Message})
	}
	return out
}

// The config dump, as JSON: only the dumps and fields read here.
type configDump struct {
	Configs []map[string]json.RawMessage `json:"configs"`
}

func readConfigDumps(raw json.RawMessage, res *result.Result) error {
	var dumps map[string]configDump
	if err := json.Unmarshal(raw, &dumps); err != nil {
		return fmt.Errorf("xds: %v", err)
	}
	keys := make([]string, 0, len(dumps))
	for k := range dumps {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	seen := map[string]bool{}
	for _, key := range keys {
		for i, cfg := range dumps[key].Configs {
			var typ string
			_ = json.Unmarshal(cfg["@type"], &typ)
			where := fmt.Sprintf("xds[%s].configs[%d]", key, i)
			var err error
			switch strings.TrimPrefix(typ, "type.googleapis.com/") {
			case "envoy.admin.v3.ListenersConfigDump":
				err = eachDumped(cfg, "dynamicListeners", []string{"activeState", "listener"}, where, res,
					addOnce(seen, "l/", (*listenerv3.Listener).GetName, &res.XDS.Listeners))
			case "envoy.admin.v3.RoutesConfigDump":
				err = eachDumped(cfg, "dynamicRouteConfigs", []string{"routeConfig"}, where, res,
					addOnce(seen, "r/", (*routev3.RouteConfiguration).GetName, &res.XDS.Routes))
			case "envoy.admin.v3.ClustersConfigDump":
				err = eachDumped(cfg, "dynamicActiveClusters", []string{"cluster"}, where, res,
					addOnce(seen, "c/", (*clusterv3.Cluster).GetName, &res.XDS.Clusters))
			case "envoy.admin.v3.EndpointsConfigDump":
				err = eachDumped(cfg, "dynamicEndpointConfigs", []string{"endpointConfig"}, where, res,
					addOnce(seen, "e/", (*endpointv3.ClusterLoadAssignment).GetClusterName, &res.XDS.Endpoints))
			case "envoy.admin.v3.SecretsConfigDump":
				err = eachDumped(cfg, "dynamicActiveSecrets", []string{"secret"}, where, res,
					addOnce(seen, "s/", (*tlsv3.Secret).GetName, &res.XDS.Secrets))
			}
			if err != nil {
				return err
			}
		}
	}
	return nil
}

// addOnce appends each resource to list unless one of its kind (a key prefix in seen) and
// name came before: a resource can stand in more than one dump.
func addOnce[T any](seen map[string]bool, kind string, name func(T) string, list *[]T) func(T) {
	return func(m T) {
		if key := kind + name(m); !seen[key] {
			seen[key] = true
			*list = append(*list, m)
		}
	}
}

// eachDumped decodes the resources of one dump: cfg[field][i].<path...>, each into a new T.
func eachDumped[T proto.Message](cfg map[string]json.RawMessage, field string, path []string, where string,
	res *result.Result, add func(T)) error {
	var entries []map[string]any
	if raw, ok := cfg[field]; ok {
		if err := json.Unmarshal(raw, &entries); err != nil {
			return fmt.Errorf("%s.%s: %v", where, field, err)
		}
	}
	for i, e := range entries {
		var v any = e
		for _, p := range path {
			m, _ := v.(map[string]any)
			v = m[p]
		}
		obj, ok := v.(map[string]any)
		if !ok {
			return fmt.Errorf("%s.%s[%d]: no %s", where, field, i, strings.Join(path, "."))
		}
		delete(obj, "@type") // the resource itself is not an Any here
		for _, t := range keepUnknownAnys(obj) {
			res.Warnf("egctl output: %s is not a type egharness links in; its content is kept as a Struct", t)
		}
		b, err := json.Marshal(obj)
		if err != nil {
			return err
		}
		var m T
		m = m.ProtoReflect().Type().New().Interface().(T)
		if err := (protojson.UnmarshalOptions{DiscardUnknown: true}).Unmarshal(b, m); err != nil {
			return fmt.Errorf("%s.%s[%d]: %v", where, field, i, err)
		}
		add(m)
	}
	return nil
}

// keepUnknownAnys rewrites, in place, every Any whose type this binary does not link in
// (a filter of a feature the reference does not translate yet, say) as a
// google.protobuf.Struct holding the same fields, so the rest still decodes; it returns
// the types it rewrote. Facts read names, which stay outside the Any.
func keepUnknownAnys(v any) []string {
	var found []string
	var walk func(v any)
	walk = func(v any) {
		switch x := v.(type) {
		case map[string]any:
			if t, ok := x["@type"].(string); ok {
				if _, err := protoregistry.GlobalTypes.FindMessageByURL(t); err != nil {
					found = append(found, strings.TrimPrefix(t, "type.googleapis.com/"))
					inner := map[string]any{}
					for k, val := range x {
						if k != "@type" {
							inner[k] = val
						}
						delete(x, k)
					}
					x["@type"] = "type.googleapis.com/google.protobuf.Struct"
					x["value"] = inner
					return
				}
			}
			for _, val := range x {
				walk(val)
			}
		case []any:
			for _, val := range x {
				walk(val)
			}
		}
	}
	walk(v)
	sort.Strings(found)
	return found
}
