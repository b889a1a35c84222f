package xds

import (
	"fmt"
	"testing"

	egv1a1 "github.com/envoyproxy/gateway/api/v1alpha1"
)

func TestStatusRanges(t *testing.T) {
	for _, tc := range []struct {
		in   []egv1a1.HTTPStatus
		want string
	}{
		{nil, "[]"},
		{[]egv1a1.HTTPStatus{200}, "[200-201]"},
		{[]egv1a1.HTTPStatus{204, 200, 201, 200, 300}, "[200-202 204-205 300-301]"},
		{[]egv1a1.HTTPStatus{500, 501, 502}, "[500-503]"},
	} {
		var got []string
		for _, r := range statusRanges(tc.in) {
			got = append(got, fmt.Sprintf("%d-%d", r.Start, r.End))
		}
		if s := fmt.Sprint(got); s != tc.want {
			t.Errorf("statusRanges(%v) = %s, want %s", tc.in, s, tc.want)
		}
	}
}
