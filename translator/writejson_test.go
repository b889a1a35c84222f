package translator_test

import (
	"bytes"
	"encoding/json"
	"reflect"
	"testing"

	"github.com/egharness/egharness/translator"
	"github.com/egharness/egharness/translator/profile"
)

// Result.WriteJSON prints `translate -o json`: for every scenario it must be the same JSON
// value json.Marshal gives (the JSON contract external implementations also print).
func TestWriteJSONSameAsMarshal(t *testing.T) {
	p, err := profile.Get(profile.Default)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, s := range allScenarios(t) {
		res, err := translator.Translate(translator.Input{Objects: s.Objects, Config: s.Settings, Profile: p})
		if err != nil {
			t.Fatalf("%s: %v", s.Name, err)
		}
		want, err := json.Marshal(res)
		if err != nil {
			t.Fatal(err)
		}
		var buf bytes.Buffer
		if err := res.WriteJSON(&buf); err != nil {
			t.Fatal(err)
		}
		var a, b any
		if err := json.Unmarshal(want, &a); err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(buf.Bytes(), &b); err != nil {
			t.Fatalf("%s: WriteJSON printed invalid JSON: %v", s.Name, err)
		}
		if !reflect.DeepEqual(a, b) {
			t.Errorf("%s: WriteJSON and json.Marshal give different JSON", s.Name)
		}
		n++
	}
	if n < 50 {
		t.Fatalf("only %d scenarios", n)
	}
}
