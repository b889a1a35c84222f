package config

import "errors"

// ErrLuaFlagsEqual is the config error of EEP-02: enableLua and the deprecated disableLua
// say opposite things by name, so the same value in both cannot be read either way.
var ErrLuaFlagsEqual = errors.New("extensionApis: disableLua and enableLua must not have the same value")

// disableLuaDeprecated is the warning for the deprecated field (EEP-02).
const disableLuaDeprecated = "extensionApis.disableLua is deprecated, use enableLua instead"

// LuaEnabled says whether Lua EnvoyExtensionPolicies run (EEP-02): enableLua: true turns Lua
// on; otherwise disableLua decides when it is written; otherwise the version's default
// (v1.9: off, v1.8: on).
func (c Config) LuaEnabled(defaultOn bool) bool {
	api := c.ExtensionAPIs
	if api == nil {
		return defaultOn
	}
	if api.EnableLua {
		return true
	}
	if api.DisableLua != nil {
		return !*api.DisableLua
	}
	return defaultOn
}

// Validate refuses settings EG refuses at startup.
func (c Config) Validate() error {
	if api := c.ExtensionAPIs; api != nil && api.DisableLua != nil && *api.DisableLua == api.EnableLua {
		return ErrLuaFlagsEqual
	}
	if _, err := c.RateLimitTimeout(); err != nil {
		return err
	}
	return nil
}

// Warnings are the deprecation warnings EG logs for the settings.
func (c Config) Warnings() []string {
	if api := c.ExtensionAPIs; api != nil && api.DisableLua != nil {
		return []string{disableLuaDeprecated}
	}
	return nil
}
