package check

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"

	"github.com/egharness/egharness/harness/scenario"
	"github.com/egharness/egharness/harness/xdsserver"
	"github.com/egharness/egharness/translator/result"
)

// snapshot checks backend clusters of the data-plane snapshot. The clusters come from
// xdsserver.BackendClusters, the code /snapshots of `egharness serve` answers with, so the
// check sees what an operator querying the management API sees (BLP-08).
func (c *collector) snapshot(exp []scenario.SnapshotExpect, res *result.Result, section string) {
	c.section = section
	if len(exp) == 0 {
		return
	}
	if res.IR == nil {
		c.failf("snapshot", "snapshot", "the implementation gives no IR, so there is no data-plane snapshot to check")
		return
	}
	clusters, err := xdsserver.BackendClusters(res)
	if err != nil {
		c.failf("snapshot", "snapshot", "building the snapshot's backend clusters: %v", err)
		return
	}
	byName := map[string]xdsserver.BackendCluster{}
	for _, bc := range clusters {
		byName[bc.Name] = bc
	}
	for i, x := range exp {
		where := fmt.Sprintf("snapshot[%d]", i)
		if x.IRRoute != "" {
			c.irRoute(where, x, res)
			continue
		}
		bc, ok := byName[x.Cluster]
		if !ok {
			c.failf("snapshot", where, "no backend cluster %s in the snapshot", x.Cluster)
			continue
		}
		fields := map[string]json.RawMessage{
			"loadBalancing":       bc.LoadBalancing,
			"session_persistence": bc.SessionPersistence,
			"circuitBreaker":      bc.CircuitBreaker,
		}
		for _, f := range []struct {
			name string
			want map[string]any
		}{{"loadBalancing", x.LoadBalancing}, {"session_persistence", x.SessionPersistence},
			{"circuitBreaker", x.CircuitBreaker}} {
			if f.want == nil {
				continue
			}
			got := fields[f.name]
			if got == nil {
				c.failf("snapshot", where, "cluster %s: %s is absent, expected %s", x.Cluster, f.name, compactJSON(f.want))
				continue
			}
			var gotV map[string]any
			if err := json.Unmarshal(got, &gotV); err != nil || !reflect.DeepEqual(gotV, normalize(f.want)) {
				c.failf("snapshot", where, "cluster %s: %s is %s, expected %s", x.Cluster, f.name, got, compactJSON(f.want))
			}
		}
		for _, name := range x.Absent {
			if got := fields[name]; got != nil {
				c.failf("snapshot", where, "cluster %s: %s is %s, expected absent", x.Cluster, name, got)
			}
		}
	}
}

// normalize gives v the shape JSON decoding gives (numbers as float64), so a value from the
// scenario file compares equal to the same value read back from the snapshot.
func normalize(v map[string]any) map[string]any {
	b, err := json.Marshal(v)
	if err != nil {
		return v
	}
	var out map[string]any
	if json.Unmarshal(b, &out) != nil {
		return v
	}
	return out
}

func compactJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}

// irRoute checks one route of the IR as /snapshots shows it (its JSON form): the model
// before xDS, so before any EnvoyPatchPolicy (S0-75).
func (c *collector) irRoute(where string, x scenario.SnapshotExpect, res *result.Result) {
	var found []any
	var listeners []string
	for _, l := range res.IR.HTTP {
		if x.In != "" && l.Name != x.In {
			continue
		}
		for _, r := range l.Routes {
			if r.Name != x.IRRoute {
				continue
			}
			b, err := json.Marshal(r)
			if err != nil {
				c.failf("snapshot", where, "IR route %s: %v", x.IRRoute, err)
				return
			}
			var v any
			_ = json.Unmarshal(b, &v)
			found = append(found, v)
			listeners = append(listeners, l.Name)
		}
	}
	what := "IR route " + x.IRRoute
	if x.In != "" {
		what += " in " + x.In
	}
	switch len(found) {
	case 0:
		c.failf("snapshot", where, "%s: not in the snapshot's IR", what)
		return
	case 1:
	default:
		c.failf("snapshot", where, "%s: on %d IR listeners (%s); name one with in", what, len(found),
			strings.Join(listeners, ", "))
		return
	}
	if x.Fields != nil {
		if d := subsetDiff("", normalize(x.Fields), found[0]); d != "" {
			c.failf("snapshot", where, "%s: %s", what, d)
		}
	}
	route, _ := found[0].(map[string]any)
	for _, a := range x.Absent {
		if v, ok := route[a]; ok {
			c.failf("snapshot", where, "%s: %s is %s, expected absent", what, a, compactJSON(v))
		}
	}
}
