package xdsserver

import (
	"fmt"
	"path/filepath"
	"sort"

	"github.com/egharness/egharness/harness/scenario"
	"github.com/egharness/egharness/translator"
	"github.com/egharness/egharness/translator/admission"
	"github.com/egharness/egharness/translator/config"
	"github.com/egharness/egharness/translator/profile"
	"github.com/egharness/egharness/translator/resource"
	"github.com/egharness/egharness/translator/result"
)

// Loaded is one translation ready to serve.
type Loaded struct {
	// Source says where it came from: "file PATH" or "scenario NAME (PATH)".
	Source  string
	Profile string
	Result  *result.Result
	// Files are the files it was read from; a change to any of them calls for a reload.
	Files []string
}

// Source produces what to serve; Load runs again on every reload.
type Source interface {
	Load() (*Loaded, error)
}

// FileSource translates a file of Kubernetes objects, as `egharness translate -f` does.
type FileSource struct {
	Path    string
	Profile profile.Profile
	// Namespace is given to objects that name none (translate's -n).
	Namespace string
	Limits    resource.Limits
	// Memo, when set, keeps the API server's verdicts from one load to the next, so a
	// reload after an edit admits again only the objects the edit changed.
	Memo *admission.Memo
	// Decoded, when set, keeps the documents' JSON forms from one load to the next, so a
	// reload converts from YAML only the documents the edit changed.
	Decoded *resource.JSONCache
}

// Load reads, decodes and translates the file.
func (f FileSource) Load() (*Loaded, error) {
	data, err := resource.ReadFile(f.Path, f.Limits)
	if err != nil {
		return nil, err
	}
	dec, err := resource.Decode(f.Path, data, resource.Options{
		DefaultNamespace: f.Namespace, SkipUnknownKinds: true, Limits: f.Limits, JSONCache: f.Decoded})
	if err != nil {
		return nil, err
	}
	if len(dec.Objects) == 0 && dec.EnvoyGateway == nil {
		return nil, fmt.Errorf("%s: no Kubernetes objects to translate", f.Path)
	}
	res, err := translator.Translate(
		translator.Input{Objects: dec.Objects, Config: config.FromEnvoyGateway(dec.EnvoyGateway), Profile: f.Profile,
			AdmissionMemo: f.Memo})
	if err != nil {
		return nil, fmt.Errorf("%s: %w", f.Path, err)
	}
	res.Warnings = append(res.Warnings, dec.Notes...)
	return &Loaded{Source: "file " + f.Path, Profile: f.Profile.Name, Result: res, Files: []string{f.Path}}, nil
}

// ScenarioSource translates one scenario found by name under a scenarios folder. The
// folder is read again on each load, so an edit that renames or breaks the scenario is
// reported rather than ignored.
type ScenarioSource struct {
	Loader scenario.Loader
	// Dir is the scenarios folder (scenarios/).
	Dir  string
	Name string
	// Profile, when empty, is the scenario's first profile.
	Profile string
}

// Load finds the scenario and translates it under the profile.
func (s ScenarioSource) Load() (*Loaded, error) {
	set, err := s.Loader.LoadPaths(s.Dir)
	if err != nil {
		return nil, err
	}
	sc := Find(set.Scenarios, s.Name)
	if sc == nil {
		// The scenario may be in a file that no longer loads (an edit under --watch): say
		// what did not load.
		if len(set.Errors) > 0 {
			return nil, fmt.Errorf("no scenario named %q under %s; %d file(s) could not be loaded, the first: %w", s.Name, s.Dir,
				len(set.Errors), set.Errors[0])
		}
		return nil, fmt.Errorf("no scenario named %q under %s (GET /scenarios or egharness coverage lists them)", s.Name,
			s.Dir)
	}
	return Translate(sc, s.Profile)
}

// Find returns the scenario named name, or nil.
func Find(set []*scenario.Scenario, name string) *scenario.Scenario {
	for _, sc := range set {
		if sc.Name == name {
			return sc
		}
	}
	return nil
}

// Translate runs one scenario through the reference translator under prof (the scenario's
// first profile when empty).
func Translate(sc *scenario.Scenario, prof string) (*Loaded, error) {
	if prof == "" {
		prof = sc.ProfilesOrDefault()[0]
	}
	p, err := profile.Get(prof)
	if err != nil {
		return nil, err
	}
	res, err := translator.Translate(translator.Input{Objects: sc.Objects, Config: sc.Settings, Profile: p})
	if err != nil {
		return nil, fmt.Errorf("%s: %w", sc.File, err)
	}
	return &Loaded{Source: fmt.Sprintf("scenario %s (%s)", sc.Name, sc.File), Profile: p.Name, Result: res,
		Files: ScenarioFiles(sc)}, nil
}

// ScenarioFiles are the scenario file and the resource files it reads.
func ScenarioFiles(sc *scenario.Scenario) []string {
	files := []string{sc.File}
	dir := filepath.Dir(sc.File)
	if sc.ResourcesFile != "" {
		files = append(files, filepath.Join(dir, sc.ResourcesFile))
	}
	for _, inc := range sc.Include {
		files = append(files, filepath.Join(dir, inc))
	}
	sort.Strings(files[1:])
	return files
}
