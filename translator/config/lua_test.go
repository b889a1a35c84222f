package config

import (
	"testing"

	egv1a1 "github.com/envoyproxy/gateway/api/v1alpha1"
)

func TestLuaGate(t *testing.T) {
	yes, no := true, false
	cases := []struct {
		name       string
		api        *egv1a1.ExtensionAPISettings
		defaultOn  bool
		on         bool
		invalid    bool
		deprecated bool
	}{
		{"v1.9 default: off", nil, false, false, false, false},
		{"v1.8 default: on", nil, true, true, false, false},
		{"enableLua", &egv1a1.ExtensionAPISettings{EnableLua: true}, false, true, false, false},
		{"disableLua false with enableLua true", &egv1a1.ExtensionAPISettings{EnableLua: true, DisableLua: &no}, false, true,
			false, true},
		{"disableLua true turns v1.8 off", &egv1a1.ExtensionAPISettings{DisableLua: &yes}, true, false, false, true},
		{"both true: contradiction", &egv1a1.ExtensionAPISettings{EnableLua: true, DisableLua: &yes}, false, true, true,
			true},
		{"disableLua false alone equals enableLua's false: contradiction", &egv1a1.ExtensionAPISettings{DisableLua: &no},
			false, true, true, true},
		{"other fields only", &egv1a1.ExtensionAPISettings{EnableBackend: true}, false, false, false, false},
	}
	for _, c := range cases {
		cfg := Config{ExtensionAPIs: c.api}
		if got := cfg.LuaEnabled(c.defaultOn); got != c.on {
			t.Errorf("%s: on %v", c.name, got)
		}
		if (cfg.Validate() != nil) != c.invalid {
			t.Errorf("%s: validate %v", c.name, cfg.Validate())
		}
		if (len(cfg.Warnings()) > 0) != c.deprecated {
			t.Errorf("%s: warnings %v", c.name, cfg.Warnings())
		}
	}
}
