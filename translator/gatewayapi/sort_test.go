package gatewayapi

import (
	"strings"
	"testing"

	"github.com/egharness/egharness/translator/ir"
)

func sp(s string) *string { return &s }

func exact(name, v string) *ir.StringMatch { return &ir.StringMatch{Name: name, Exact: sp(v)} }
func regex(name, v string) *ir.StringMatch { return &ir.StringMatch{Name: name, SafeRegex: sp(v)} }

// rt builds an IR route with a path match; kind is "exact", "regex" or "prefix".
func rt(name, kind, path string, opts ...func(*ir.HTTPRoute)) *ir.HTTPRoute {
	r := &ir.HTTPRoute{Name: name}
	switch kind {
	case "exact":
		r.PathMatch = &ir.StringMatch{Exact: sp(path)}
	case "regex":
		r.PathMatch = &ir.StringMatch{SafeRegex: sp(path)}
	case "prefix":
		r.PathMatch = &ir.StringMatch{Prefix: sp(path)}
	}
	for _, o := range opts {
		o(r)
	}
	return r
}

func headers(ms ...*ir.StringMatch) func(*ir.HTTPRoute) {
	return func(r *ir.HTTPRoute) { r.Headers = ms }
}

func query(ms ...*ir.StringMatch) func(*ir.HTTPRoute) {
	return func(r *ir.HTTPRoute) { r.QueryParams = ms }
}

func names(routes []*ir.HTTPRoute) string {
	out := make([]string, len(routes))
	for i, r := range routes {
		out[i] = r.Name
	}
	return strings.Join(out, " ")
}

func TestSortRoutes(t *testing.T) {
	tests := []struct {
		name   string
		routes []*ir.HTTPRoute // in insertion order
		want   string
	}{
		{
			name: "Exact before RegularExpression before PathPrefix",
			routes: []*ir.HTTPRoute{
				rt("prefix", "prefix", "/a/very/long/prefix/path"),
				rt("regex", "regex", "/r.*"),
				rt("exact", "exact", "/e"),
			},
			want: "exact regex prefix",
		},
		{
			name: "longer path first within a type",
			routes: []*ir.HTTPRoute{
				rt("p1", "prefix", "/a"),
				rt("p3", "prefix", "/abc"),
				rt("p2", "prefix", "/ab"),
				rt("e1", "exact", "/x"),
				rt("e2", "exact", "/xy"),
			},
			want: "e2 e1 p3 p2 p1",
		},
		{
			name: "prefix / counts as empty, after a one-character prefix",
			routes: []*ir.HTTPRoute{
				rt("root", "prefix", "/"),
				rt("a", "prefix", "/a"),
			},
			want: "a root",
		},
		{
			name: "no path match ranks last",
			routes: []*ir.HTTPRoute{
				rt("none", "", ""),
				rt("root", "prefix", "/"),
			},
			want: "root none",
		},
		{
			name: "more headers first",
			routes: []*ir.HTTPRoute{
				rt("h0", "prefix", "/a"),
				rt("h1", "prefix", "/a", headers(regex("x", "1"))),
				rt("h2", "prefix", "/a", headers(regex("x", "1"), regex("y", "2"))),
			},
			want: "h2 h1 h0",
		},
		{
			name: "a method match counts as a header",
			routes: []*ir.HTTPRoute{
				rt("plain", "prefix", "/a"),
				rt("get", "prefix", "/a", headers(exact(":method", "GET"))),
			},
			want: "get plain",
		},
		{
			name: "equal header count: more exact headers first",
			routes: []*ir.HTTPRoute{
				rt("regex", "prefix", "/a", headers(regex("x", "1"), regex("y", "1"))),
				rt("mixed", "prefix", "/a", headers(exact("x", "1"), regex("y", "1"))),
				rt("exact", "prefix", "/a", headers(exact("x", "1"), exact("y", "1"))),
			},
			want: "exact mixed regex",
		},
		{
			name: "headers outrank query params",
			routes: []*ir.HTTPRoute{
				rt("q2", "prefix", "/a", query(exact("a", "1"), exact("b", "2"))),
				rt("h1", "prefix", "/a", headers(regex("x", "1"))),
			},
			want: "h1 q2",
		},
		{
			name: "more query params first, then more exact ones",
			routes: []*ir.HTTPRoute{
				rt("q0", "prefix", "/a"),
				rt("q1r", "prefix", "/a", query(regex("a", "1"))),
				rt("q2", "prefix", "/a", query(regex("a", "1"), regex("b", "2"))),
				rt("q1e", "prefix", "/a", query(exact("a", "1"))),
			},
			want: "q2 q1e q1r q0",
		},
		{
			name: "path length outranks header count",
			routes: []*ir.HTTPRoute{
				rt("short-with-headers", "prefix", "/a", headers(exact("x", "1"), exact("y", "1"))),
				rt("long", "prefix", "/abc"),
			},
			want: "long short-with-headers",
		},
		{
			name: "ties keep insertion order",
			routes: []*ir.HTTPRoute{
				rt("t3", "prefix", "/same", headers(exact("x", "1"))),
				rt("t1", "prefix", "/same", headers(exact("y", "2"))),
				rt("t2", "prefix", "/same", headers(exact("z", "3"))),
				rt("e", "exact", "/same"),
			},
			want: "e t3 t1 t2",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			routes := append([]*ir.HTTPRoute(nil), tt.routes...)
			sortRoutes(routes)
			if got := names(routes); got != tt.want {
				t.Errorf("order %q, want %q", got, tt.want)
			}
		})
	}
}

func TestRankKey(t *testing.T) {
	tests := []struct {
		r    *ir.HTTPRoute
		want [8]int
	}{
		{rt("", "exact", "/abc"), [8]int{3, 4, 0, 0, 0, 0, 0, 0}},
		{rt("", "regex", "/a.*"), [8]int{2, 4, 0, 0, 0, 0, 0, 0}},
		{rt("", "prefix", "/ab"), [8]int{1, 3, 0, 0, 0, 0, 0, 0}},
		{rt("", "prefix", "/"), [8]int{1, 0, 0, 0, 0, 0, 0, 0}},
		{rt("", "exact", "/"), [8]int{3, 1, 0, 0, 0, 0, 0, 0}},
		{rt("", "", ""), [8]int{0, 0, 0, 0, 0, 0, 0, 0}},
		{rt("", "prefix", "/", headers(exact("a", "1"), regex("b", "2")), query(exact("q", "1"))),
			[8]int{1, 0, 2, 1, 0, 0, 1, 1}},
	}
	for _, tt := range tests {
		if got := rankKey(tt.r); got != tt.want {
			t.Errorf("rankKey(%+v) = %v, want %v", tt.r.PathMatch, got, tt.want)
		}
	}
}
