// Package golden renders a translation result into the golden files of one scenario and
// profile, compares them with what is on disk, and rewrites them on request.
//
// Each xDS type is a YAML list of protojson resources; status.yaml holds the admission
// verdicts, statuses, patches and warnings. protojson varies its whitespace on purpose, so
// everything goes through encoding/json and is re-encoded as YAML with sorted keys: the same
// result gives the same bytes on every build.
package golden

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"

	"github.com/egharness/egharness/internal/yamlout"
	"github.com/egharness/egharness/translator/result"
)

// Files are the golden files of one scenario and profile, by file name.
type Files map[string][]byte

// FileNames are the files every golden folder holds: the summary first (what a reviewer
// reads), then the byte-exact xDS and the statuses.
var FileNames = []string{SummaryFile, "listeners.yaml", "routes.yaml", "clusters.yaml", "endpoints.yaml",
	"secrets.yaml", "status.yaml"}

// Render turns a result into its golden files.
func Render(res *result.Result) (Files, error) {
	f := Files{}
	var err error
	add := func(name string, msgs []proto.Message) {
		if err != nil {
			return
		}
		f[name], err = renderProtos(msgs)
	}
	add("listeners.yaml", asMessages(res.XDS.Listeners))
	add("routes.yaml", asMessages(res.XDS.Routes))
	add("clusters.yaml", asMessages(res.XDS.Clusters))
	add("endpoints.yaml", asMessages(res.XDS.Endpoints))
	add("secrets.yaml", asMessages(res.XDS.Secrets))
	if err != nil {
		return nil, err
	}
	if f[SummaryFile], err = Summary(res); err != nil {
		return nil, err
	}
	status := struct {
		Admission []result.Admission    `json:"admission"`
		Statuses  []result.ObjectStatus `json:"statuses"`
		Patches   []result.PatchOutcome `json:"patches"`
		Warnings  []string              `json:"warnings"`
	}{res.Admission, res.Statuses, res.Patches, res.Warnings}
	js, err := json.Marshal(status)
	if err != nil {
		return nil, err
	}
	if f["status.yaml"], err = yamlout.FromJSON(js); err != nil {
		return nil, err
	}
	return f, nil
}

func asMessages[T proto.Message](list []T) []proto.Message {
	out := make([]proto.Message, len(list))
	for i, m := range list {
		out[i] = m
	}
	return out
}

func renderProtos(msgs []proto.Message) ([]byte, error) {
	raw := make([]json.RawMessage, 0, len(msgs))
	for _, m := range msgs {
		b, err := protojson.Marshal(m)
		if err != nil {
			return nil, err
		}
		var buf bytes.Buffer
		if err := json.Compact(&buf, b); err != nil {
			return nil, err
		}
		raw = append(raw, buf.Bytes())
	}
	js, err := json.Marshal(raw)
	if err != nil {
		return nil, err
	}
	return yamlout.FromJSON(js)
}

// Diff is one golden file that differs from the rendering.
type Diff struct {
	File string // path on disk
	Msg  string // "missing", or the first differing line
}

// Compare checks the rendering against dir; nothing on disk at all is a Diff per file.
func Compare(dir string, f Files) []Diff {
	var out []Diff
	for _, name := range FileNames {
		path := filepath.Join(dir, name)
		disk, err := os.ReadFile(path)
		if errors.Is(err, fs.ErrNotExist) {
			out = append(out, Diff{File: path, Msg: "missing (run `egharness golden --update` and read the diff)"})
			continue
		}
		if err != nil {
			out = append(out, Diff{File: path, Msg: err.Error()})
			continue
		}
		if !bytes.Equal(disk, f[name]) {
			out = append(out, Diff{File: path, Msg: firstDifference(disk, f[name])})
		}
	}
	return out
}

// firstDifference shows the first line that differs, with its line number.
func firstDifference(want, got []byte) string {
	w := strings.Split(string(want), "\n")
	g := strings.Split(string(got), "\n")
	for i := 0; i < len(w) || i < len(g); i++ {
		var wl, gl string
		if i < len(w) {
			wl = w[i]
		}
		if i < len(g) {
			gl = g[i]
		}
		if wl != gl {
			return fmt.Sprintf("line %d: golden %q, now %q", i+1, wl, gl)
		}
	}
	return "differs"
}

// Write replaces the golden files in dir; it reports whether anything changed.
func Write(dir string, f Files) (bool, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return false, err
	}
	changed := false
	for _, name := range FileNames {
		path := filepath.Join(dir, name)
		old, err := os.ReadFile(path)
		if err == nil && bytes.Equal(old, f[name]) {
			continue
		}
		changed = true
		if err := WriteFileAtomic(path, f[name]); err != nil {
			return changed, err
		}
	}
	return changed, nil
}

// WriteFileAtomic replaces path with data through a temporary file in the same folder and
// a rename: a reader (or a run interrupted half way) sees the old file or the new one,
// never a part of it.
func WriteFileAtomic(path string, data []byte) (err error) {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			tmp.Close()
			os.Remove(tmp.Name())
		}
	}()
	if _, err = tmp.Write(data); err != nil {
		return err
	}
	if err = tmp.Chmod(0o644); err != nil {
		return err
	}
	if err = tmp.Sync(); err != nil {
		return err
	}
	if err = tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}

// Dir is the golden folder of a scenario and profile: path is the scenario's path under
// scenarios/ without .yaml, slash-separated (scenario.Scenario's Path: routing/demo).
func Dir(root, path, profile string) string {
	return filepath.Join(root, filepath.FromSlash(path), profile)
}

// Stale lists folders and files under root that no scenario and profile in want renders:
// left behind by a renamed or deleted scenario, or a dropped profile.
func Stale(root string, want map[string]bool) ([]string, error) {
	var stale []string
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil
			}
			return err
		}
		if d.IsDir() {
			return nil
		}
		dir := filepath.Dir(path)
		if !want[dir] || !known(filepath.Base(path)) {
			stale = append(stale, path)
		}
		return nil
	})
	sort.Strings(stale)
	return stale, err
}

func known(name string) bool {
	for _, n := range FileNames {
		if n == name {
			return true
		}
	}
	return false
}
