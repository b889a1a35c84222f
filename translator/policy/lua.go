package policy

import (
	"fmt"
	"strings"

	egv1a1 "github.com/envoyproxy/gateway/api/v1alpha1"
	lua "github.com/yuin/gopher-lua"
)

// The two entry points of an Envoy Lua filter script.
const (
	luaOnRequest  = "envoy_on_request"
	luaOnResponse = "envoy_on_response"
)

// checkLua is the part of EG v1.9's Lua validation the reference runs (EEP-04). EG first
// requires the script to mention one of the two entry points; then, for each one it
// mentions, request first, it takes the script followed by a call of that function and,
// unless the Gateway's EnvoyProxy says luaValidation: Disabled, compiles it
// (InsecureSyntax) or runs it against mocks of Envoy's stream handle API (Strict, the
// default), both with gopher-lua. The reference compiles it under Strict too: a syntax
// error is refused with EG's message, a script that only fails when it runs is not.
func checkLua(code string, validation *egv1a1.LuaValidation) error {
	onRequest, onResponse := strings.Contains(code, luaOnRequest), strings.Contains(code, luaOnResponse)
	if !onRequest && !onResponse {
		return fmt.Errorf("expected one of %s() or %s() to be defined", luaOnRequest, luaOnResponse)
	}
	if validation != nil && *validation == egv1a1.LuaValidationDisabled {
		return nil
	}
	for _, fn := range []string{luaOnRequest, luaOnResponse} {
		if !strings.Contains(code, fn) {
			continue
		}
		if err := compileLua(code + "\n" + fn + "(StreamHandle)"); err != nil {
			return fmt.Errorf("failed to validate with %s: %w", fn, err)
		}
	}
	return nil
}

// compileLua parses and compiles a chunk without running it.
func compileLua(code string) error {
	L := lua.NewState(lua.Options{SkipOpenLibs: true})
	defer L.Close()
	_, err := L.LoadString(code)
	return err
}
