package ir

// Extension is what the EnvoyExtensionPolicy in force on a route sets on it, resolved by
// the policy stage (set whenever such a policy applies). Its dynamic modules are in
// PolicyData.DynamicModules.
type Extension struct {
	// Lua are its scripts, in spec order; LuaError, when set, is why one's code could not
	// be had (the route then cannot be built).
	Lua      []LuaScript `json:"lua,omitempty"`
	LuaError string      `json:"luaError,omitempty"`
	// ExtProc are its ext_proc services, in spec order (extension_services.go);
	// ExtProcError, when set, is why they could not be had.
	ExtProc      []ExtProc `json:"extProc,omitempty"`
	ExtProcError string    `json:"extProcError,omitempty"`
}

// LuaScript is one Lua script: its code (inline or its ConfigMap's), the name of its v1.9
// listener filter (after the policy that declared lua and the script's index), and the
// raw JSON of its filterContext (nil without one).
type LuaScript struct {
	FilterName    string `json:"filterName"`
	Code          string `json:"code"`
	FilterContext []byte `json:"filterContext,omitempty"`
}
