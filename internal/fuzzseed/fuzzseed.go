// Package fuzzseed gathers seed inputs for the fuzz targets from the scenario files, so
// that every fuzz target starts from what the scenarios already exercise.
package fuzzseed

import (
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"sigs.k8s.io/yaml"
)

// Files returns path → content of every *.yaml file under root (scenarios, resource files,
// the invalid cases), in path order.
func Files(root string) (map[string][]byte, []string, error) {
	out := map[string][]byte{}
	var paths []string
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".yaml") {
			return err
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		out[path] = b
		paths = append(paths, path)
		return nil
	})
	sort.Strings(paths)
	return out, paths, err
}

// ObjectTexts returns the multi-document object texts under root: resource files as they
// are, and each scenario's inline resources block.
func ObjectTexts(root string) ([][]byte, error) {
	files, paths, err := Files(root)
	if err != nil {
		return nil, err
	}
	var out [][]byte
	for _, p := range paths {
		if strings.HasSuffix(p, ".resources.yaml") {
			out = append(out, files[p])
			continue
		}
		var doc struct {
			Resources string `json:"resources"`
		}
		if yaml.Unmarshal(files[p], &doc) == nil && doc.Resources != "" {
			out = append(out, []byte(doc.Resources))
		}
	}
	return out, nil
}
