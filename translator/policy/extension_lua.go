package policy

import (
	"fmt"
	"strings"

	egv1a1 "github.com/envoyproxy/gateway/api/v1alpha1"
	lua "github.com/yuin/gopher-lua"

	"github.com/egharness/egharness/translator/ir"
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

// resolveExtensionSettings puts on every HTTP route the Lua scripts and extProc services of
// the EnvoyExtensionPolicy left in force once its features resolved.
func resolveExtensionSettings(x *ir.XDS) {
	for _, l := range x.HTTP {
		for _, r := range l.Routes {
			r.Policies.ExtensionSettings = ResolveExtension(r.Policies.Extension, r.PolicyData)
		}
	}
}

// ResolveExtension is what a (nil for none) sets on a route, with the code and services
// its features read (data, nil when they read nothing). Exported for the xDS stage's
// tests, which build routes by hand.
func ResolveExtension(a *ir.Applied[egv1a1.EnvoyExtensionPolicySpec], data *ir.PolicyData) *ir.Extension {
	if a == nil || a.Spec == nil {
		return nil
	}
	out := &ir.Extension{}
	if len(a.Spec.Lua) > 0 {
		out.Lua, out.LuaError = luaScripts(a, data)
	}
	for i := range a.Spec.ExtProc {
		out.ExtProc = append(out.ExtProc, resolveExtProcSettings(a, i))
	}
	return out
}

// luaScripts are the policy's scripts, each with its v1.9 filter name (after the policy
// that declared lua, MRG-05) and its code: inline, or its ConfigMap's as the features read
// it. A script whose code was not read is why the route cannot be built.
func luaScripts(a *ir.Applied[egv1a1.EnvoyExtensionPolicySpec], data *ir.PolicyData) ([]ir.LuaScript, string) {
	owner := a.OwnerOf("lua")
	out := make([]ir.LuaScript, len(a.Spec.Lua))
	for i, l := range a.Spec.Lua {
		switch {
		case l.Inline != nil && (l.Type == "" || l.Type == egv1a1.LuaValueTypeInline):
			out[i].Code = *l.Inline
		case data != nil && i < len(data.Lua):
			out[i].Code = data.Lua[i]
		default:
			return nil, fmt.Sprintf("lua %d: code not resolved", i)
		}
		out[i].FilterName = fmt.Sprintf("%s/envoyextensionpolicy/%s/%s/lua/%d", ir.FilterLua, owner.Namespace, owner.Name, i)
		if l.FilterContext != nil {
			out[i].FilterContext = l.FilterContext.Raw
		}
	}
	return out, ""
}
