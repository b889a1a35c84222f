// Package scenarios holds the scenario files and the behavior catalog. The catalog is
// embedded so the egharness binary knows every behavior ID wherever it runs.
package scenarios

import _ "embed"

// CatalogYAML is behaviors.yaml: every behavior ID with its area and title.
//
//go:embed behaviors.yaml
var CatalogYAML []byte
