package gatewayapi

import (
	"strings"
	"testing"

	"github.com/egharness/egharness/translator/ir"
)

func sp(s string) *string { return &s }

func exact(name, v string) *ir.StringMatch { return &ir.StringMatch{Name: name, Exact: sp(v)} }
func regex(name, v string) *ir.StringMatch { return &ir.StringMatch{Name: name, SafeRegex: sp(v)} }

// routeWithPath builds an IR route with a path match; kind is "exact", "regex" or "prefix".
func routeWithPath(name, kind, path string, opts ...func(*ir.HTTPRoute)) *ir.HTTPRoute {
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
				routeWithPath("prefix", "prefix", "/a/very/long/prefix/path"),
				routeWithPath("regex", "regex", "/r.*"),
				routeWithPath("exact", "exact", "/e"),
			},
			want: "exact regex prefix",
		},
		{
			name: "longer path first within a type",
			routes: []*ir.HTTPRoute{
				routeWithPath("p1", "prefix", "/a"),
				routeWithPath("p3", "prefix", "/abc"),
				routeWithPath("p2", "prefix", "/ab"),
				routeWithPath("e1", "exact", "/x"),
				routeWithPath("e2", "exact", "/xy"),
			},
			want: "e2 e1 p3 p2 p1",
		},
		{
			name: "prefix / counts as empty, after a one-character prefix",
			routes: []*ir.HTTPRoute{
				routeWithPath("root", "prefix", "/"),
				routeWithPath("a", "prefix", "/a"),
			},
			want: "a root",
		},
		{
			name: "no path match ranks last",
			routes: []*ir.HTTPRoute{
				routeWithPath("none", "", ""),
				routeWithPath("root", "prefix", "/"),
			},
			want: "root none",
		},
		{
			name: "more headers first",
			routes: []*ir.HTTPRoute{
				routeWithPath("h0", "prefix", "/a"),
				routeWithPath("h1", "prefix", "/a", headers(regex("x", "1"))),
				routeWithPath("h2", "prefix", "/a", headers(regex("x", "1"), regex("y", "2"))),
			},
			want: "h2 h1 h0",
		},
		{
			name: "a method match counts as a header",
			routes: []*ir.HTTPRoute{
				routeWithPath("plain", "prefix", "/a"),
				routeWithPath("get", "prefix", "/a", headers(exact(":method", "GET"))),
			},
			want: "get plain",
		},
		{
			name: "equal header count: more exact headers first",
			routes: []*ir.HTTPRoute{
				routeWithPath("regex", "prefix", "/a", headers(regex("x", "1"), regex("y", "1"))),
				routeWithPath("mixed", "prefix", "/a", headers(exact("x", "1"), regex("y", "1"))),
				routeWithPath("exact", "prefix", "/a", headers(exact("x", "1"), exact("y", "1"))),
			},
			want: "exact mixed regex",
		},
		{
			name: "headers outrank query params",
			routes: []*ir.HTTPRoute{
				routeWithPath("q2", "prefix", "/a", query(exact("a", "1"), exact("b", "2"))),
				routeWithPath("h1", "prefix", "/a", headers(regex("x", "1"))),
			},
			want: "h1 q2",
		},
		{
			name: "more query params first, then more exact ones",
			routes: []*ir.HTTPRoute{
				routeWithPath("q0", "prefix", "/a"),
				routeWithPath("q1r", "prefix", "/a", query(regex("a", "1"))),
				routeWithPath("q2", "prefix", "/a", query(regex("a", "1"), regex("b", "2"))),
				routeWithPath("q1e", "prefix", "/a", query(exact("a", "1"))),
			},
			want: "q2 q1e q1r q0",
		},
		{
			name: "path length outranks header count",
			routes: []*ir.HTTPRoute{
				routeWithPath("short-with-headers", "prefix", "/a", headers(exact("x", "1"), exact("y", "1"))),
				routeWithPath("long", "prefix", "/abc"),
			},
			want: "long short-with-headers",
		},
		{
			name: "ties keep insertion order",
			routes: []*ir.HTTPRoute{
				routeWithPath("t3", "prefix", "/same", headers(exact("x", "1"))),
				routeWithPath("t1", "prefix", "/same", headers(exact("y", "2"))),
				routeWithPath("t2", "prefix", "/same", headers(exact("z", "3"))),
				routeWithPath("e", "exact", "/same"),
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
		{routeWithPath("", "exact", "/abc"), [8]int{3, 4, 0, 0, 0, 0, 0, 0}},
		{routeWithPath("", "regex", "/a.*"), [8]int{2, 4, 0, 0, 0, 0, 0, 0}},
		{routeWithPath("", "prefix", "/ab"), [8]int{1, 3, 0, 0, 0, 0, 0, 0}},
		{routeWithPath("", "prefix", "/"), [8]int{1, 0, 0, 0, 0, 0, 0, 0}},
		{routeWithPath("", "exact", "/"), [8]int{3, 1, 0, 0, 0, 0, 0, 0}},
		{routeWithPath("", "", ""), [8]int{0, 0, 0, 0, 0, 0, 0, 0}},
		{routeWithPath("", "prefix", "/", headers(exact("a", "1"), regex("b", "2")), query(exact("q", "1"))),
			[8]int{1, 0, 2, 1, 0, 0, 1, 1}},
	}
	for _, tt := range tests {
		if got := rankKey(tt.r); got != tt.want {
			t.Errorf("rankKey(%+v) = %v, want %v", tt.r.PathMatch, got, tt.want)
		}
	}
}
