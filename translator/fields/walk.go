package fields

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"sync"

	"github.com/egharness/egharness/translator/resource"
)

// Gap is a field set in an object that the reference translator does not translate.
type Gap struct {
	Object resource.Ref
	// Path is the field, lists written with [] (spec.rules[].sessionPersistence): one gap
	// per object and field, however many list elements set it.
	Path string
	// Effect is what EG v1.9 does with the field ("" when the registry does not know the
	// field at all: a field of another release's CRDs, or inside a free-form value).
	Effect string
}

// Warning is the gap as `translate` prints it.
func (g Gap) Warning() string {
	if g.Effect == "" {
		return fmt.Sprintf("%s %s: %s is not known to the reference translator and is not translated", g.Object.Kind,
			nn(g.Object), g.Path)
	}
	return fmt.Sprintf("%s %s: %s is not translated; %s", g.Object.Kind, nn(g.Object), g.Path, g.Effect)
}

// Note is the gap as `upgrade-check` prints it: neither side's translation shows it.
func (g Gap) Note() string {
	if g.Effect == "" {
		return fmt.Sprintf("%s %s: %s is not known to the reference translator, so its effect is not compared", g.Object.Kind,
			nn(g.Object), g.Path)
	}
	return fmt.Sprintf("%s %s: %s is not translated by the reference translator, so its effect is not compared (%s)",
		g.Object.Kind, nn(g.Object), g.Path, g.Effect)
}

func nn(r resource.Ref) string {
	if r.Namespace == "" {
		return r.Name
	}
	return r.Namespace + "/" + r.Name
}

// Gaps lists the fields set in the objects that the translator does not translate, sorted
// by object and path, each once. Only the kinds of the registry are read, from the
// document as written (Object.Raw): a default the API server fills in is not the user's.
func Gaps(objs []resource.Object) []Gap {
	seen := map[Gap]bool{}
	var out []Gap
	for _, o := range objs {
		k := index()[o.Kind]
		if k == nil || o.Raw == nil {
			continue
		}
		var doc map[string]any
		if err := json.Unmarshal(o.Raw, &doc); err != nil {
			continue // admission has said why
		}
		ref := o.Ref()
		for _, key := range sortedKeys(doc) {
			if key == "apiVersion" || key == "kind" || key == "metadata" || key == "status" {
				continue
			}
			k.visit(key, doc[key], func(path, effect string) {
				g := Gap{Object: ref, Path: path, Effect: effect}
				if !seen[g] {
					seen[g] = true
					out = append(out, g)
				}
			})
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Object != out[j].Object {
			return out[i].Object.Less(out[j].Object)
		}
		return out[i].Path < out[j].Path
	})
	return out
}

// Warnings are the gaps as warnings.
func Warnings(objs []resource.Object) []string {
	var out []string
	for _, g := range Gaps(objs) {
		out = append(out, g.Warning())
	}
	return out
}

// visit reads one value at path p.
func (k *kindIndex) visit(p string, v any, gap func(path, effect string)) {
	if v == nil {
		return // null: not set
	}
	if effect, ok := k.notHandled[p]; ok {
		gap(p, effect)
		return
	}
	if k.noEffect[p] {
		return
	}
	if !k.containers[p] {
		if !k.handled[p] {
			gap(p, "")
		}
		return
	}
	switch x := v.(type) {
	case map[string]any:
		for _, key := range sortedKeys(x) {
			child := p + "." + key
			if k.maps[p] {
				child = p + ".*"
			}
			k.visit(child, x[key], gap)
		}
	case []any:
		for _, e := range x {
			if _, ok := e.(map[string]any); ok {
				k.visit(p+"[]", e, gap)
			}
		}
	}
}

func sortedKeys(m map[string]any) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// kindIndex is one kind's registry entry, expanded.
type kindIndex struct {
	handled    map[string]bool
	notHandled map[string]string
	noEffect   map[string]bool
	// containers have classified paths below them; maps hold their values at ".*".
	containers map[string]bool
	maps       map[string]bool
}

var (
	builtOnce sync.Once
	built     map[string]*kindIndex
)

// index expands the registry once (it is package data, so a bad entry panics at the
// first use, which every test meets).
func index() map[string]*kindIndex {
	builtOnce.Do(buildIndex)
	return built
}

func buildIndex() {
	out := map[string]*kindIndex{}
	for kind, e := range Registry {
		k := &kindIndex{handled: map[string]bool{}, notHandled: map[string]string{}, noEffect: map[string]bool{},
			containers: map[string]bool{}, maps: map[string]bool{}}
		var all []string
		for _, p := range expand(e.Handled...) {
			k.handled[p] = true
			all = append(all, p)
		}
		for _, g := range e.NotHandled {
			for _, p := range expand(g.Path) {
				k.notHandled[p] = g.Effect
				all = append(all, p)
			}
		}
		for _, g := range e.NoEffect {
			for _, p := range expand(g.Path) {
				k.noEffect[p] = true
				all = append(all, p)
			}
		}
		for _, p := range all {
			for _, a := range ancestors(p) {
				k.containers[a] = true
				if strings.HasSuffix(a, ".*") {
					k.maps[strings.TrimSuffix(a, ".*")] = true
				}
			}
		}
		out[kind] = k
	}
	built = out
}
