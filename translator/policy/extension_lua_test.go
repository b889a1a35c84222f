package policy

import (
	"testing"

	egv1a1 "github.com/envoyproxy/gateway/api/v1alpha1"
)

func TestCheckLua(t *testing.T) {
	disabled, syntax := egv1a1.LuaValidationDisabled, egv1a1.LuaValidationInsecureSyntax
	broken := "function envoy_on_response(h)\n  local x = = 1\nend"
	cases := []struct {
		name, code string
		validation *egv1a1.LuaValidation
		want       string
	}{
		{"no entry point", "-- nothing", nil, "expected one of envoy_on_request() or envoy_on_response() to be defined"},
		{"no entry point even when disabled", "-- nothing", &disabled,
			"expected one of envoy_on_request() or envoy_on_response() to be defined"},
		{"valid", "function envoy_on_request(h) h:logInfo('x') end", nil, ""},
		// a runtime failure (a call on nil) is EG's to find: the reference only compiles
		{"fails only when run", "function envoy_on_request(h) h:nothing():more() end", nil, ""},
		{"syntax error", broken, nil,
			"failed to validate with envoy_on_response: <string> line:2(column:13) near '=':   syntax error\n"},
		{"syntax error, syntax validation", broken, &syntax,
			"failed to validate with envoy_on_response: <string> line:2(column:13) near '=':   syntax error\n"},
		{"syntax error, validation disabled", broken, &disabled, ""},
	}
	for _, c := range cases {
		err := checkLua(c.code, c.validation)
		got := ""
		if err != nil {
			got = err.Error()
		}
		if got != c.want {
			t.Errorf("%s: got %q, want %q", c.name, got, c.want)
		}
	}
}
