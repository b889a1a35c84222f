package xds

import (
	"errors"
	"fmt"
	"strconv"

	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	routev3 "github.com/envoyproxy/go-control-plane/envoy/config/route/v3"
	luav3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/http/lua/v3"
	hcmv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/network/http_connection_manager/v3"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/anypb"
	"google.golang.org/protobuf/types/known/structpb"

	"github.com/egharness/egharness/translator/ir"
)

const luaFilterType = ir.FilterLua

// addExtension configures the route for the EnvoyExtensionPolicy in force on it: its Lua
// scripts and its ext_proc services (extension_services.go). The policy stage has already
// withheld Lua when the feature is off (EEP-02), failed the routes of a policy with Wasm
// (no wasm cache offline) and resolved scripts and services.
func (s *httpFilterSet) addExtension(out *routev3.Route, r *ir.HTTPRoute, ext *ir.Extension) error {
	if len(ext.ExtProc) > 0 {
		if err := s.addExtProcs(out, r, ext.ExtProc); err != nil {
			return err
		}
	}
	if err := s.addDynamicModules(out, r); err != nil {
		return err
	}
	if ext.LuaError != "" {
		return errors.New(ext.LuaError)
	}
	if len(ext.Lua) == 0 {
		return nil
	}
	if !s.features.LuaPolicyFilters {
		codes := make([]string, len(ext.Lua))
		for i, l := range ext.Lua {
			codes[i] = l.Code
		}
		return s.addLuaSlots(out, codes)
	}
	for i, l := range ext.Lua {
		if _, ok := s.lua[l.FilterName]; !ok {
			s.lua[l.FilterName] = luaPolicyFilter(l.FilterName, l.Code)
		}
		cfg, err := luaRouteConfig(l.FilterContext)
		if err != nil {
			return fmt.Errorf("lua %d: filterContext: %w", i, err)
		}
		if err := setPerRoute(out, l.FilterName, cfg); err != nil {
			return err
		}
	}
	return nil
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
func luaRouteConfig(filterContext []byte) (proto.Message, error) {
	if filterContext == nil {
		return &routev3.FilterConfig{Config: &anypb.Any{}}, nil
	}
	st := &structpb.Struct{}
	if err := protojson.Unmarshal(filterContext, st); err != nil {
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
