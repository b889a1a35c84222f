package xds

import (
	"fmt"
	"testing"
)

func TestStatusRanges(t *testing.T) {
	for _, tc := range []struct {
		in   []int64
		want string
	}{
		{nil, "[]"},
		{[]int64{200}, "[200-201]"},
		{[]int64{204, 200, 201, 200, 300}, "[200-202 204-205 300-301]"},
		{[]int64{500, 501, 502}, "[500-503]"},
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
