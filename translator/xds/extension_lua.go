package xds

import (
	"fmt"
	"strconv"

	egv1a1 "github.com/envoyproxy/gateway/api/v1alpha1"
	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	routev3 "github.com/envoyproxy/go-control-plane/envoy/config/route/v3"
	luav3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/http/lua/v3"
	hcmv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/network/http_connection_manager/v3"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/anypb"
	"google.golang.org/protobuf/types/known/structpb"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"

	"github.com/egharness/egharness/translator/ir"
)

const luaFilterType = ir.FilterLua

// addExtension configures the route for the EnvoyExtensionPolicy in force on it: its Lua
// scripts and its ext_proc services (extension_services.go). The policy stage has already
// withheld Lua when the feature is off (EEP-02), failed the routes of a policy with Wasm
// (no wasm cache offline) and resolved scripts and services into PolicyData.
func (s *httpFilterSet) addExtension(out *routev3.Route, r *ir.HTTPRoute, a *ir.Applied[egv1a1.EnvoyExtensionPolicySpec]) error {
	if len(a.Spec.ExtProc) > 0 {
		if err := s.addExtProcs(out, r, a); err != nil {
			return err
		}
	}
	if err := s.addDynamicModules(out, r); err != nil {
		return err
	}
	if len(a.Spec.Lua) == 0 {
		return nil
	}
	codes, err := luaCode(r, a.Spec.Lua)
	if err != nil {
		return err
	}
	if !s.features.LuaPolicyFilters {
		return s.addLuaSlots(out, codes)
	}
	owner := fieldOwner(a, "lua")
	for i, l := range a.Spec.Lua {
		name := fmt.Sprintf("%s/envoyextensionpolicy/%s/%s/lua/%d", luaFilterType, owner.Namespace, owner.Name, i)
		if _, ok := s.lua[name]; !ok {
			s.lua[name] = luaPolicyFilter(name, codes[i])
		}
		cfg, err := luaRouteConfig(l.FilterContext)
		if err != nil {
			return fmt.Errorf("lua %d: filterContext: %w", i, err)
		}
		if err := setPerRoute(out, name, cfg); err != nil {
			return err
		}
	}
	return nil
}

// luaCode is each script's code: inline, or resolved from its ConfigMap by the policy stage.
func luaCode(r *ir.HTTPRoute, ls []egv1a1.Lua) ([]string, error) {
	out := make([]string, len(ls))
	for i, l := range ls {
		switch {
		case l.Inline != nil && (l.Type == "" || l.Type == egv1a1.LuaValueTypeInline):
			out[i] = *l.Inline
		case r.PolicyData != nil && i < len(r.PolicyData.Lua):
			out[i] = r.PolicyData.Lua[i]
		default:
			return nil, fmt.Errorf("lua %d: code not resolved", i)
		}
	}
	return out, nil
}

// luaPolicyFilter is a v1.9 Lua filter: one per policy script, on the listener but
// disabled, so that it runs only on routes that enable it (EEP-03).
func luaPolicyFilter(name, code string) *hcmv3.HttpFilter {
	f := typedFilter(name, &luav3.Lua{DefaultSourceCode: &corev3.DataSource{
		Specifier: &corev3.DataSource_InlineString{InlineString: code},
	}})
	f.Disabled = true
	return f
}

// luaRouteConfig enables a policy's Lua filter on a route: with the script's filterContext
// when it has one (read in Lua with request_handle:filterContext()), else a bare enable.
func luaRouteConfig(ctx *apiextensionsv1.JSON) (proto.Message, error) {
	if ctx == nil || ctx.Raw == nil {
		return &routev3.FilterConfig{Config: &anypb.Any{}}, nil
	}
	st := &structpb.Struct{}
	if err := protojson.Unmarshal(ctx.Raw, st); err != nil {
		return nil, err
	}
	return &luav3.LuaPerRoute{FilterContext: st}, nil
}

// addLuaSlots is v1.8's form: the i-th script of every route runs in the listener's i-th
// slot filter, with the route's code as per-route source.
func (s *httpFilterSet) addLuaSlots(out *routev3.Route, codes []string) error {
	if len(codes) > s.luaSlots {
		s.luaSlots = len(codes)
	}
	for i, code := range codes {
		cfg := &luav3.LuaPerRoute{Override: &luav3.LuaPerRoute_SourceCode{SourceCode: &corev3.DataSource{
			Specifier: &corev3.DataSource_InlineString{InlineString: code},
		}}}
		if err := setPerRoute(out, luaSlotName(i), cfg); err != nil {
			return err
		}
	}
	return nil
}

func luaSlotName(i int) string { return luaFilterType + "/" + strconv.Itoa(i) }

// luaSlotFilter is a v1.8 slot filter: disabled, with empty default code.
func luaSlotFilter(i int) *hcmv3.HttpFilter {
	f := typedFilter(luaSlotName(i), &luav3.Lua{DefaultSourceCode: &corev3.DataSource{
		Specifier: &corev3.DataSource_InlineString{InlineString: ""},
	}})
	f.Disabled = true
	return f
}
