package gatewayapi

import (
	"testing"

	"github.com/egharness/egharness/translator/ir"
	"github.com/egharness/egharness/translator/result"
)

func TestKeyOf(t *testing.T) {
	same := []struct {
		name string
		a, b *ir.HTTPRoute
	}{
		{"prefix /foo/ equals /foo", rt("", "prefix", "/foo/"), rt("", "prefix", "/foo")},
		{"no path match equals prefix /", rt("", "", ""), rt("", "prefix", "/")},
		{"header names ignore case", rt("", "prefix", "/", headers(exact("X-Env", "canary"))),
			rt("", "prefix", "/", headers(exact("x-env", "canary")))},
		{"headers are a set", rt("", "prefix", "/", headers(exact("a", "1"), exact("b", "2"))),
			rt("", "prefix", "/", headers(exact("b", "2"), exact("a", "1")))},
		{"query params are a set", rt("", "prefix", "/", query(exact("a", "1"), regex("b", "2"))),
			rt("", "prefix", "/", query(regex("b", "2"), exact("a", "1")))},
	}
	for _, tt := range same {
		if keyOf(tt.a) != keyOf(tt.b) {
			t.Errorf("%s: keys differ: %+v vs %+v", tt.name, keyOf(tt.a), keyOf(tt.b))
		}
	}
	different := []struct {
		name string
		a, b *ir.HTTPRoute
	}{
		{"exact /foo/ is not exact /foo", rt("", "exact", "/foo/"), rt("", "exact", "/foo")},
		{"exact is not prefix", rt("", "exact", "/foo"), rt("", "prefix", "/foo")},
		{"regex is not prefix", rt("", "regex", "/foo"), rt("", "prefix", "/foo")},
		{"prefix / is not prefix /foo", rt("", "prefix", "/"), rt("", "prefix", "/foo")},
		{"header values keep case", rt("", "prefix", "/", headers(exact("x", "A"))),
			rt("", "prefix", "/", headers(exact("x", "a")))},
		{"exact header is not regex header", rt("", "prefix", "/", headers(exact("x", "a"))),
			rt("", "prefix", "/", headers(regex("x", "a")))},
		{"query names keep case", rt("", "prefix", "/", query(exact("Q", "1"))),
			rt("", "prefix", "/", query(exact("q", "1")))},
		{"a header is not a query param", rt("", "prefix", "/", headers(exact("x", "1"))),
			rt("", "prefix", "/", query(exact("x", "1")))},
		{"a subset of headers differs", rt("", "prefix", "/", headers(exact("a", "1"))),
			rt("", "prefix", "/", headers(exact("a", "1"), exact("b", "1")))},
	}
	for _, tt := range different {
		if keyOf(tt.a) == keyOf(tt.b) {
			t.Errorf("%s: keys are equal: %+v", tt.name, keyOf(tt.a))
		}
	}
	a, b := rt("", "prefix", "/"), rt("", "prefix", "/")
	a.Hostname, b.Hostname = "a.example.com", "b.example.com"
	if keyOf(a) == keyOf(b) {
		t.Error("routes on different hostnames share a key")
	}
}

func TestRefErrorsEmpty(t *testing.T) {
	var e refErrors
	if !e.empty() {
		t.Error("a new refErrors is not empty")
	}
	e.add("BackendNotFound", "failed to process route rule 0 backendRef 0: service default/x not found")
	if e.empty() {
		t.Error("refErrors with one error is empty")
	}
}

// The ResolvedRefs condition of the errors added: their reasons sorted and each named once,
// their messages in the order added, capitalized and ended by a period, one a line.
func TestRefErrorsCondition(t *testing.T) {
	tests := []struct {
		name string
		errs []refError // added in this order
		want result.Condition
	}{
		{
			name: "one",
			errs: []refError{
				{"BackendNotFound", "failed to process route rule 0 backendRef 0: service default/x not found"},
			},
			want: result.Condition{Type: "ResolvedRefs", Status: "False", Reason: "BackendNotFound",
				Message: "Failed to process route rule 0 backendRef 0: service default/x not found."},
		},
		{
			name: "several",
			errs: []refError{
				{"PortNotFound", "failed b"},
				{"BackendNotFound", "failed a"},
				{"PortNotFound", "failed c."},
				{"InvalidKind", "failed d"},
			},
			want: result.Condition{Type: "ResolvedRefs", Status: "False",
				Reason:  "BackendNotFound,InvalidKind,PortNotFound",
				Message: "Failed b.\nFailed a.\nFailed c.\nFailed d."},
		},
		{
			name: "the same reason twice",
			errs: []refError{
				{"BackendNotFound", "service a not found"},
				{"BackendNotFound", "service b not found"},
			},
			want: result.Condition{Type: "ResolvedRefs", Status: "False", Reason: "BackendNotFound",
				Message: "Service a not found.\nService b not found."},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var e refErrors
			for _, err := range tt.errs {
				e.add(err.reason, err.msg)
			}
			if got := e.condition("ResolvedRefs"); got != tt.want {
				t.Errorf("condition = %+v,\nwant        %+v", got, tt.want)
			}
		})
	}
}
