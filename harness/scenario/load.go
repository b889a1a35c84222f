package scenario

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/egharness/egharness/harness/catalog"
	"github.com/egharness/egharness/internal/yamlpos"
	"github.com/egharness/egharness/translator/config"
	"github.com/egharness/egharness/translator/resource"
)

var nameRE = regexp.MustCompile(`^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$`)

// Error is a problem with one scenario file. Msgs each start with "file:line:".
type Error struct {
	File string
	Msgs []string
}

func (e *Error) Error() string { return strings.Join(e.Msgs, "\n") }

// Loader reads scenario files strictly against the behavior catalog.
type Loader struct {
	Catalog *catalog.Catalog
	// Root is the scenarios folder; a scenario's area is its first folder below Root.
	Root string
	// Limits bound each file read (the scenario file itself and its resource files): size,
	// objects, nesting depth, alias expansion. Zero fields take resource's defaults.
	Limits resource.Limits
}

// LoadFile reads and validates one scenario file.
func (l Loader) LoadFile(path string) (*Scenario, error) {
	data, err := resource.ReadFile(path, l.Limits)
	if err != nil {
		var le *resource.LimitError
		if errors.As(err, &le) || strings.HasPrefix(err.Error(), path+":") {
			return nil, &Error{File: path, Msgs: []string{err.Error()}} // it names the file
		}
		return nil, &Error{File: path, Msgs: []string{fmt.Sprintf("%s: %v", path, err)}}
	}
	return l.Load(path, data)
}

// Load reads and validates a scenario held in data; path names it in messages, and
// its resourcesFile and include files are found beside path.
func (l Loader) Load(path string, data []byte) (*Scenario, error) {
	e := &Error{File: path}
	s, ok := l.parse(path, data, e)
	if !ok {
		return nil, e
	}
	return s, nil
}

func (l Loader) parse(path string, data []byte, e *Error) (*Scenario, bool) {
	addf := func(line int, format string, args ...any) {
		if line > 0 {
			e.Msgs = append(e.Msgs, fmt.Sprintf("%s:%d: %s", path, line, fmt.Sprintf(format, args...)))
		} else {
			e.Msgs = append(e.Msgs, fmt.Sprintf("%s: %s", path, fmt.Sprintf(format, args...)))
		}
	}
	// addErr adds an error of the YAML reader at its line when it has one.
	addErr := func(err error) {
		var pe *yamlpos.Error
		if errors.As(err, &pe) {
			addf(pe.Line, "%s", pe.Msg)
		} else {
			addf(0, "%v", err)
		}
	}
	if len(strings.TrimSpace(string(data))) == 0 {
		addf(0, "empty scenario file")
		return nil, false
	}
	root, err := yamlpos.Parse(data)
	if err != nil {
		addErr(err)
		return nil, false
	}
	// Aliases and nesting are measured before anything expands them.
	if err := resource.CheckTree(path, root, l.Limits); err != nil {
		e.Msgs = append(e.Msgs, err.Error())
		return nil, false
	}
	if root.Kind != yaml.MappingNode {
		addf(root.Line, "a scenario is a YAML mapping (name, covers, resources, expect...)")
		return nil, false
	}
	s := &Scenario{File: path, lines: func(p string) int { return yamlpos.Line(root, p) }}
	if err := yamlpos.DecodeStrict(data, root, s, 0); err != nil {
		for _, one := range splitJoined(err) {
			addErr(one)
		}
		return nil, false
	}
	s.Area = l.area(path)
	s.Path = l.relPath(path, s)
	l.validate(s, addf)
	l.loadResources(s, root, e, addf)
	if len(e.Msgs) > 0 {
		return nil, false
	}
	l.validateRefs(s, addf)
	return s, len(e.Msgs) == 0
}

// absPath is p made absolute, so that a Root and a path given one relative and one absolute
// compare (a run from another folder names its paths as it likes).
func absPath(p string) string {
	if a, err := filepath.Abs(p); err == nil {
		return a
	}
	return filepath.Clean(p)
}

func splitJoined(err error) []error {
	var j interface{ Unwrap() []error }
	if errors.As(err, &j) {
		return j.Unwrap()
	}
	return []error{err}
}

func (l Loader) area(path string) string {
	if l.Root != "" {
		if rel, err := filepath.Rel(absPath(l.Root), absPath(path)); err == nil && !strings.HasPrefix(rel, "..") {
			if dir, _, ok := strings.Cut(filepath.ToSlash(rel), "/"); ok {
				return dir
			}
		}
	}
	return filepath.Base(filepath.Dir(path))
}

// relPath is the scenario file's path under Root without its extension (Scenario.Path).
func (l Loader) relPath(path string, s *Scenario) string {
	if l.Root != "" {
		if rel, err := filepath.Rel(absPath(l.Root), absPath(path)); err == nil && !strings.HasPrefix(rel, "..") &&
			strings.Contains(filepath.ToSlash(rel), "/") {
			return strings.TrimSuffix(filepath.ToSlash(rel), filepath.Ext(rel))
		}
	}
	return s.Area + "/" + s.Name
}

// FileName is the name a scenario file gives its scenario: its base name without .yaml
// (or .yml). Every scenario of the project is named so (a test checks it), so the name a run
// prints, the file and the golden folder are found from one another.
func FileName(path string) string {
	return strings.TrimSuffix(filepath.Base(path), filepath.Ext(path))
}

func (l Loader) loadResources(s *Scenario, root *yaml.Node, e *Error, addf func(int, string, ...any)) {
	// readFailed reports a resource file the scenario names that could not be read: at the
	// line of the field that names it (fieldPath, e.g. include[1]), except a limit error,
	// which names the file itself.
	readFailed := func(err error, field, fieldPath string) {
		var le *resource.LimitError
		if errors.As(err, &le) {
			e.Msgs = append(e.Msgs, err.Error())
			return
		}
		addf(s.Line(fieldPath), "%s: %v", field, err)
	}
	var data []byte
	file := s.File
	offset := 0
	if s.ResourcesFile != "" {
		file = filepath.Join(filepath.Dir(s.File), s.ResourcesFile)
		b, err := readResourceFile(file, l.Limits)
		if err != nil {
			readFailed(err, "resourcesFile", "resourcesFile")
			return
		}
		data = b
	} else {
		data = []byte(s.Resources)
		// A block scalar's text starts on the line after its key.
		offset = valueLine(root, "resources")
	}
	var included []resource.Object
	for i, inc := range s.Include {
		path := filepath.Join(filepath.Dir(s.File), inc)
		b, err := readResourceFile(path, l.Limits)
		if err != nil {
			readFailed(err, "include", fmt.Sprintf("include[%d]", i))
			continue
		}
		idec, err := resource.Decode(path, b, resource.Options{Limits: l.Limits, StrictTypes: true})
		if err != nil {
			for _, one := range splitJoined(err) {
				e.Msgs = append(e.Msgs, one.Error())
			}
			continue
		}
		included = append(included, idec.Objects...)
	}
	dec, err := resource.Decode(file, data, resource.Options{LineOffset: offset, Limits: l.Limits, StrictTypes: true})
	if err != nil {
		// Decode's errors already start with "file:line:".
		for _, one := range splitJoined(err) {
			e.Msgs = append(e.Msgs, one.Error())
		}
		return
	}
	if len(dec.Objects) == 0 {
		addf(s.Line("resources"), "resources holds no objects")
	}
	seen := map[resource.Ref]string{}
	for _, o := range included {
		seen[o.Ref()] = o.Where()
	}
	for _, o := range dec.Objects {
		if where, dup := seen[o.Ref()]; dup {
			addf(0, "%s: %s: duplicate object (also in %s)", o.Where(), o.Ref(), where)
		}
	}
	s.Objects = append(included, dec.Objects...)
	// An object that does not fit its Go type (an unknown field or kind, a wrong type) is
	// the author's typo, unless the scenario expects the API server to refuse it.
	refusedSomewhere := map[string]bool{}
	for _, x := range append([]Expect{s.Expect}, mapValues(s.ExpectByProfile)...) {
		for _, a := range x.Admission {
			if !a.Allowed {
				refusedSomewhere[a.Object] = true
			}
		}
	}
	for _, o := range s.Objects {
		if o.DecodeErr != nil && !refusedSomewhere[o.Ref().String()] {
			for _, one := range splitJoined(o.DecodeErr) {
				e.Msgs = append(e.Msgs, one.Error())
			}
		}
	}
	var base config.Config
	if s.Config != nil {
		base = *s.Config
	}
	settings, err := config.Combine(base, config.FromEnvoyGateway(dec.EnvoyGateway))
	if err != nil {
		addf(s.Line("config"), "%v", err)
	}
	s.Settings = settings
}

// readResourceFile reads a file a scenario names. Only regular files are read: a scenario
// naming a pipe or a device would otherwise hang the run or read without end.
func readResourceFile(path string, limits resource.Limits) ([]byte, error) {
	info, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if !info.Mode().IsRegular() {
		return nil, fmt.Errorf("%s is not a regular file", path)
	}
	return resource.ReadFile(path, limits)
}

// valueLine is the line of the key of a top-level field (its block text starts below it).
func valueLine(root *yaml.Node, key string) int {
	for i := 0; i+1 < len(root.Content); i += 2 {
		if root.Content[i].Value == key {
			v := root.Content[i+1]
			if v.Style == yaml.LiteralStyle || v.Style == yaml.FoldedStyle {
				return v.Line
			}
			return v.Line - 1
		}
	}
	return 0
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// Set is the outcome of loading many files: good scenarios and per-file errors.
type Set struct {
	Scenarios []*Scenario
	Errors    []*Error
}

// LoadPaths loads every *.yaml scenario under each path (a file or a folder), in path order.
// Files named *.resources.yaml are resource files, not scenarios. A folder named "invalid"
// found while walking a folder is skipped: it holds broken inputs that must fail to load
// (scenarios/invalid); name such a folder itself as a path to load it. A bad file is
// recorded and the others still load; names must be unique across the set.
func (l Loader) LoadPaths(paths ...string) (*Set, error) {
	var files []string
	for _, p := range paths {
		info, err := os.Stat(p)
		if err != nil {
			return nil, err
		}
		if !info.IsDir() {
			files = append(files, p)
			continue
		}
		err = filepath.WalkDir(p, func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if d.IsDir() && d.Name() == InvalidDir && filepath.Clean(path) != filepath.Clean(p) {
				return filepath.SkipDir
			}
			if d.IsDir() || !isScenarioFile(path) {
				return nil
			}
			if absPath(path) == filepath.Join(absPath(l.Root), "behaviors.yaml") {
				return nil
			}
			files = append(files, path)
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	sort.Strings(files)
	set := &Set{}
	names := map[string]string{}
	for _, f := range files {
		s, err := l.LoadFile(f)
		if err != nil {
			var se *Error
			if errors.As(err, &se) {
				set.Errors = append(set.Errors, se)
			} else {
				set.Errors = append(set.Errors, &Error{File: f, Msgs: []string{err.Error()}})
			}
			continue
		}
		if prev, dup := names[s.Name]; dup {
			set.Errors = append(set.Errors,
				&Error{File: f,
					Msgs: []string{fmt.Sprintf("%s:%d: name %q is already used by %s", f, s.Line("name"), s.Name, prev)}})
			continue
		}
		names[s.Name] = f
		set.Scenarios = append(set.Scenarios, s)
	}
	return set, nil
}

// InvalidDir is the name of folders of inputs that must fail to load; walks skip them.
const InvalidDir = "invalid"

func isScenarioFile(path string) bool {
	base := filepath.Base(path)
	if strings.HasSuffix(base, ".resources.yaml") || base == "behaviors.yaml" {
		return false
	}
	return strings.HasSuffix(base, ".yaml") || strings.HasSuffix(base, ".yml")
}

// mapValues lists a map's values in key order.
func mapValues[V any](m map[string]V) []V {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	out := make([]V, 0, len(keys))
	for _, k := range keys {
		out = append(out, m[k])
	}
	return out
}
