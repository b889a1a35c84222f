package xds

import (
	"slices"
	"testing"

	hcmv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/network/http_connection_manager/v3"

	"github.com/egharness/egharness/translator/ir"
)

func TestApplyFilterOrder(t *testing.T) {
	names := func(fs []*hcmv3.HttpFilter) []string {
		var out []string
		for _, f := range fs {
			out = append(out, f.Name)
		}
		return out
	}
	filters := func(ns ...string) []*hcmv3.HttpFilter {
		var out []*hcmv3.HttpFilter
		for _, n := range ns {
			out = append(out, &hcmv3.HttpFilter{Name: n})
		}
		return out
	}
	const (
		cors   = "envoy.filters.http.cors"
		basic  = "envoy.filters.http.basic_auth/securitypolicy/ns/a"
		jwt    = "envoy.filters.http.jwt_authn"
		wasm0  = "envoy.filters.http.wasm/envoyextensionpolicy/ns/w/wasm/0"
		wasm1  = "envoy.filters.http.wasm/envoyextensionpolicy/ns/w/wasm/1"
		router = "envoy.filters.http.router"
	)
	for _, tc := range []struct {
		name  string
		in    []string
		order []ir.FilterPosition
		want  []string
	}{
		{"no order", []string{cors, basic, router}, nil, []string{cors, basic, router}},
		{"after the last of a kind", []string{cors, basic, jwt, router},
			[]ir.FilterPosition{{Name: "envoy.filters.http.cors", After: "envoy.filters.http.basic_auth"}},
			[]string{basic, cors, jwt, router}},
		{"every filter of a kind moves, in order, before the first anchor", []string{cors, jwt, wasm0, wasm1, router},
			[]ir.FilterPosition{{Name: "envoy.filters.http.wasm", Before: "envoy.filters.http.jwt_authn"}},
			[]string{cors, wasm0, wasm1, jwt, router}},
		{"entries apply one after the other", []string{cors, basic, jwt, wasm0, router},
			[]ir.FilterPosition{
				{Name: "envoy.filters.http.wasm", Before: "envoy.filters.http.jwt_authn"},
				{Name: "envoy.filters.http.cors", After: "envoy.filters.http.basic_auth"},
			},
			[]string{basic, cors, wasm0, jwt, router}},
		{"a missing kind or anchor changes nothing", []string{cors, basic, router},
			[]ir.FilterPosition{
				{Name: "envoy.filters.http.lua", Before: "envoy.filters.http.cors"},
				{Name: "envoy.filters.http.cors", After: "envoy.filters.http.oauth2"},
			},
			[]string{cors, basic, router}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := names(applyFilterOrder(filters(tc.in...), tc.order)); !slices.Equal(got, tc.want) {
				t.Errorf("got %v, want %v", got, tc.want)
			}
		})
	}
}
