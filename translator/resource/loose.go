package resource

import "sigs.k8s.io/yaml"

// yamlDecodeLoose reads only the fields of into, ignoring the rest (used to identify a
// document before its strict decode).
func yamlDecodeLoose(text []byte, into any) error { return yaml.Unmarshal(text, into) }
