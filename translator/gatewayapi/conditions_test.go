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
		{"prefix /foo/ equals /foo", routeWithPath("", "prefix", "/foo/"), routeWithPath("", "prefix", "/foo")},
		{"no path match equals prefix /", routeWithPath("", "", ""), routeWithPath("", "prefix", "/")},
		{"header names ignore case", routeWithPath("", "prefix", "/", headers(exact("X-Env", "canary"))),
			routeWithPath("", "prefix", "/", headers(exact("x-env", "canary")))},
		{"headers are a set", routeWithPath("", "prefix", "/", headers(exact("a", "1"), exact("b", "2"))),
			routeWithPath("", "prefix", "/", headers(exact("b", "2"), exact("a", "1")))},
		{"query params are a set", routeWithPath("", "prefix", "/", query(exact("a", "1"), regex("b", "2"))),
			routeWithPath("", "prefix", "/", query(regex("b", "2"), exact("a", "1")))},
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
		{"exact /foo/ is not exact /foo", routeWithPath("", "exact", "/foo/"), routeWithPath("", "exact", "/foo")},
		{"exact is not prefix", routeWithPath("", "exact", "/foo"), routeWithPath("", "prefix", "/foo")},
		{"regex is not prefix", routeWithPath("", "regex", "/foo"), routeWithPath("", "prefix", "/foo")},
		{"prefix / is not prefix /foo", routeWithPath("", "prefix", "/"), routeWithPath("", "prefix", "/foo")},
		{"header values keep case", routeWithPath("", "prefix", "/", headers(exact("x", "A"))),
			routeWithPath("", "prefix", "/", headers(exact("x", "a")))},
		{"exact header is not regex header", routeWithPath("", "prefix", "/", headers(exact("x", "a"))),
			routeWithPath("", "prefix", "/", headers(regex("x", "a")))},
		{"query names keep case", routeWithPath("", "prefix", "/", query(exact("Q", "1"))),
			routeWithPath("", "prefix", "/", query(exact("q", "1")))},
		{"a header is not a query param", routeWithPath("", "prefix", "/", headers(exact("x", "1"))),
			routeWithPath("", "prefix", "/", query(exact("x", "1")))},
		{"a subset of headers differs", routeWithPath("", "prefix", "/", headers(exact("a", "1"))),
			routeWithPath("", "prefix", "/", headers(exact("a", "1"), exact("b", "1")))},
	}
	for _, tt := range different {
		if keyOf(tt.a) == keyOf(tt.b) {
			t.Errorf("%s: keys are equal: %+v", tt.name, keyOf(tt.a))
		}
	}
	a, b := routeWithPath("", "prefix", "/"), routeWithPath("", "prefix", "/")
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
