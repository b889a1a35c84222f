package corpus

import (
	"reflect"
	"testing"
)

// TestInputTagsHaveAPIVersions: every kind an inputFile field names in its corpus tag has an
// apiVersion in inputAPIVersions, so no key's items are decoded with an empty apiVersion.
func TestInputTagsHaveAPIVersions(t *testing.T) {
	typ := reflect.TypeOf(inputFile{})
	for i := 0; i < typ.NumField(); i++ {
		kind := typ.Field(i).Tag.Get("corpus")
		if kind == "" || kind == "-" {
			continue
		}
		if inputAPIVersions[kind] == "" {
			t.Errorf("field %s: kind %q has no apiVersion in inputAPIVersions", typ.Field(i).Name, kind)
		}
	}
}
