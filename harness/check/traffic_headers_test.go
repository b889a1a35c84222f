package check

import (
	"reflect"
	"testing"
)

func TestRequestHeaderDiffs(t *testing.T) {
	got := map[string]string{"x-env": "prod", "x-trace": "client,gw", ":path": "/v2/items"}
	if d := requestHeaderDiffs(map[string]string{"X-Env": "prod", ":path": "/v2/items", "x-internal": ""}, got); d != nil {
		t.Errorf("matching expectations: %v", d)
	}
	want := []string{
		`request header x-env "prod", expected "dev"`,
		`request header x-missing absent, expected "1"`,
		`request header x-trace "client,gw", expected absent`,
	}
	if d := requestHeaderDiffs(map[string]string{"x-env": "dev", "x-trace": "", "x-missing": "1"},
		got); !reflect.DeepEqual(d, want) {
		t.Errorf("got %q, want %q", d, want)
	}
	if d := requestHeaderDiffs(map[string]string{"x-env": "prod"}, nil); len(d) != 1 {
		t.Errorf("not forwarded: %v", d)
	}
	if d := requestHeaderDiffs(nil, nil); d != nil {
		t.Errorf("nothing expected: %v", d)
	}
}
